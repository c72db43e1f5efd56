// What `record` and `monitor` keep of root's capabilities once their eBPF
// programs are loaded and attached, and the drop itself (common/
// capabilities.h). Everything they do afterwards works on file
// descriptors they already hold (BPF maps and ring buffers, perf events,
// links, the trace file) or on files root owns or anyone may read (/proc,
// tracefs formats, cgroupfs), which needs no capability. What is kept, and
// why, is measured by the tests and listed in docs/record.md
// ("Privileges").
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "common/capabilities.h"
#include "common/result.h"

namespace gpunoise {

struct RecordNeeds {
  std::string output_path;  // the trace, renamed into place at the end
  std::string gpu_dir;      // GPU fragments to collect (and remove), or ""
  bool pod_dirs = false;    // gpu_dir is a root of per-pod directories handed over while recording
};

// `reasons` gets one line per capability kept.
CapMask RecordKeeps(const RecordNeeds& needs, std::vector<std::string>* reasons);
// The monitor: CAP_BPF and CAP_PERFMON (CAP_SYS_ADMIN on kernels older
// than 5.8, which know neither).
CapMask MonitorKeeps(std::vector<std::string>* reasons);

// A group by name or number ("gpunoise-readers", "1001"); errors name it.
Result<gid_t> LookUpGroup(std::string_view name);
// Adds `gid` to this process's supplementary groups (all threads; glibc's
// setgroups does that), so that files it creates later can be given to that
// group by their owner without CAP_CHOWN (the monitor's dumps, written
// after the drop). Needs CAP_SETGID in every thread: call it before any
// thread has dropped its capabilities (glibc aborts the process otherwise).
Status JoinGroup(gid_t gid);

// Drops to `keep` and logs (at debug level) what stayed. `who` names the
// mode in the log line ("record", "monitor").
Status DropPrivilegesAfterAttach(const char* who, CapMask keep, const std::vector<std::string>& reasons);

}  // namespace gpunoise
