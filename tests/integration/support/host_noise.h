// What the rest of this shared machine took from one CPU while a test ran,
// read from the kernel's own counters: the hypervisor's steal (/proc/stat)
// and NET_RX softirqs (/proc/softirqs). A test that asserts a quiet run has
// no findings needs a quiet CPU first: on an oversubscribed host a stolen
// vCPU stretches whatever it was running (a timer callback, an interrupt),
// and the report rightly shows that.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace gpunoise::testing {

// The steal ticks of `cpu` in /proc/stat, in ns (USER_HZ resolution).
uint64_t StealNs(int cpu);
// NET_RX softirqs served on `cpu` so far (/proc/softirqs).
uint64_t NetRxCount(int cpu);

class HostNoise {
 public:
  // Starts counting now.
  explicit HostNoise(int cpu);

  uint64_t steal_ns() const;
  double net_rx_per_second() const;
  // No steal tick (10 ms) and under `max_net_rx` NET_RX softirqs a second
  // since construction.
  bool Quiet(double max_net_rx_per_second = 2000) const;
  // One line for a test's output: what was seen on the CPU.
  std::string Describe() const;

 private:
  int cpu_;
  uint64_t steal_before_, net_rx_before_;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace gpunoise::testing
