#include "blackbox/markers.h"

#include <fmt/format.h>

#include "common/strings.h"

namespace gpunoise::blackbox {
namespace {

// "key=value" words of a marker line.
std::map<std::string_view, std::string_view> Words(std::string_view rest) {
  std::map<std::string_view, std::string_view> out;
  for (std::string_view w : Split(rest, ' ')) {
    auto eq = w.find('=');
    if (eq != w.npos) out[w.substr(0, eq)] = w.substr(eq + 1);
  }
  return out;
}

}  // namespace

std::vector<std::string> HeaderAndIdMarkers(const MarkerHeader& header, const EventTable& table) {
  std::vector<std::string> out;
  out.push_back(fmt::format("{}v1 boot_id={} release={} clock={}", kMarkerPrefix, header.boot_id,
                            header.release, header.clock));
  for (const auto& [id, f] : table.all())
    out.push_back(fmt::format("{}id={} event={} layout={}", kMarkerPrefix, id, f.full_name(),
                              LayoutFingerprint(f.format)));
  return out;
}

std::string AnchorMarker(uint64_t boottime_ns, uint64_t monotonic_ns, uint64_t realtime_ns) {
  return fmt::format("{}anchor boottime_ns={} monotonic_ns={} realtime_ns={}", kMarkerPrefix,
                     boottime_ns, monotonic_ns, realtime_ns);
}

void AddMarker(std::string_view text, uint64_t record_ts, MarkerSet* set) {
  text = Trim(text);
  if (!StartsWith(text, kMarkerPrefix)) return;
  std::string_view rest = text.substr(kMarkerPrefix.size());
  auto words = Words(rest);
  if (StartsWith(rest, "v1 ")) {
    set->headers.push_back(MarkerHeader{std::string(words["boot_id"]), std::string(words["release"]),
                                        std::string(words["clock"])});
  } else if (StartsWith(rest, "id=")) {
    auto id = ParseUint64(words["id"]);
    if (!id || words["event"].empty()) return;
    MarkerId m{static_cast<uint32_t>(*id), std::string(words["event"]), std::string(words["layout"])};
    auto it = set->ids.find(m.id);
    if (it != set->ids.end() && (it->second.event != m.event || it->second.layout != m.layout))
      ++set->conflicting_ids;
    set->ids[m.id] = std::move(m);
  } else if (StartsWith(rest, "anchor ")) {
    MarkerAnchor a;
    a.record_ts = record_ts;
    a.boottime_ns = ParseUint64(words["boottime_ns"]).value_or(0);
    a.monotonic_ns = ParseUint64(words["monotonic_ns"]).value_or(0);
    a.realtime_ns = ParseUint64(words["realtime_ns"]).value_or(0);
    if (a.realtime_ns) set->anchors.push_back(a);
  }
}

Result<EventTable> TableFromMarkers(const MarkerSet& markers, const EventTable& current) {
  if (markers.ids.empty())
    return MakeError("the buffer holds no event-id table (no 'gpunoise-blackbox id=' markers): "
                     "it was not armed by 'gpunoise blackbox arm', or its markers were overwritten");
  if (markers.conflicting_ids)
    return MakeError("the buffer's markers name {} event id(s) two different ways (tables of two "
                     "boots mixed): refusing to guess which records are which",
                     markers.conflicting_ids);
  EventTable table;
  for (const auto& [id, m] : markers.ids) {
    auto slash = m.event.find('/');
    if (slash == m.event.npos) return MakeError("marker for id {} names no group/event: '{}'", id, m.event);
    const EventFormat* f = current.FindByName(m.event.substr(0, slash), m.event.substr(slash + 1));
    if (!f)
      return MakeError("no format file on this boot for {} (id {} in the buffer): cannot decode "
                       "its records (a module not loaded now, or a different kernel)",
                       m.event, id);
    std::string layout = LayoutFingerprint(f->format);
    if (layout != m.layout)
      return MakeError("{}: the buffer's markers record layout {}, this boot's format file has {}: "
                       "a different kernel booted than the one that wrote the buffer",
                       m.event, m.layout, layout);
    EventFormat copy = *f;
    copy.format.id = id;  // the id the records carry, which may differ from this boot's
    table.Add(std::move(copy));
  }
  return table;
}

}  // namespace gpunoise::blackbox
