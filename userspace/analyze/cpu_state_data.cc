#include "analyze/cpu_state_data.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace gpunoise::analyze {
namespace {

int64_t IntArg(const MetaInstant& e, std::string_view name, int64_t fallback = 0) {
  int64_t v = 0;
  const model::TrackArg* a = e.Find(name);
  return a && a->AsInt64(&v) ? v : fallback;
}

}  // namespace

const IdleSpan* CpuStateData::IdleAt(uint32_t cpu, uint64_t ts) const {
  auto it = idle.find(cpu);
  if (it == idle.end()) return nullptr;
  const auto& spans = it->second;
  auto after = std::upper_bound(spans.begin(), spans.end(), ts, [](uint64_t v, const IdleSpan& s) { return v < s.start; });
  if (after == spans.begin()) return nullptr;
  const IdleSpan& s = *(after - 1);
  return ts < s.end ? &s : nullptr;
}

std::string CpuStateData::StateName(uint32_t cpu, int32_t state) const {
  auto it = idle_states.find({cpu, state});
  if (it == idle_states.end() || it->second.name.empty()) return fmt::format("state {}", state);
  return it->second.name;
}

CpuStateData ReadCpuStateData(const Timeline& t) {
  CpuStateData d;
  for (const MetaInstant& e : t.node_metadata) {
    if (e.name == "cpustate") {
      d.recorded = true;
      d.idle_recorded = IntArg(e, "cpu_idle") != 0;
      d.frequency_recorded = IntArg(e, "cpu_frequency") != 0;
      d.cpufreq_sysfs = IntArg(e, "cpufreq_sysfs") != 0;
      d.numa_tracepoints = IntArg(e, "numa_tracepoints") != 0;
      d.migrate_tracepoint = IntArg(e, "mm_migrate_pages") != 0;
      d.numa_nodes = IntArg(e, "numa_nodes");
      d.numa_balancing = IntArg(e, "numa_balancing", -1);
      d.smi_recorded = IntArg(e, "smi") != 0;
      if (const model::TrackArg* a = e.Find("smi_unavailable"); a && a->type == model::TrackArg::Type::kString)
        d.smi_unavailable = a->string_value;
    } else if (e.name == "cpu idle state") {
      IdleStateName& s = d.idle_states[{static_cast<uint32_t>(IntArg(e, "cpu")), static_cast<int32_t>(IntArg(e, "state"))}];
      if (const model::TrackArg* a = e.Find("name"); a && a->type == model::TrackArg::Type::kString) s.name = a->string_value;
      s.exit_latency_us = static_cast<uint64_t>(std::max<int64_t>(0, IntArg(e, "exit_latency_us")));
    } else if (e.name == "cpu frequency limits") {
      int64_t max = IntArg(e, "max_khz");
      if (max > 0) d.max_khz[static_cast<uint32_t>(IntArg(e, "cpu"))] = static_cast<uint32_t>(max);
    } else if (e.name == "smi count") {
      d.smi[static_cast<uint32_t>(IntArg(e, "cpu"))] = {static_cast<uint64_t>(IntArg(e, "start")),
                                                        static_cast<uint64_t>(IntArg(e, "end"))};
    } else if (auto kind = model::NumaEventKindFromName(e.name)) {
      model::NumaEvent n;
      n.ts = e.ts;
      n.kind = *kind;
      n.tid = static_cast<int32_t>(IntArg(e, "tid"));
      n.other_tid = static_cast<int32_t>(IntArg(e, "other_tid"));
      n.cpu = static_cast<uint32_t>(IntArg(e, "cpu"));
      n.src_cpu = static_cast<int32_t>(IntArg(e, "src_cpu", -1));
      n.dst_cpu = static_cast<int32_t>(IntArg(e, "dst_cpu", -1));
      n.src_nid = static_cast<int32_t>(IntArg(e, "src_nid", -1));
      n.dst_nid = static_cast<int32_t>(IntArg(e, "dst_nid", -1));
      n.succeeded = static_cast<uint64_t>(std::max<int64_t>(0, IntArg(e, "succeeded")));
      n.failed = static_cast<uint64_t>(std::max<int64_t>(0, IntArg(e, "failed")));
      n.reason = static_cast<int32_t>(IntArg(e, "reason", -1));
      d.numa.push_back(n);
    }
  }
  std::stable_sort(d.numa.begin(), d.numa.end(), [](const auto& a, const auto& b) { return a.ts < b.ts; });
  for (const auto& [uuid, samples] : t.tracks.counters) {
    const model::TrackIdentity* id = t.tracks.Identity(uuid);
    if (!id || id->kind != model::TrackKind::kNodeCounter || id->cpu < 0 ||
        static_cast<uint32_t>(id->cpu) >= model::kMaxTraceCpus)
      continue;
    const uint32_t cpu = static_cast<uint32_t>(id->cpu);
    if (id->node_metric == model::NodeMetric::kCpuIdleState) {
      // The state from an entry's sample to the next sample (the exit's -1).
      // A damaged or hostile trace may hold any double: only state
      // indices cpuidle could have (CPUIDLE_STATE_MAX is 10) make a span.
      std::vector<IdleSpan>& spans = d.idle[cpu];
      for (size_t i = 0; i + 1 < samples.size(); ++i)
        if (samples[i].value >= 0 && samples[i].value < 1024 && samples[i + 1].ts >= samples[i].ts)
          spans.push_back({samples[i].ts, samples[i + 1].ts, static_cast<int32_t>(samples[i].value)});
      // Two tracks of one CPU (merged traces) interleave: keep them sorted.
      std::sort(spans.begin(), spans.end(), [](const IdleSpan& a, const IdleSpan& b) { return a.start < b.start; });
    } else if (id->node_metric == model::NodeMetric::kCpuFrequency) {
      std::vector<CounterSample>& f = d.frequency[cpu];
      for (const CounterSample& c : samples)
        if (std::isfinite(c.value) && c.value > 0 && c.value < 1e9) f.push_back(c);  // kHz: under 1 THz
      std::sort(f.begin(), f.end(), [](const CounterSample& a, const CounterSample& b) { return a.ts < b.ts; });
      if (f.empty()) d.frequency.erase(cpu);
    }
  }
  return d;
}

std::vector<NotMeasurable> CpuStateNotMeasurable(const CpuStateData& d) {
  std::vector<NotMeasurable> out;
  if (!d.recorded) return out;
  if (!d.idle_recorded)
    out.push_back({"idle_exit", "power:cpu_idle was not recorded (the tracepoint is missing, or idle periods were "
                                "left out with --events)"});
  if (!d.frequency_recorded)
    out.push_back({"cpu_frequency", "the power:cpu_frequency tracepoint is missing on this kernel"});
  else if (!d.cpufreq_sysfs && d.frequency.empty())
    out.push_back({"cpu_frequency", "no cpufreq driver on this node (no /sys/devices/system/cpu/cpu*/cpufreq): "
                                    "the kernel reports no frequency changes (typical of a VM)"});
  if (!d.numa_tracepoints)
    out.push_back({"numa_balancing", "the sched:sched_move_numa/sched_swap_numa tracepoints are missing on this "
                                     "kernel (CONFIG_NUMA_BALANCING off)"});
  else if (d.numa_nodes <= 1)
    out.push_back({"numa_balancing", fmt::format("{} NUMA node{}: the kernel balances nothing between nodes",
                                                 d.numa_nodes, d.numa_nodes == 1 ? "" : "s")});
  else if (d.numa_balancing == 0)
    out.push_back({"numa_balancing", "kernel.numa_balancing is 0: automatic NUMA balancing is off"});
  if (!d.smi_recorded)
    out.push_back({"smi", d.smi_unavailable.empty() ? "MSR_SMI_COUNT could not be read" : d.smi_unavailable});
  return out;
}

}  // namespace gpunoise::analyze
