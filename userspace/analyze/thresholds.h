// Every detector threshold, with its default and meaning, settable by name
// (`--threshold NAME=VALUE`). docs/report.md lists the same table.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace gpunoise::analyze {

enum class ThresholdUnit { kDuration, kRatio, kCount, kRate };

struct ThresholdSpec {
  std::string_view name;
  ThresholdUnit unit;
  double default_value;  // ns for durations, 0..1 for ratios
  std::string_view meaning;
};

const std::vector<ThresholdSpec>& AllThresholds();

class Thresholds {
 public:
  Thresholds();  // every default

  // "softirq.share=40%", "interference.min_delay=5ms", "nic.drop_rate=50".
  Status Set(std::string_view assignment);
  double Get(std::string_view name) const;  // aborts on an unknown name (a bug)
  uint64_t GetNs(std::string_view name) const { return static_cast<uint64_t>(Get(name)); }
  const std::map<std::string, double, std::less<>>& values() const { return values_; }
  std::string Format(std::string_view name) const;  // "100 ms", "30%"

 private:
  std::map<std::string, double, std::less<>> values_;
};

}  // namespace gpunoise::analyze
