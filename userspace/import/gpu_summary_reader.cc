#include "import/gpu_summary_reader.h"

namespace gpunoise::import {
namespace {

uint64_t Unsigned(const model::TrackArg& a) {
  int64_t v = 0;
  return a.AsInt64(&v) && v > 0 ? static_cast<uint64_t>(v) : 0;
}

}  // namespace

bool IsGpuLossSummary(const model::TrackEventRecord& event) {
  return event.type == model::TrackEventType::kInstant && event.name == model::kGpuLossEventName;
}

model::GpuLoss ParseGpuLossSummary(const model::TrackEventRecord& event) {
  model::GpuLoss g;
  for (const auto& a : event.args) {
    std::string_view name = a.name;
    if (name == "gpu.processes") g.processes = Unsigned(a);
    else if (name == "gpu.fragments") g.fragments = Unsigned(a);
    else if (name == "gpu.cupti_dropped_records") g.cupti_dropped_records = Unsigned(a);
    else if (name == "gpu.chunks_not_written") g.chunks_not_written = Unsigned(a);
    else if (name == "gpu.fragments_unreadable") g.fragments_unreadable = Unsigned(a);
    else if (name == "gpu.fragments_truncated") g.fragments_truncated = Unsigned(a);
    else if (name == "gpu.fragments_late") g.fragments_late = Unsigned(a);
    else if (name == "gpu.pidns.processes_translated") g.processes_translated = Unsigned(a);
    else if (name == "gpu.pidns.processes_unmapped") g.processes_unmapped = Unsigned(a);
    else if (name == "gpu.pidns.threads_unmapped") g.threads_unmapped = Unsigned(a);
    else if (name == "gpu.processes_not_captured") g.processes_not_captured = Unsigned(a);
    else if (name == "gpu.error") g.error = a.ToString();
  }
  return g;
}

}  // namespace gpunoise::import
