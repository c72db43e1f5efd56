// Reads every process and thread from /proc, so that tasks which never
// change name or start during a recording still have their names.
#pragma once

#include <string>

#include "model/process_snapshot.h"

namespace gpunoise::collect {

model::ProcessSnapshot ScanProcesses(const std::string& proc_root = "/proc");

}  // namespace gpunoise::collect
