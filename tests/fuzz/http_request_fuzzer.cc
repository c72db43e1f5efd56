// The part of an HTTP request the monitor's own code reads: the Accept
// header, from which /metrics picks Prometheus text or OpenMetrics
// (cpp-httplib parses the request itself).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "export/openmetrics/exposition.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view accept(reinterpret_cast<const char*>(data), size);
  auto format = gpunoise::openmetrics::NegotiateFormat(accept);
  (void)gpunoise::openmetrics::ContentType(format);
  return 0;
}
