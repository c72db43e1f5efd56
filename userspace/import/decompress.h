// Inflates Perfetto's compressed_packets (deflate, zlib framing) and
// zstd_compressed_packets payloads.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"

namespace gpunoise::import {

Status InflateZlib(std::span<const uint8_t> in, std::vector<uint8_t>* out);
Status InflateZstd(std::span<const uint8_t> in, std::vector<uint8_t>* out);

}  // namespace gpunoise::import
