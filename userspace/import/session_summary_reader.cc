#include "import/session_summary_reader.h"

#include <charconv>
#include <map>

#include "common/strings.h"

namespace gpunoise::import {
namespace {

uint64_t Unsigned(const model::TrackArg& a) {
  int64_t v = 0;
  return a.AsInt64(&v) && v > 0 ? static_cast<uint64_t>(v) : 0;
}

model::CollectorState StateFromName(std::string_view s) {
  if (s == "active") return model::CollectorState::kActive;
  if (s == "degraded") return model::CollectorState::kDegraded;
  if (s == "disabled") return model::CollectorState::kDisabled;
  return model::CollectorState::kNotRequested;
}

int64_t Signed(const model::TrackArg& a) {
  int64_t v = 0;
  return a.AsInt64(&v) ? v : 0;
}

// "a,b" as {"a", "b"}; "" (none) as {}.
std::vector<std::string> List(const std::string& text) {
  std::vector<std::string> out;
  for (auto part : Split(text, ','))
    if (!part.empty()) out.emplace_back(part);
  return out;
}

void ReadClockArg(std::string_view key, const model::TrackArg& a, model::ClockDiscipline* c) {
  c->read = true;
  if (key == "synced") c->synced = Unsigned(a) != 0;
  else if (key == "maxerror_us") c->maxerror_us = Signed(a);
  else if (key == "esterror_us") c->esterror_us = Signed(a);
  else if (key == "offset_ns") c->offset_ns = Signed(a);
  else if (key == "daemons") c->daemons = List(a.ToString());
  else if (key == "ptp_clocks") c->ptp_clocks = List(a.ToString());
}

}  // namespace

bool IsSessionSummary(const model::TrackEventRecord& event) {
  return event.type == model::TrackEventType::kInstant && event.name == kSessionEventName;
}

model::SessionInfo ParseSessionSummary(const model::TrackEventRecord& event) {
  model::SessionInfo s;
  std::map<std::string, model::CollectorReport> collectors;
  std::map<uint32_t, model::CpuLoss> cpus;
  for (const auto& a : event.args) {
    std::string_view name = a.name;
    if (name == "tool_version") s.tool_version = a.ToString();
    else if (name == "hostname") s.hostname = a.ToString();
    else if (name == "boot_id") s.boot_id = a.ToString();
    else if (name == "machine_name") s.machine_name = a.ToString();
    else if (StartsWith(name, "clock.start.")) ReadClockArg(name.substr(12), a, &s.clock_start);
    else if (StartsWith(name, "clock.end.")) ReadClockArg(name.substr(10), a, &s.clock_end);
    else if (name == "command_line") s.command_line = a.ToString();
    else if (name == "start_ts") s.start_ts = Unsigned(a);
    else if (name == "end_ts") s.end_ts = Unsigned(a);
    else if (name == "end_reason") s.end_reason = a.ToString();
    else if (name == "bpf_recursion_misses") s.bpf_recursion_misses = Unsigned(a);
    else if (name == "records_outside_cpus") s.records_outside_cpus = Unsigned(a);
    else if (name == "switch_chain_checked") s.switch_chain_checked = Unsigned(a) != 0;
    else if (name == "softirq.audited") s.softirqs_audited = Unsigned(a) != 0;
    else if (name == "softirq.netrx_sample_every") s.netrx_sample_every = static_cast<uint32_t>(Unsigned(a));
    else if (name == "softirq.netrx_untimed") s.netrx_untimed = Unsigned(a);
    else if (name == "drain.unread_before_loss_ns") s.unread_before_loss_ns = Unsigned(a);
    else if (name == "drain.unread_before_loss_from") s.unread_before_loss_from = Unsigned(a);
    else if (name == "drain.first_ring_loss_seen") s.first_ring_loss_seen = Unsigned(a);
    else if (name == "drain.yielded") s.drain_yielded = Unsigned(a) != 0;
    else if (name == "drain.idle_from") s.drain_idle_from = Unsigned(a);
    else if (name == "drain.raises") s.drain_raises = Unsigned(a);
    else if (name == "drain.raised_for_late") s.drain_raised_for_late = Unsigned(a);
    else if (name == "drain.raised_for_doorbell") s.drain_raised_for_doorbell = Unsigned(a);
    else if (name == "drain.raised_ns") s.drain_raised_ns = Unsigned(a);
    else if (StartsWith(name, "program.") || StartsWith(name, "map.")) {
      // program.COLLECTOR.PROG.missed, map.COLLECTOR.MAP.{full,overwritten,unpaired}
      bool program = StartsWith(name, "program.");
      std::string_view rest = name.substr(program ? 8 : 4);
      size_t first = rest.find('.'), last = rest.rfind('.');
      if (first == std::string_view::npos || last <= first) continue;
      std::string collector(rest.substr(0, first));
      std::string object(rest.substr(first + 1, last - first - 1));
      std::string_view key = rest.substr(last + 1);
      if (program && key == "missed") s.program_misses.push_back({collector, object, Unsigned(a)});
      if (!program)
        for (auto kind : {model::MapLossKind::kFull, model::MapLossKind::kOverwritten, model::MapLossKind::kUnpaired})
          if (key == model::MapLossKindName(kind)) s.map_losses.push_back({collector, object, Unsigned(a), kind});
    }
    else if (StartsWith(name, "collector.")) {
      std::string_view rest = name.substr(10);
      size_t dot = rest.rfind('.');
      if (dot == std::string_view::npos) continue;
      std::string cname(rest.substr(0, dot));
      std::string_view key = rest.substr(dot + 1);
      auto& c = collectors[cname];
      c.name = cname;
      if (key == "state") c.state = StateFromName(a.ToString());
      else if (key == "reason") c.reason = a.ToString();
      else if (key == "events") c.events = Unsigned(a);
      else if (key == "lost") c.lost = Unsigned(a);
      // List() holds the string: a range-for over Split(a.ToString()) would
      // read views into a temporary already destroyed (before C++23).
      else if (key == "missing_events") c.missing_events = List(a.ToString());
    } else if (StartsWith(name, "cpu.")) {
      std::string_view rest = name.substr(4);
      size_t dot = rest.find('.');
      if (dot == std::string_view::npos) continue;
      uint32_t cpu = 0;
      auto [p, ec] = std::from_chars(rest.data(), rest.data() + dot, cpu);
      if (ec != std::errc() || p != rest.data() + dot) continue;
      std::string_view key = rest.substr(dot + 1);
      auto& c = cpus[cpu];
      c.cpu = cpu;
      if (key == "events") c.events = Unsigned(a);
      else if (key == "lost") c.lost = Unsigned(a);
      else if (key == "unseen_switches") c.unseen_switches = Unsigned(a);
      else if (key == "bytes") c.bytes = Unsigned(a);
      else if (key == "decode_errors") c.decode_errors = Unsigned(a);
      else if (key == "unwritten") c.unwritten = Unsigned(a);
      else if (StartsWith(key, "lost_kind.")) c.lost_by_kind[std::string(key.substr(10))] = Unsigned(a);
      else if (StartsWith(key, "unwritten_kind.")) c.unwritten_by_kind[std::string(key.substr(15))] = Unsigned(a);
      else if (StartsWith(key, "unreported_softirqs."))
        if (std::optional<uint32_t> vec = model::SoftirqVecNamed(key.substr(20)))
          c.unreported_softirqs[*vec] = Unsigned(a);
    }
  }
  for (auto& [_, c] : collectors) s.collectors.push_back(std::move(c));
  for (auto& [_, c] : cpus) s.cpus.push_back(c);
  return s;
}

}  // namespace gpunoise::import
