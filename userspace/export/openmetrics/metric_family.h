// Metrics as a value model, independent of how they are written: one
// family per metric name, with its type, unit, help and samples. The
// monitor builds families from kernel aggregates; exposition.h writes them
// as Prometheus text or OpenMetrics.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gpunoise::openmetrics {

enum class MetricType { kCounter, kGauge, kHistogram, kInfo };

using Labels = std::vector<std::pair<std::string, std::string>>;

struct Sample {
  Labels labels;
  double value = 0;
};

struct HistogramSample {
  Labels labels;
  // Finite upper bounds, ascending, with cumulative counts; the +Inf
  // bucket is `count`.
  std::vector<std::pair<double, uint64_t>> buckets;
  uint64_t count = 0;
  double sum = 0;
};

struct MetricFamily {
  // Without the type's suffix: "gpunoise_softirq_seconds" for the counter
  // whose samples are gpunoise_softirq_seconds_total, "gpunoise_build" for
  // the info metric gpunoise_build_info. A unit, when given, is the name's
  // last part (OpenMetrics).
  std::string name;
  MetricType type = MetricType::kGauge;
  std::string unit;  // "seconds", "bytes", "" for counts and ratios
  std::string help;
  std::vector<Sample> samples;              // counters, gauges, info
  std::vector<HistogramSample> histograms;  // histograms
};

// A family with no samples yet.
inline MetricFamily Family(std::string name, MetricType type, std::string unit, std::string help) {
  MetricFamily f;
  f.name = std::move(name);
  f.type = type;
  f.unit = std::move(unit);
  f.help = std::move(help);
  return f;
}

}  // namespace gpunoise::openmetrics
