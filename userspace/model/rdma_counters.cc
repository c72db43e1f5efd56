#include "model/rdma_counters.h"

namespace gpunoise::model {

std::vector<RdmaPort> RdmaDelta(const std::vector<RdmaPort>& before, const std::vector<RdmaPort>& after) {
  std::vector<RdmaPort> out;
  for (const RdmaPort& a : after) {
    const RdmaPort* b = nullptr;
    for (const RdmaPort& x : before)
      if (x.device == a.device && x.port == a.port) b = &x;
    RdmaPort d{a.device, a.port, {}};
    for (const auto& [name, v] : a.counters) {
      uint64_t base = 0;
      if (b) {
        auto it = b->counters.find(name);
        if (it != b->counters.end() && it->second <= v) base = it->second;
      }
      d.counters[name] = v - base;
    }
    out.push_back(std::move(d));
  }
  return out;
}

bool IsRdmaErrorCounter(std::string_view name) {
  if (name.starts_with("hw.")) name.remove_prefix(3);
  // The IB port counters (Documentation/ABI/stable/sysfs-class-infiniband)
  // and the HCAs' retransmission triggers (mlx5 hw_counters).
  for (std::string_view e :
       {"symbol_error", "port_rcv_errors", "port_rcv_remote_physical_errors", "port_rcv_switch_relay_errors",
        "link_error_recovery", "port_xmit_constraint_errors", "port_rcv_constraint_errors",
        "local_link_integrity_errors", "excessive_buffer_overrun_errors", "port_xmit_discards", "link_downed",
        "VL15_dropped", "out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "rnr_nak_retry_err",
        "implied_nak_seq_err", "out_of_buffer", "req_cqe_error", "resp_cqe_error", "rx_icrc_encapsulated"})
    if (name == e) return true;
  return false;
}

}  // namespace gpunoise::model
