// Whether a trace file's packets are stored as they are or in zlib-compressed
// blocks (TracePacket.compressed_packets, which Perfetto's trace processor
// and ui.perfetto.dev inflate in place).
#pragma once

#include <string_view>

#include "common/result.h"

namespace gpunoise::perfetto {

enum class TraceCompression { kNone, kZlib };

// "none" or "zlib", as `--compress` takes them.
Result<TraceCompression> ParseTraceCompression(std::string_view name);
std::string_view TraceCompressionName(TraceCompression compression);

}  // namespace gpunoise::perfetto
