// Test helper: a decoded trace chunk indexed the way the trace processor
// would see it: track descriptors by uuid, events on their track (their own
// track_uuid, else their sequence's default), and slices rebuilt per track
// from begin/end pairs (after sorting by timestamp, as the trace processor
// does).
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "export/perfetto/protos/perfetto_trace_subset.pb.h"

namespace gpunoise::testing {

struct Slice {
  uint64_t track = 0;
  uint64_t start = 0, end = 0;
  int depth = 0;
  std::string name;
  std::vector<std::string> categories;
  const perfetto::TrackEvent* begin = nullptr;
  std::vector<uint64_t> flows, terminating_flows;
  // The name of each of begin's debug annotations, interned or not.
  std::vector<std::string> arg_names;

  const perfetto::DebugAnnotation* Arg(const std::string& arg) const {
    for (int i = 0; i < begin->debug_annotations_size(); ++i)
      if (arg_names[static_cast<size_t>(i)] == arg) return &begin->debug_annotations(i);
    return nullptr;
  }
};

class TraceView {
 public:
  explicit TraceView(const std::string& bytes) {
    parsed_ = trace_.ParseFromString(bytes);
    Index();
  }
  // An already parsed trace (integration/support ReadTrace, which also
  // expands compressed blocks).
  explicit TraceView(perfetto::Trace trace) : trace_(std::move(trace)), parsed_(true) { Index(); }

  bool parsed() const { return parsed_; }
  const perfetto::Trace& trace() const { return trace_; }
  int unmatched_ends() const { return unmatched_ends_; }
  size_t unclosed() const { return unclosed_; }

  const perfetto::TrackDescriptor* Track(uint64_t uuid) const {
    auto it = tracks_.find(uuid);
    return it == tracks_.end() ? nullptr : it->second;
  }
  const perfetto::TrackDescriptor* TrackNamed(const std::string& name) const {
    for (const auto& [uuid, d] : tracks_)
      if (d->name() == name) return d;
    return nullptr;
  }
  const std::map<uint64_t, const perfetto::TrackDescriptor*>& tracks() const { return tracks_; }

  std::vector<Slice> SlicesOn(uint64_t track) const {
    std::vector<Slice> out;
    for (size_t i = 0; i < slices_.size(); ++i)
      if (slices_[i].track == track && !IsInstant(i)) out.push_back(slices_[i]);
    return out;
  }
  std::optional<Slice> SliceNamed(const std::string& name) const {
    for (size_t i = 0; i < slices_.size(); ++i)
      if (slices_[i].name == name && !IsInstant(i)) return slices_[i];
    return std::nullopt;
  }
  std::optional<Slice> InstantNamed(const std::string& name) const {
    for (size_t i : instants_)
      if (slices_[i].name == name) return slices_[i];
    return std::nullopt;
  }
  std::vector<std::pair<uint64_t, double>> Counter(uint64_t track) const {
    auto it = counters_.find(track);
    return it == counters_.end() ? std::vector<std::pair<uint64_t, double>>{} : it->second;
  }

 private:
  void Index() {
    for (const auto& p : trace_.packet()) {
      if (p.has_track_descriptor()) tracks_[p.track_descriptor().uuid()] = &p.track_descriptor();
    }
    struct Ev {
      uint64_t ts;
      size_t order;  // in packet order: also its index in resolved_
      const perfetto::TrackEvent* e;
    };
    std::vector<Ev> events;
    // Interned strings per sequence, as the trace processor resolves them:
    // defined in the packet of their first use, forgotten when a packet
    // clears the sequence's incremental state.
    std::map<uint32_t, Interned> sequences;
    for (const auto& p : trace_.packet()) {
      Interned& in = sequences[p.trusted_packet_sequence_id()];
      if (p.sequence_flags() & perfetto::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED) in = Interned{};
      if (p.trace_packet_defaults().track_event_defaults().has_track_uuid())
        in.default_track = p.trace_packet_defaults().track_event_defaults().track_uuid();
      if (p.has_interned_data()) {
        const auto& d = p.interned_data();
        for (const auto& n : d.event_names()) in.names[n.iid()] = n.name();
        for (const auto& c : d.event_categories()) in.categories[c.iid()] = c.name();
        for (const auto& a : d.debug_annotation_names()) in.arg_names[a.iid()] = a.name();
      }
      if (p.has_track_event()) {
        const perfetto::TrackEvent& e = p.track_event();
        Resolved r;
        r.track = e.has_track_uuid() ? e.track_uuid() : in.default_track;
        r.name = e.has_name_iid() ? Lookup(in.names, e.name_iid()) : e.name();
        r.categories.assign(e.categories().begin(), e.categories().end());
        for (uint64_t iid : e.category_iids()) r.categories.push_back(Lookup(in.categories, iid));
        for (const auto& a : e.debug_annotations())
          r.arg_names.push_back(a.has_name_iid() ? Lookup(in.arg_names, a.name_iid()) : a.name());
        resolved_.push_back(std::move(r));
        events.push_back({p.timestamp(), events.size(), &e});
      }
    }
    std::stable_sort(events.begin(), events.end(),
                     [](const Ev& a, const Ev& b) { return a.ts < b.ts; });
    std::map<uint64_t, std::vector<size_t>> open;
    for (const Ev& ev : events) {
      const auto& e = *ev.e;
      if (e.type() == perfetto::TrackEvent::TYPE_SLICE_BEGIN ||
          e.type() == perfetto::TrackEvent::TYPE_INSTANT) {
        Slice s;
        const Resolved& strings = resolved_[ev.order];
        s.track = strings.track;
        s.start = s.end = ev.ts;
        s.name = strings.name;
        s.categories = strings.categories;
        s.arg_names = strings.arg_names;
        s.begin = &e;
        s.flows.assign(e.flow_ids().begin(), e.flow_ids().end());
        s.terminating_flows.assign(e.terminating_flow_ids().begin(), e.terminating_flow_ids().end());
        s.depth = static_cast<int>(open[s.track].size());
        slices_.push_back(s);
        if (e.type() == perfetto::TrackEvent::TYPE_SLICE_BEGIN)
          open[s.track].push_back(slices_.size() - 1);
        else
          instants_.push_back(slices_.size() - 1);
      } else if (e.type() == perfetto::TrackEvent::TYPE_SLICE_END) {
        auto& stack = open[resolved_[ev.order].track];
        if (stack.empty()) {
          ++unmatched_ends_;
          continue;
        }
        slices_[stack.back()].end = ev.ts;
        stack.pop_back();
      } else if (e.type() == perfetto::TrackEvent::TYPE_COUNTER) {
        counters_[resolved_[ev.order].track].push_back({ev.ts, e.double_counter_value()});
      }
    }
    for (auto& [track, stack] : open) unclosed_ += stack.size();
  }

  struct Interned {
    std::map<uint64_t, std::string> names, categories, arg_names;
    uint64_t default_track = 0;  // TrackEventDefaults: the track of events without one
  };
  struct Resolved {
    uint64_t track = 0;
    std::string name;
    std::vector<std::string> categories, arg_names;
  };
  // An iid nothing defined reads as "?iid": a test sees it as a wrong name.
  static std::string Lookup(const std::map<uint64_t, std::string>& table, uint64_t iid) {
    auto it = table.find(iid);
    return it == table.end() ? "?" + std::to_string(iid) : it->second;
  }

  bool IsInstant(size_t i) const {
    return std::find(instants_.begin(), instants_.end(), i) != instants_.end();
  }

  perfetto::Trace trace_;
  bool parsed_ = false;
  std::map<uint64_t, const perfetto::TrackDescriptor*> tracks_;
  std::vector<Slice> slices_;
  std::vector<size_t> instants_;
  std::vector<Resolved> resolved_;  // one per track event, in packet order
  std::map<uint64_t, std::vector<std::pair<uint64_t, double>>> counters_;
  int unmatched_ends_ = 0;
  size_t unclosed_ = 0;
};

}  // namespace gpunoise::testing
