// Checks a `gpunoise record -- gpu_workload` trace against the manifest
// the workload wrote (tests/gpu/check.sh): every kernel appears exactly as
// often as it was launched, inside the recording window, on one stream
// track per stream, each with a flow from a launch call on the thread that
// launched it, and that thread is in the kernel-side scheduling data.
#pragma once

#include <string>
#include <vector>

#include "export/perfetto/protos/perfetto_trace_subset.pb.h"

namespace gpunoise::testing {

struct CheckReport {
  std::vector<std::string> passed;
  std::vector<std::string> failed;
  bool ok() const { return failed.empty() && !passed.empty(); }
};

// Manifest lines (gpu_workload.cu writes them):
//   kernel NAME COUNT LAUNCHING_TID STREAM_LABEL
//   copy KIND BYTES COUNT
//   range NAME COUNT TID
//   expect nvml        (NVML counters must be there)
// NAME may contain spaces; the fields after it do not.
CheckReport CheckGpuTrace(const perfetto::Trace& trace, const std::string& manifest);

}  // namespace gpunoise::testing
