// Inflates Perfetto's compressed_packets (deflate, zlib framing) and
// zstd_compressed_packets payloads. Shared by the trace reader (import/) and
// the merger (export/perfetto/), which must both see inside compressed blocks.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/result.h"

namespace gpunoise::compression {

// `out` holds exactly the inflated bytes on success. A stream that is cut
// short, corrupt, or inflates to more than 256 MiB is an error.
Status InflateZlib(std::span<const uint8_t> in, std::vector<uint8_t>* out);
Status InflateZstd(std::span<const uint8_t> in, std::vector<uint8_t>* out);

}  // namespace gpunoise::compression
