// Writes metric families in the two text formats Prometheus scrapes: the
// classic text format 0.0.4 and OpenMetrics 1.0.0, chosen from the
// request's Accept header the way Prometheus negotiates it.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "common/result.h"
#include "export/openmetrics/metric_family.h"

namespace gpunoise::openmetrics {

enum class Format { kPrometheusText, kOpenMetrics };

// OpenMetrics when the client lists application/openmetrics-text, else the
// classic text format (what curl and promtool read).
Format NegotiateFormat(std::string_view accept_header);
std::string_view ContentType(Format format);

// Appends the exposition of `families` to `out` (which the caller reuses
// between scrapes). OpenMetrics output ends with "# EOF".
void Render(std::span<const MetricFamily> families, Format format, std::string* out);

// A family the formats cannot express: a bad metric or label name, a unit
// that is not the name's suffix, a counter named ..._total, a histogram
// with an "le" label or unsorted buckets, two samples with the same labels.
Status Validate(const MetricFamily& family);
bool IsValidMetricName(std::string_view name);
bool IsValidLabelName(std::string_view name);

// Label values and help text escaped for the text formats: backslash,
// newline and (label values, and help in OpenMetrics) double quote.
std::string EscapeLabelValue(std::string_view value);
// Shortest text that reads back as the same double; "+Inf", "-Inf", "NaN".
std::string FormatValue(double value);

}  // namespace gpunoise::openmetrics
