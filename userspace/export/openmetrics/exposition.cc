#include "export/openmetrics/exposition.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <set>

#include <fmt/format.h>

#include "common/strings.h"

namespace gpunoise::openmetrics {
namespace {

std::string EscapeHelp(std::string_view text, Format format) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '"' && format == Format::kOpenMetrics) out += "\\\"";
    else out += c;
  }
  return out;
}

void AppendLabels(const Labels& labels, std::string_view extra_name, std::string_view extra_value,
                  std::string* out) {
  if (labels.empty() && extra_name.empty()) return;
  out->push_back('{');
  bool first = true;
  for (const auto& [name, value] : labels) {
    if (!first) out->push_back(',');
    first = false;
    fmt::format_to(std::back_inserter(*out), "{}=\"{}\"", name, EscapeLabelValue(value));
  }
  if (!extra_name.empty()) {
    if (!first) out->push_back(',');
    fmt::format_to(std::back_inserter(*out), "{}=\"{}\"", extra_name, extra_value);
  }
  out->push_back('}');
}

void AppendSample(std::string_view name, std::string_view suffix, const Labels& labels,
                  std::string_view extra_name, std::string_view extra_value, std::string_view value,
                  std::string* out) {
  out->append(name);
  out->append(suffix);
  AppendLabels(labels, extra_name, extra_value, out);
  out->push_back(' ');
  out->append(value);
  out->push_back('\n');
}

std::string_view TypeName(MetricType type, Format format) {
  switch (type) {
    case MetricType::kCounter: return "counter";
    case MetricType::kGauge: return "gauge";
    case MetricType::kHistogram: return "histogram";
    case MetricType::kInfo: return format == Format::kOpenMetrics ? "info" : "gauge";
  }
  return "untyped";
}

std::string Count(uint64_t v) { return std::to_string(v); }

}  // namespace

Format NegotiateFormat(std::string_view accept_header) {
  return accept_header.find("application/openmetrics-text") != std::string_view::npos
             ? Format::kOpenMetrics
             : Format::kPrometheusText;
}

std::string_view ContentType(Format format) {
  return format == Format::kOpenMetrics ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                                        : "text/plain; version=0.0.4; charset=utf-8";
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '"') out += "\\\"";
    else out += c;
  }
  return out;
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // Integral values (counts) print without an exponent up to 2^53, where
  // doubles stop being exact anyway.
  if (value == std::floor(value) && std::fabs(value) < 9007199254740992.0)
    return fmt::format("{}", static_cast<int64_t>(value));
  return fmt::format("{}", value);
}

bool IsValidMetricName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    bool digit = c >= '0' && c <= '9';
    if (!(alpha || (digit && i > 0))) return false;
  }
  return true;
}

bool IsValidLabelName(std::string_view name) {
  if (name.empty() || StartsWith(name, "__")) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    bool digit = c >= '0' && c <= '9';
    if (!(alpha || (digit && i > 0))) return false;
  }
  return true;
}

Status Validate(const MetricFamily& family) {
  const std::string& name = family.name;
  if (!IsValidMetricName(name)) return MakeError("metric name '{}' is not valid", name);
  if (!family.unit.empty() && !EndsWith(name, "_" + family.unit))
    return MakeError("metric {}: unit '{}' must be the name's suffix", name, family.unit);
  if (family.type == MetricType::kCounter && EndsWith(name, "_total"))
    return MakeError("counter {}: the family name must not end in _total (the samples do)", name);
  if (family.type == MetricType::kInfo && EndsWith(name, "_info"))
    return MakeError("info metric {}: the family name must not end in _info (the samples do)", name);
  std::set<Labels> seen;
  auto check_labels = [&](const Labels& labels) -> Status {
    std::set<std::string> names;
    for (const auto& [label, value] : labels) {
      if (!IsValidLabelName(label)) return MakeError("metric {}: label name '{}' is not valid", name, label);
      if (family.type == MetricType::kHistogram && label == "le")
        return MakeError("histogram {}: 'le' is reserved for buckets", name);
      if (!names.insert(label).second) return MakeError("metric {}: label '{}' given twice", name, label);
    }
    Labels sorted = labels;
    std::sort(sorted.begin(), sorted.end());
    if (!seen.insert(sorted).second) return MakeError("metric {}: two samples with the same labels", name);
    return OkStatus();
  };
  if (family.type == MetricType::kHistogram) {
    if (!family.samples.empty()) return MakeError("histogram {} has plain samples", name);
    for (const auto& h : family.histograms) {
      GN_RETURN_IF_ERROR(check_labels(h.labels));
      double prev_bound = -INFINITY;
      uint64_t prev_count = 0;
      for (const auto& [bound, count] : h.buckets) {
        if (!(bound > prev_bound) || std::isinf(bound))
          return MakeError("histogram {}: bucket bounds must be finite and ascending", name);
        if (count < prev_count || count > h.count)
          return MakeError("histogram {}: bucket counts must be cumulative", name);
        prev_bound = bound;
        prev_count = count;
      }
    }
  } else {
    if (!family.histograms.empty()) return MakeError("metric {} is not a histogram", name);
    for (const auto& s : family.samples) {
      GN_RETURN_IF_ERROR(check_labels(s.labels));
      if (family.type == MetricType::kCounter && (s.value < 0 || std::isnan(s.value)))
        return MakeError("counter {}: negative or NaN value", name);
    }
  }
  return OkStatus();
}

void Render(std::span<const MetricFamily> families, Format format, std::string* out) {
  const bool om = format == Format::kOpenMetrics;
  for (const MetricFamily& f : families) {
    // The classic format names counters and info metrics after their
    // samples; OpenMetrics after the family.
    std::string family_name = f.name;
    if (!om && f.type == MetricType::kCounter) family_name += "_total";
    if (!om && f.type == MetricType::kInfo) family_name += "_info";
    fmt::format_to(std::back_inserter(*out), "# HELP {} {}\n", family_name, EscapeHelp(f.help, format));
    fmt::format_to(std::back_inserter(*out), "# TYPE {} {}\n", family_name, TypeName(f.type, format));
    if (om && !f.unit.empty()) fmt::format_to(std::back_inserter(*out), "# UNIT {} {}\n", f.name, f.unit);
    switch (f.type) {
      case MetricType::kCounter:
        for (const Sample& s : f.samples) AppendSample(f.name, "_total", s.labels, "", "", FormatValue(s.value), out);
        break;
      case MetricType::kGauge:
        for (const Sample& s : f.samples) AppendSample(f.name, "", s.labels, "", "", FormatValue(s.value), out);
        break;
      case MetricType::kInfo:
        for (const Sample& s : f.samples) AppendSample(f.name, "_info", s.labels, "", "", "1", out);
        break;
      case MetricType::kHistogram:
        for (const HistogramSample& h : f.histograms) {
          for (const auto& [bound, count] : h.buckets)
            AppendSample(f.name, "_bucket", h.labels, "le", FormatValue(bound), Count(count), out);
          AppendSample(f.name, "_bucket", h.labels, "le", "+Inf", Count(h.count), out);
          AppendSample(f.name, "_count", h.labels, "", "", Count(h.count), out);
          AppendSample(f.name, "_sum", h.labels, "", "", FormatValue(h.sum), out);
        }
        break;
    }
  }
  if (om) out->append("# EOF\n");
}

}  // namespace gpunoise::openmetrics
