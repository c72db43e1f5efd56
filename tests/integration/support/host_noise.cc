#include "integration/support/host_noise.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

namespace gpunoise::testing {

uint64_t StealNs(int cpu) {
  std::ifstream in("/proc/stat");
  std::string line, want = "cpu" + std::to_string(cpu);
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string name;
    s >> name;
    if (name != want) continue;
    // user nice system idle iowait irq softirq steal
    uint64_t v = 0;
    for (int i = 0; i < 8 && s >> v; ++i) {
    }
    return v * (1'000'000'000ull / static_cast<uint64_t>(::sysconf(_SC_CLK_TCK)));
  }
  return 0;
}

uint64_t NetRxCount(int cpu) {
  std::ifstream in("/proc/softirqs");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string name;
    s >> name;
    if (name != "NET_RX:") continue;
    uint64_t v = 0;
    for (int i = 0; i <= cpu && s >> v; ++i) {
    }
    return v;
  }
  return 0;
}

HostNoise::HostNoise(int cpu)
    : cpu_(cpu), steal_before_(StealNs(cpu)), net_rx_before_(NetRxCount(cpu)),
      started_(std::chrono::steady_clock::now()) {}

uint64_t HostNoise::steal_ns() const { return StealNs(cpu_) - steal_before_; }

double HostNoise::net_rx_per_second() const {
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  return seconds > 0 ? static_cast<double>(NetRxCount(cpu_) - net_rx_before_) / seconds : 0;
}

bool HostNoise::Quiet(double max_net_rx_per_second) const {
  return steal_ns() == 0 && net_rx_per_second() < max_net_rx_per_second;
}

std::string HostNoise::Describe() const {
  std::ostringstream s;
  s << "CPU " << cpu_ << ": the hypervisor stole " << steal_ns() / 1e6 << " ms, NET_RX " << net_rx_per_second()
    << "/s";
  return s.str();
}

}  // namespace gpunoise::testing
