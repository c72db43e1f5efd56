#include "model/events.h"

namespace gpunoise::model {

std::string_view SoftirqName(uint32_t vec) {
  // Same spelling as the kernel's softirq_to_name[] and Perfetto's UI.
  static constexpr std::string_view kNames[kNumSoftirqVecs] = {
      "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU"};
  return vec < kNumSoftirqVecs ? kNames[vec] : std::string_view("?");
}

std::string_view VectorName(VectorKind kind) {
  static constexpr std::string_view kNames[kNumVectorKinds] = {
      "local_timer", "reschedule", "call_function", "call_function_single", "irq_work",
      "x86_platform_ipi", "thermal_apic", "error_apic", "spurious_apic"};
  auto i = static_cast<uint32_t>(kind);
  return i < kNumVectorKinds ? kNames[i] : std::string_view("?");
}

}  // namespace gpunoise::model
