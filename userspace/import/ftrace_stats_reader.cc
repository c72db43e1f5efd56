#include "import/ftrace_stats_reader.h"

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "export/perfetto/protos/perfetto_fields.h"

namespace gpunoise::import {
namespace {


bool Malformed(const ProtoReader& r, const char* what, PacketError* error) {
  *error = {r.error_offset(), what};
  return false;
}

// A counter that went down (the ring was reset between the phases) has no
// meaningful difference; the END value is what the kernel counted since.
uint64_t Delta(uint64_t end, uint64_t start) { return end >= start ? end - start : end; }

void AddOnce(std::vector<std::string>* list, std::string_view s) {
  for (const auto& have : *list)
    if (have == s) return;
  list->emplace_back(s);
}

}  // namespace

bool FtraceStatsReader::Decode(const ProtoField& field, model::TraceSink& sink, PacketError* error) {
  uint64_t phase = 0;
  // By CPU: a CPU listed twice in one phase (a doubled or corrupt stats
  // packet) counts once, with its later values, as the trace processor's
  // stats table keeps it, and its loss is not summed twice.
  std::map<uint32_t, FtraceCpuCounters> cpus;
  // Setup errors and parse errors stand for the whole trace, whichever phase
  // carries them (traced_probes writes setup errors at the START).
  model::FtraceStatsSummary& summary = errors_;
  int64_t kprobe_misses = 0;
  bool has_kprobe = false;
  ProtoReader r(field);
  ProtoField e;
  while (r.Next(&e)) {
    bool bytes = e.type == WireType::kLengthDelimited;
    switch (e.id) {
      case pf::FtraceStats::kPhase: phase = e.int_value; break;
      case pf::FtraceStats::kCpuStats: {
        if (!bytes) break;
        uint32_t cpu = 0;
        FtraceCpuCounters c;
        ProtoReader cr(e);
        ProtoField v;
        while (cr.Next(&v)) {
          switch (v.id) {
            case pf::FtraceCpuStats::kCpu: cpu = v.as_uint32(); break;
            case pf::FtraceCpuStats::kEntries: c.entries = v.int_value; break;
            case pf::FtraceCpuStats::kOverrun: c.overrun = v.int_value; break;
            case pf::FtraceCpuStats::kCommitOverrun: c.commit_overrun = v.int_value; break;
            case pf::FtraceCpuStats::kBytesRead: c.bytes = v.int_value; break;
            case pf::FtraceCpuStats::kOldestEventTs: c.oldest_event_ts = v.as_double(); break;
            case pf::FtraceCpuStats::kNowTs: c.now_ts = v.as_double(); break;
            case pf::FtraceCpuStats::kDroppedEvents: c.dropped_events = v.int_value; break;
            case pf::FtraceCpuStats::kReadEvents: c.read_events = v.int_value; break;
            default: break;
          }
        }
        if (cr.error()) return Malformed(cr, "FtraceCpuStats is malformed", error);
        cpus[cpu] = c;
        break;
      }
      case pf::FtraceStats::kFailedFtraceEvents:
        if (bytes) AddOnce(&summary.failed_events, e.as_string());
        break;
      case pf::FtraceStats::kUnknownFtraceEvents:
        if (bytes) AddOnce(&summary.unknown_events, e.as_string());
        break;
      case pf::FtraceStats::kAtraceErrors:
        if (bytes) summary.atrace_errors = std::string(e.as_string());
        break;
      case pf::FtraceStats::kExclusiveFeatureError:
        if (bytes) summary.exclusive_feature_error = std::string(e.as_string());
        break;
      case pf::FtraceStats::kPreserveFtraceBuffer: summary.preserve_ftrace_buffer |= e.as_bool(); break;
      case pf::FtraceStats::kFtraceParseErrors: {
        // A repeated enum: one varint each, or packed by a newer writer.
        if (!bytes) {
          summary.parse_errors.push_back(e.as_uint32());
          break;
        }
        PackedVarints codes(e);
        uint64_t code;
        while (codes.Next(&code)) summary.parse_errors.push_back(static_cast<uint32_t>(code));
        if (codes.error()) {
          *error = {0, "FtraceStats.ftrace_parse_errors is malformed"};
          return false;
        }
        break;
      }
      case pf::FtraceStats::kKprobeStats: {
        if (!bytes) break;
        has_kprobe = true;
        ProtoReader kr(e);
        ProtoField v;
        while (kr.Next(&v))
          if (v.id == pf::FtraceKprobeStats::kMisses) kprobe_misses = v.as_int64();
        if (kr.error()) return Malformed(kr, "FtraceKprobeStats is malformed", error);
        break;
      }
      default: break;
    }
  }
  if (r.error()) return Malformed(r, "FtraceStats is malformed", error);
  // Each phase lists the unique parse errors so far: keep each code once.
  std::sort(summary.parse_errors.begin(), summary.parse_errors.end());
  summary.parse_errors.erase(std::unique(summary.parse_errors.begin(), summary.parse_errors.end()),
                             summary.parse_errors.end());

  if (phase == pf::FtraceStats::START_OF_TRACE) {
    for (const auto& [cpu, c] : cpus) start_[cpu] = c;
    if (has_kprobe) {
      kprobe_misses_start_ = kprobe_misses;
      has_kprobe_start_ = true;
    }
    return true;
  }
  // An unknown phase says nothing about when it was taken; the trace
  // processor ignores it too.
  if (phase != pf::FtraceStats::END_OF_TRACE) return true;
  summary.cpus.clear();
  for (const auto& [cpu, c] : cpus) {
    model::FtraceCpuDelta d;
    d.cpu = cpu;
    FtraceCpuCounters s;
    if (auto it = start_.find(cpu); it != start_.end()) {
      s = it->second;
      d.has_start = true;
    }
    d.overrun = Delta(c.overrun, s.overrun);
    d.dropped_events = Delta(c.dropped_events, s.dropped_events);
    d.commit_overrun = Delta(c.commit_overrun, s.commit_overrun);
    d.read_events = Delta(c.read_events, s.read_events);
    d.entries = static_cast<int64_t>(c.entries) - static_cast<int64_t>(s.entries);
    d.bytes = static_cast<int64_t>(c.bytes) - static_cast<int64_t>(s.bytes);
    summary.cpus.push_back(d);
  }
  if (has_kprobe) {
    summary.has_kprobe_stats = true;
    summary.kprobe_misses = kprobe_misses - (has_kprobe_start_ ? kprobe_misses_start_ : 0);
  }
  sink.OnFtraceStats(summary);
  return true;
}

}  // namespace gpunoise::import
