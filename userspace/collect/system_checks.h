// Capability probing that happens before anything is loaded (DESIGN.md
// decision 4): each failure is one line that says what to do.
#pragma once

#include <string>

#include "common/result.h"

namespace gpunoise::collect {

// Root, or CAP_BPF + CAP_PERFMON (or CAP_SYS_ADMIN on kernels before 5.8).
Status CheckPrivileges();

// The running kernel's BTF, which CO-RE relocations and tp_btf programs need.
// GPUNOISE_BTF_PATH_FOR_TESTING overrides the path.
Status CheckKernelBtf(const std::string& btf_path = "/sys/kernel/btf/vmlinux");

// Finds tracefs (mounting it at /sys/kernel/tracing when it is absent and we
// may) and returns its path. GPUNOISE_TRACEFS_FOR_TESTING names a stand-in.
Result<std::string> EnsureTracefs();

}  // namespace gpunoise::collect
