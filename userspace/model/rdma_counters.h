// Per-port RDMA (InfiniBand / RoCE) counters: NCCL's inter-node traffic over
// RDMA bypasses the kernel's network stack, so its trouble (link errors,
// retransmissions, congestion) shows only in the HCA's own counters.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace gpunoise::model {

struct RdmaPort {
  std::string device;  // "mlx5_0"
  uint32_t port = 0;
  // counters/<name> as "<name>", hw_counters/<name> as "hw.<name>".
  std::map<std::string, uint64_t> counters;
};

// Counters of `after` minus `before`, port by port (a port or counter only
// in `after` counts from 0; one that went backwards, a reset, from 0 too).
std::vector<RdmaPort> RdmaDelta(const std::vector<RdmaPort>& before, const std::vector<RdmaPort>& after);

// Whether a counter counts errors (link errors, drops, retransmission
// triggers) rather than traffic or congestion.
bool IsRdmaErrorCounter(std::string_view name);

inline constexpr std::string_view kRdmaPortEventName = "rdma port";  // on the "gpunoise network" track
inline constexpr std::string_view kRdmaXmitWait = "port_xmit_wait";

}  // namespace gpunoise::model
