// gpu_trace_check TRACE MANIFEST: the verdict of tests/gpu/check.sh.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "export/perfetto/expand_compressed_packets.h"
#include "gpu/gpu_trace_check.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: gpu_trace_check TRACE.pftrace MANIFEST\n");
    return 2;
  }
  auto read = [](const char* path, std::string* out) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    std::stringstream ss;
    ss << in.rdbuf();
    *out = ss.str();
    return true;
  };
  std::string trace_bytes, manifest;
  if (!read(argv[1], &trace_bytes) || !read(argv[2], &manifest)) {
    std::fprintf(stderr, "gpu_trace_check: cannot read %s or %s\n", argv[1], argv[2]);
    return 2;
  }
  gpunoise::perfetto::Trace trace;
  if (!trace.ParseFromString(trace_bytes)) {
    std::fprintf(stderr, "gpu_trace_check: %s is not a trace\n", argv[1]);
    return 1;
  }
  // Recordings are zlib-compressed by default.
  if (auto expanded = gpunoise::perfetto::ExpandCompressedPackets(&trace); !expanded.ok()) {
    std::fprintf(stderr, "gpu_trace_check: %s: %s\n", argv[1], expanded.error().message.c_str());
    return 1;
  }
  auto report = gpunoise::testing::CheckGpuTrace(trace, manifest);
  for (const auto& p : report.passed) std::printf("ok    %s\n", p.c_str());
  for (const auto& f : report.failed) std::printf("FAIL  %s\n", f.c_str());
  std::printf("%s: %zu checks passed, %zu failed\n", report.ok() ? "PASS" : "FAIL", report.passed.size(),
              report.failed.size());
  return report.ok() ? 0 : 1;
}
