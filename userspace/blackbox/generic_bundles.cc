#include "blackbox/generic_bundles.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "export/perfetto/generic_ftrace_bundle.h"

namespace gpunoise::blackbox {

Status WriteGenericBundles(uint32_t cpu, std::span<const GenericRecord* const> records,
                           const std::function<Status(std::string_view packet)>& write) {
  std::vector<perfetto::GenericFtraceField> fields;
  std::vector<perfetto::GenericFtraceRecord> bundle;
  std::vector<std::pair<size_t, size_t>> ranges;
  std::string packet;
  for (size_t start = 0; start < records.size(); start += kGenericRecordsPerBundle) {
    size_t end = std::min(records.size(), start + kGenericRecordsPerBundle);
    fields.clear();
    bundle.clear();
    ranges.clear();
    // All fields first: the records' spans point into `fields`, which must
    // not grow after the first span is taken.
    for (size_t i = start; i < end; ++i) {
      size_t first = fields.size();
      for (const GenericField& f : records[i]->fields) fields.push_back({f.name, f.is_string, f.value, f.text});
      ranges.emplace_back(first, fields.size() - first);
    }
    for (size_t i = start; i < end; ++i) {
      const GenericRecord& g = *records[i];
      auto [first, n] = ranges[i - start];
      bundle.push_back({g.ts, g.tid, g.common_flags, g.event,
                        std::span<const perfetto::GenericFtraceField>(fields).subspan(first, n)});
    }
    packet.clear();
    perfetto::EncodeGenericFtraceBundle(cpu, bundle, &packet);
    GN_RETURN_IF_ERROR(write(packet));
  }
  return OkStatus();
}

}  // namespace gpunoise::blackbox
