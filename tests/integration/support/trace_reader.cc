#include "integration/support/trace_reader.h"

#include <algorithm>
#include <set>
#include <fstream>
#include <map>
#include <sstream>

#include "export/perfetto/expand_compressed_packets.h"

namespace gpunoise::testing {

std::optional<perfetto::Trace> ReadTrace(const std::string& path, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (error) *error = "cannot open " + path;
    return std::nullopt;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  perfetto::Trace trace;
  if (!trace.ParseFromString(ss.str())) {
    if (error) *error = "not a valid trace: " + path;
    return std::nullopt;
  }
  if (auto expanded = perfetto::ExpandCompressedPackets(&trace); !expanded.ok()) {
    if (error) *error = path + ": " + expanded.error().message;
    return std::nullopt;
  }
  return trace;
}

int CompressedBlocks(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  perfetto::Trace trace;
  if (!in || !trace.ParseFromString(ss.str())) return -1;
  int blocks = 0;
  for (const auto& p : trace.packet()) blocks += p.has_compressed_packets();
  return blocks;
}

namespace {

using CompactSched = perfetto::FtraceEventBundle_CompactSched;

// Walks one delta-encoded timestamp column of every bundle's compact sched:
// fn(bundle, columns, index, absolute timestamp).
template <typename Timestamps, typename Fn>
void ForEachCompact(const perfetto::Trace& trace, Timestamps timestamps, Fn fn) {
  for (const auto& p : trace.packet()) {
    if (!p.has_ftrace_events()) continue;
    const auto& b = p.ftrace_events();
    const CompactSched& cs = b.compact_sched();
    uint64_t ts = 0;
    const auto& column = timestamps(cs);
    for (int i = 0; i < column.size(); ++i) {
      ts += column.Get(i);
      fn(b, cs, i, ts);
    }
  }
}

std::string InternedComm(const CompactSched& cs, uint32_t index) {
  return index < static_cast<uint32_t>(cs.intern_table_size()) ? cs.intern_table(static_cast<int>(index)) : "?";
}

}  // namespace

std::vector<CompactSwitch> CompactSwitches(const perfetto::Trace& trace) {
  std::vector<CompactSwitch> out;
  ForEachCompact(trace, [](const CompactSched& cs) -> const auto& { return cs.switch_timestamp(); },
                 [&](const perfetto::FtraceEventBundle& b, const CompactSched& cs, int i, uint64_t ts) {
                   out.push_back({ts, b.cpu(), cs.switch_next_pid(i), cs.switch_prev_state(i),
                                  InternedComm(cs, cs.switch_next_comm_index(i))});
                 });
  return out;
}

std::vector<CompactWaking> CompactWakings(const perfetto::Trace& trace) {
  std::vector<CompactWaking> out;
  ForEachCompact(trace, [](const CompactSched& cs) -> const auto& { return cs.waking_timestamp(); },
                 [&](const perfetto::FtraceEventBundle& b, const CompactSched& cs, int i, uint64_t ts) {
                   out.push_back({ts, b.cpu(), cs.waking_pid(i), cs.waking_target_cpu(i), cs.waking_prio(i),
                                  InternedComm(cs, cs.waking_comm_index(i)),
                                  i < cs.waking_common_flags_size() ? cs.waking_common_flags(i) : 0u});
                 });
  return out;
}

std::map<uint32_t, std::vector<uint64_t>> PerCpuTimestamps(const perfetto::Trace& trace,
                                                            bool* within_bundle_sorted) {
  std::map<uint32_t, std::vector<uint64_t>> out;
  *within_bundle_sorted = true;
  for (const auto& p : trace.packet()) {
    if (!p.has_ftrace_events()) continue;
    const auto& b = p.ftrace_events();
    std::vector<uint64_t> bundle;
    auto check_sorted = [&](const std::vector<uint64_t>& v) {
      if (!std::is_sorted(v.begin(), v.end())) *within_bundle_sorted = false;
    };
    std::vector<uint64_t> switches, wakings, events;
    uint64_t ts = 0;
    for (uint64_t d : b.compact_sched().switch_timestamp()) switches.push_back(ts += d);
    ts = 0;
    for (uint64_t d : b.compact_sched().waking_timestamp()) wakings.push_back(ts += d);
    // A raise the recorder folded into its softirq entry is written just
    // before that entry, at the raise's own time (the trace processor sorts):
    // the only event a bundle holds out of order.
    for (const auto& e : b.event())
      if (!e.has_softirq_raise()) events.push_back(e.timestamp());
    check_sorted(switches);
    check_sorted(wakings);
    check_sorted(events);
    bundle.insert(bundle.end(), switches.begin(), switches.end());
    bundle.insert(bundle.end(), wakings.begin(), wakings.end());
    bundle.insert(bundle.end(), events.begin(), events.end());
    std::sort(bundle.begin(), bundle.end());
    auto& all = out[b.cpu()];
    all.insert(all.end(), bundle.begin(), bundle.end());
  }
  return out;
}

std::vector<const perfetto::FtraceEvent*> FtraceEvents(const perfetto::Trace& trace) {
  std::vector<const perfetto::FtraceEvent*> out;
  for (const auto& p : trace.packet())
    if (p.has_ftrace_events())
      for (const auto& e : p.ftrace_events().event()) out.push_back(&e);
  return out;
}

std::vector<EventArgs> TrackEventArgs(const perfetto::Trace& trace, const std::string& event_name) {
  std::vector<EventArgs> out;
  for (const auto& p : trace.packet()) {
    if (!p.has_track_event() || p.track_event().name() != event_name) continue;
    EventArgs args;
    for (const auto& a : p.track_event().debug_annotations()) {
      std::string v;
      if (a.has_string_value()) v = a.string_value();
      else if (a.has_int_value()) v = std::to_string(a.int_value());
      else if (a.has_uint_value()) v = std::to_string(a.uint_value());
      else if (a.has_bool_value()) v = a.bool_value() ? "true" : "false";
      else if (a.has_double_value()) v = std::to_string(a.double_value());
      args[a.name()] = v;
    }
    out.push_back(std::move(args));
  }
  return out;
}

std::vector<std::pair<uint64_t, double>> CounterSamples(const perfetto::Trace& trace,
                                                        const std::string& track_name) {
  std::set<uint64_t> uuids;
  for (const auto& p : trace.packet())
    if (p.has_track_descriptor() && p.track_descriptor().name() == track_name)
      uuids.insert(p.track_descriptor().uuid());
  std::vector<std::pair<uint64_t, double>> out;
  std::map<uint32_t, uint64_t> default_track;  // by sequence (TrackEventDefaults)
  for (const auto& p : trace.packet()) {
    if (p.has_trace_packet_defaults())
      default_track[p.trusted_packet_sequence_id()] = p.trace_packet_defaults().track_event_defaults().track_uuid();
    if (!p.has_track_event()) continue;
    const auto& e = p.track_event();
    const uint64_t track = e.has_track_uuid() ? e.track_uuid() : default_track[p.trusted_packet_sequence_id()];
    if (e.type() != perfetto::TrackEvent::TYPE_COUNTER || !uuids.count(track)) continue;
    out.emplace_back(p.timestamp(), e.has_double_counter_value()
                                        ? e.double_counter_value()
                                        : static_cast<double>(e.counter_value()));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

std::vector<std::string> TrackNames(const perfetto::Trace& trace) {
  std::vector<std::string> out;
  for (const auto& p : trace.packet())
    if (p.has_track_descriptor()) out.push_back(p.track_descriptor().name());
  return out;
}

double IntegrateRate(const std::vector<std::pair<uint64_t, double>>& samples) {
  double total = 0;
  for (size_t i = 0; i + 1 < samples.size(); ++i)
    total += samples[i].second * static_cast<double>(samples[i + 1].first - samples[i].first) / 1e9;
  return total;
}

std::vector<CpuEvent> FtraceEventsWithCpu(const perfetto::Trace& trace) {
  std::vector<CpuEvent> out;
  for (const auto& p : trace.packet())
    if (p.has_ftrace_events())
      for (const auto& e : p.ftrace_events().event()) out.push_back({p.ftrace_events().cpu(), &e});
  return out;
}

}  // namespace gpunoise::testing
