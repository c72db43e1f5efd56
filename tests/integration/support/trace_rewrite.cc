#include "integration/support/trace_rewrite.h"

#include <fstream>
#include <sstream>

#include "export/perfetto/expand_compressed_packets.h"
#include "export/perfetto/protos/perfetto_trace_subset.pb.h"

namespace gpunoise::testing {
namespace {

using perfetto::Trace;
using perfetto::TracePacket;

uint64_t Shift(uint64_t ts, int64_t by) { return static_cast<uint64_t>(static_cast<int64_t>(ts) + by); }

void RewritePacket(TracePacket* p, const OtherMachine& m) {
  if (p->has_timestamp()) p->set_timestamp(Shift(p->timestamp(), m.boottime_shift_ns));
  if (p->has_clock_snapshot()) {
    for (auto& c : *p->mutable_clock_snapshot()->mutable_clocks()) {
      bool realtime = c.clock_id() == perfetto::BUILTIN_CLOCK_REALTIME ||
                      c.clock_id() == perfetto::BUILTIN_CLOCK_REALTIME_COARSE;
      c.set_timestamp(Shift(c.timestamp(), realtime ? m.realtime_error_ns : m.boottime_shift_ns));
    }
  }
  if (p->has_ftrace_events()) {
    auto* bundle = p->mutable_ftrace_events();
    for (auto& e : *bundle->mutable_event())
      if (e.has_timestamp()) e.set_timestamp(Shift(e.timestamp(), m.boottime_shift_ns));
    // compact_sched timestamps are deltas: only the first is absolute.
    if (bundle->has_compact_sched()) {
      auto* cs = bundle->mutable_compact_sched();
      if (cs->switch_timestamp_size())
        cs->set_switch_timestamp(0, Shift(cs->switch_timestamp(0), m.boottime_shift_ns));
      if (cs->waking_timestamp_size())
        cs->set_waking_timestamp(0, Shift(cs->waking_timestamp(0), m.boottime_shift_ns));
    }
    if (bundle->has_previous_bundle_end_timestamp())
      bundle->set_previous_bundle_end_timestamp(
          Shift(bundle->previous_bundle_end_timestamp(), m.boottime_shift_ns));
    if (bundle->has_last_read_event_timestamp())
      bundle->set_last_read_event_timestamp(Shift(bundle->last_read_event_timestamp(), m.boottime_shift_ns));
  }
  if (p->has_system_info()) p->mutable_system_info()->set_machine_name(m.machine_name);
  if (p->has_track_event()) {
    for (auto& a : *p->mutable_track_event()->mutable_debug_annotations()) {
      if (a.name() == "boot_id") a.set_string_value(m.boot_id);
      if (a.name() == "machine_name" || a.name() == "hostname") a.set_string_value(m.machine_name);
    }
  }
}

}  // namespace

Status RewriteAsOtherMachine(const std::string& in, const std::string& out, const OtherMachine& m) {
  std::ifstream file(in, std::ios::binary);
  std::stringstream bytes;
  bytes << file.rdbuf();
  Trace trace;
  if (!trace.ParseFromString(bytes.str())) return MakeError("{} is not a trace", in);
  auto expanded = perfetto::ExpandCompressedPackets(&trace);
  if (!expanded.ok()) return expanded.error();
  Trace rewritten;
  for (auto& p : *trace.mutable_packet()) {
    if (m.drop_clock_snapshots && p.has_clock_snapshot()) continue;
    RewritePacket(&p, m);
    *rewritten.add_packet() = std::move(p);
  }
  trace = std::move(rewritten);
  std::ofstream(out, std::ios::binary) << trace.SerializeAsString();
  return OkStatus();
}

}  // namespace gpunoise::testing
