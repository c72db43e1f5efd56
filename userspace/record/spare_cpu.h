// Whether the node has CPU to spare right now, from the kernel's own CPU
// time accounting (/proc/uptime). The recorder deflates its trace blocks only
// then (`--compress auto`): under a storm that keeps every CPU busy, the
// compression would take its CPU from the training job and the storm's own
// softirqs (about 40% of the recorder's CPU under the W2 UDP flood,
// docs/performance.md), so the blocks are written plain instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpunoise::record {

// /proc/uptime: seconds since boot, and the idle time of all CPUs summed.
// (Not /proc/stat: the kernel builds all of it for any read, a per-IRQ sum
// over every CPU, milliseconds on a big node.)
struct CpuTimes {
  double uptime_s = 0;
  double idle_s = 0;
};
std::optional<CpuTimes> ParseUptime(std::string_view text);

// CPUs' worth of idle time between two readings (0 when no time passed).
double IdleCpus(const CpuTimes& earlier, const CpuTimes& later);

// `record --deflate-thread`: "on", "off", or "auto", which is on where the
// node has at least kDeflateThreadMinCpus online CPUs: there the deflate
// runs beside the drain on a CPU of its own, and the drain's turns are
// shorter by it (about a fifth to two fifths of its CPU, docs/performance.md).
// On a smaller node both would share the CPUs the job runs on. nullopt:
// none of the three.
inline constexpr size_t kDeflateThreadMinCpus = 4;
std::optional<bool> DeflateThreadWanted(std::string_view choice, size_t online_cpus);

class SpareCpu {
 public:
  // Compression wants about a tenth of one CPU under the heaviest storm
  // measured here; half a CPU idle leaves it room without competing.
  static constexpr double kMinIdleCpus = 0.5;
  // Readings at most this often: a block seals every few ms in a storm.
  static constexpr uint64_t kPeriodNs = 250'000'000;

  explicit SpareCpu(std::string uptime_path = "/proc/uptime", double min_idle_cpus = kMinIdleCpus,
                    uint64_t period_ns = kPeriodNs);

  // The decision of the last complete period; true until the first one has
  // passed, and true whenever /proc/uptime cannot be read (compression is the
  // default, and a reading error says nothing about the node).
  bool Now();
  // As Now(), with the time given (tests).
  bool At(uint64_t now_ns);

 private:
  std::optional<CpuTimes> Read() const;

  std::string uptime_path_;
  double min_idle_cpus_;
  uint64_t period_ns_;
  std::optional<CpuTimes> last_;
  uint64_t last_ns_ = 0;
  bool spare_ = true;
};

}  // namespace gpunoise::record
