#include "export/perfetto/trace_compression.h"

namespace gpunoise::perfetto {

Result<TraceCompression> ParseTraceCompression(std::string_view name) {
  if (name == "none") return TraceCompression::kNone;
  if (name == "zlib") return TraceCompression::kZlib;
  return MakeError("unknown compression '{}' (known: none, zlib)", name);
}

std::string_view TraceCompressionName(TraceCompression compression) {
  switch (compression) {
    case TraceCompression::kNone: return "none";
    case TraceCompression::kZlib: return "zlib";
  }
  return "?";
}

}  // namespace gpunoise::perfetto
