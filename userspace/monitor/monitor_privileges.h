// What `monitor` keeps of root's capabilities once its programs are loaded
// and attached (the drop itself: common/privileges.h). Listed, with why, in
// docs/monitor.md.
#pragma once

#include <string>
#include <vector>

#include "common/capabilities.h"

namespace gpunoise::monitor {

// CAP_BPF and CAP_PERFMON (CAP_SYS_ADMIN on kernels older than 5.8, which
// know neither).
CapMask MonitorKeeps(std::vector<std::string>* reasons);

}  // namespace gpunoise::monitor
