#include "model/events.h"

#include <iterator>

namespace gpunoise::model {

std::string_view SoftirqName(uint32_t vec) {
  // Same spelling as the kernel's softirq_to_name[] and Perfetto's UI.
  static constexpr std::string_view kNames[kNumSoftirqVecs] = {
      "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU"};
  return vec < kNumSoftirqVecs ? kNames[vec] : std::string_view("?");
}

std::optional<uint32_t> SoftirqVecNamed(std::string_view name) {
  for (uint32_t vec = 0; vec < kNumSoftirqVecs; ++vec)
    if (SoftirqName(vec) == name) return vec;
  return std::nullopt;
}

std::string_view VectorName(VectorKind kind) {
  static constexpr std::string_view kNames[kNumVectorKinds] = {
      "local_timer", "reschedule", "call_function", "call_function_single", "irq_work",
      "x86_platform_ipi", "thermal_apic", "error_apic", "spurious_apic"};
  auto i = static_cast<uint32_t>(kind);
  return i < kNumVectorKinds ? kNames[i] : std::string_view("?");
}

size_t EventKindIndex(const Event& e) {
  if (auto* w = std::get_if<SchedWaking>(&e.payload); w && w->is_new_task) return kEventKinds - 1;
  return e.payload.index();
}

std::string_view EventKindName(size_t kind_index) {
  // In Payload's order, then sched_wakeup_new; the same names as
  // collect::RecordKindName.
  static constexpr std::string_view kNames[] = {
      "sched_switch", "sched_waking", "sched_migrate_task", "sched_process_fork",
      "sched_process_exec", "sched_process_exit", "task_rename", "irq_handler_entry",
      "irq_handler_exit", "softirq_entry", "softirq_exit", "softirq_raise", "vector_entry",
      "vector_exit", "napi_poll", "netif_receive_skb", "net_dev_xmit", "net_dev_xmit_timeout",
      "dql_stall_detected", "tcp_retransmit_skb", "napi_gro_receive_entry",
      "napi_gro_receive_exit", "kfree_skb", "nic_driver_event", "sched_wakeup_new"};
  static_assert(std::size(kNames) == kEventKinds);
  return kind_index < kEventKinds ? kNames[kind_index] : std::string_view("?");
}

}  // namespace gpunoise::model
