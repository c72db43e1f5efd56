// Reads every RDMA port's counters from sysfs:
// /sys/class/infiniband/<device>/ports/<port>/{counters,hw_counters}/<name>.
// Read at the start and end of a recording; their difference is what the
// recording saw (model/rdma_counters.h).
#pragma once

#include <string>
#include <vector>

#include "model/rdma_counters.h"

namespace gpunoise::collect {

// `sysfs_root`: "/sys" normally; GPUNOISE_SYSFS_ROOT (tests) replaces it.
// Nothing (not an error) on a machine without RDMA devices.
std::vector<model::RdmaPort> ReadRdmaCounters(const std::string& sysfs_root = "");

}  // namespace gpunoise::collect
