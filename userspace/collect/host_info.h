#pragma once

#include "model/host_info.h"

namespace gpunoise::collect {

model::HostInfo ReadHostInfo();

}  // namespace gpunoise::collect
