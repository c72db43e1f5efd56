// What `record` keeps of root's capabilities once its eBPF programs are
// loaded and attached (the drop itself: common/privileges.h). Everything it
// does afterwards works on file descriptors it already holds (BPF maps and ring buffers, perf events,
// links, the trace file) or on files root owns or anyone may read (/proc,
// tracefs formats, cgroupfs), which needs no capability. What is kept, and
// why, is measured by the tests and listed in docs/record.md
// ("Privileges").
#pragma once

#include <string>
#include <vector>

#include "common/capabilities.h"
#include "common/privileges.h"

namespace gpunoise {

struct RecordNeeds {
  std::string output_path;  // the trace, renamed into place at the end
  std::string gpu_dir;      // GPU fragments to collect (and remove), or ""
  bool pod_dirs = false;    // gpu_dir is a root of per-pod directories handed over while recording
};

// `reasons` gets one line per capability kept.
CapMask RecordKeeps(const RecordNeeds& needs, std::vector<std::string>* reasons);

}  // namespace gpunoise
