// The trace reader as `gpunoise report` runs it on a file someone handed
// over: framing, plain and compressed packets, ftrace bundles (compact and
// full), track events, stats and metadata, streamed into the timeline
// builder and analyzed: from memory, strict, and through the file path
// (a small buffer, so packets cross buffer ends) with --partial.
#include <cstddef>
#include <cstdint>
#include <span>

#include "analyze/analysis.h"
#include "analyze/timeline_builder.h"
#include "import/trace_reader.h"
#include "fuzz/memfd_file.h"

namespace {

void ReadAndAnalyze(std::span<const uint8_t> data, bool partial) {
  gpunoise::analyze::TimelineBuilder builder;
  gpunoise::import::ReadOptions options;
  options.partial = partial;
  // Small, so packets larger than the buffer (the growing path) are reached.
  options.buffer_bytes = 4096;
  gpunoise::import::TraceReader reader(builder, options);
  if (partial) {
    gpunoise::fuzz::MemFile file(data.data(), data.size());
    if (!file.valid() || !reader.ReadFile(file.path()).ok()) return;
  } else if (!reader.ReadBuffer(data).ok()) {
    return;
  }
  gpunoise::analyze::Timeline timeline = builder.Finish();
  if (!timeline.start_ts) return;
  (void)gpunoise::analyze::Analyze(timeline, gpunoise::analyze::AnalysisOptions{});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> input(data, size);
  ReadAndAnalyze(input, false);
  ReadAndAnalyze(input, true);
  return 0;
}
