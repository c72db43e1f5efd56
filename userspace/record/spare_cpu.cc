#include "record/spare_cpu.h"

#include <charconv>
#include <vector>

#include "common/clock.h"
#include "common/files.h"
#include "common/strings.h"

namespace gpunoise::record {

std::optional<CpuTimes> ParseUptime(std::string_view text) {
  std::vector<std::string_view> words;
  for (std::string_view w : Split(Trim(text), ' '))
    if (!w.empty()) words.push_back(w);
  if (words.size() != 2) return std::nullopt;
  CpuTimes t;
  double* out[2] = {&t.uptime_s, &t.idle_s};
  for (size_t i = 0; i < 2; ++i) {
    auto [end, ec] = std::from_chars(words[i].data(), words[i].data() + words[i].size(), *out[i]);
    if (ec != std::errc() || end != words[i].data() + words[i].size() || *out[i] < 0) return std::nullopt;
  }
  return t;
}

std::optional<bool> DeflateThreadWanted(std::string_view choice, size_t online_cpus) {
  if (choice == "on") return true;
  if (choice == "off") return false;
  if (choice == "auto") return online_cpus >= kDeflateThreadMinCpus;
  return std::nullopt;
}

double IdleCpus(const CpuTimes& earlier, const CpuTimes& later) {
  if (later.uptime_s <= earlier.uptime_s || later.idle_s < earlier.idle_s) return 0;
  return (later.idle_s - earlier.idle_s) / (later.uptime_s - earlier.uptime_s);
}

SpareCpu::SpareCpu(std::string uptime_path, double min_idle_cpus, uint64_t period_ns)
    : uptime_path_(std::move(uptime_path)), min_idle_cpus_(min_idle_cpus), period_ns_(period_ns) {}

std::optional<CpuTimes> SpareCpu::Read() const {
  auto text = ReadFileToString(uptime_path_);
  if (!text.ok()) return std::nullopt;
  return ParseUptime(*text);
}

bool SpareCpu::Now() { return At(BoottimeNs()); }

bool SpareCpu::At(uint64_t now_ns) {
  if (last_ && now_ns - last_ns_ < period_ns_) return spare_;
  std::optional<CpuTimes> current = Read();
  if (!current) {
    last_.reset();
    spare_ = true;
    return spare_;
  }
  if (last_) spare_ = IdleCpus(*last_, *current) >= min_idle_cpus_;
  last_ = current;
  last_ns_ = now_ns;
  return spare_;
}

}  // namespace gpunoise::record
