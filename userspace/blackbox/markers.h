// What `blackbox arm` writes into the instance's trace_marker so that the
// buffer can be decoded after a reboot, and reading it back:
//   gpunoise-blackbox v1 boot_id=UUID release=6.18.4 clock=boot
//   gpunoise-blackbox id=372 event=sched/sched_switch layout=0f3a...
//   gpunoise-blackbox anchor boottime_ns=N monotonic_ns=N realtime_ns=N
// Event ids are assigned at boot (and at module load: mlx5's or nvidia's
// differ from boot to boot), so the records' common_type means nothing
// without the id table of the boot that wrote them. The layout fingerprint
// lets the collector refuse a format file that would decode the bytes
// differently. Anchors place the boot's BOOTTIME on the wall clock.
// They are rewritten periodically: the buffer overwrites its oldest pages.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "blackbox/event_formats.h"
#include "common/result.h"

namespace gpunoise::blackbox {

inline constexpr std::string_view kMarkerPrefix = "gpunoise-blackbox ";

struct MarkerHeader {
  std::string boot_id;
  std::string release;
  std::string clock;
};

struct MarkerId {
  uint32_t id = 0;
  std::string event;   // "group/name"
  std::string layout;  // LayoutFingerprint
};

struct MarkerAnchor {
  uint64_t record_ts = 0;  // the marker record's own timestamp (trace clock)
  uint64_t boottime_ns = 0, monotonic_ns = 0, realtime_ns = 0;
};

struct MarkerSet {
  std::vector<MarkerHeader> headers;
  std::map<uint32_t, MarkerId> ids;  // the last one seen per id
  std::vector<MarkerAnchor> anchors;
  uint64_t conflicting_ids = 0;  // one id named two ways (two boots' tables mixed)
  bool empty() const { return headers.empty() && ids.empty() && anchors.empty(); }
};

// The marker lines for one boot: a header, then one line per event (each a
// separate write: trace_marker takes a few KiB per write).
std::vector<std::string> HeaderAndIdMarkers(const MarkerHeader& header, const EventTable& table);
std::string AnchorMarker(uint64_t boottime_ns, uint64_t monotonic_ns, uint64_t realtime_ns);

// Adds one ftrace:print buffer ("gpunoise-blackbox ..."); others are ignored.
void AddMarker(std::string_view text, uint64_t record_ts, MarkerSet* set);

// The decode table for the buffer: each id the markers name, with this
// boot's format file for that event (from `current`, by name). Refused
// (error) when an event has no format file here or its layout differs from
// the one the markers recorded, or when the markers carry no id table.
Result<EventTable> TableFromMarkers(const MarkerSet& markers, const EventTable& current);

}  // namespace gpunoise::blackbox
