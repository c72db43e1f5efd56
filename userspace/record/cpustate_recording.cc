#include "record/cpustate_recording.h"

#include <fmt/format.h>

#include "collect/cpustate_collector.h"
#include "common/cpu_list.h"
#include "common/files.h"
#include "common/strings.h"
#include "export/perfetto/trace_sink.h"

namespace gpunoise::record {

CpustateRecording::CpustateRecording(bool idle, std::vector<std::unique_ptr<collect::Collector>>& collectors) {
  auto c = std::make_unique<collect::CpustateCollector>(idle);
  collector_ = c.get();
  collectors.push_back(std::move(c));
}

Status CpustateRecording::Begin(perfetto::TraceSink& sink, uint64_t ts) {
  cpus_ = OnlineCpus();
  auto& w = sink.node_tracks();
  for (const collect::IdleStateInfo& s : collect::ReadIdleStates("/sys/devices/system/cpu", cpus_))
    GN_RETURN_IF_ERROR(w.WriteNodeInstant(ts, perfetto::kIdleStateEventName,
                                          {{"cpu", s.cpu},
                                           {"state", s.index},
                                           {"name", 0, s.name},
                                           {"exit_latency_us", static_cast<int64_t>(s.exit_latency_us)}}));
  for (const collect::FrequencyInfo& f : collect::ReadFrequencyInfo("/sys/devices/system/cpu", cpus_)) {
    cpufreq_ = true;
    GN_RETURN_IF_ERROR(w.WriteNodeInstant(ts, perfetto::kFrequencyLimitsEventName,
                                          {{"cpu", f.cpu}, {"min_khz", f.min_khz}, {"max_khz", f.max_khz}}));
    // The frequency before the first change the tracepoint reports.
    if (f.cur_khz) GN_RETURN_IF_ERROR(w.WriteFrequency(ts, f.cpu, f.cur_khz));
  }
  numa_nodes_ = collect::CountNumaNodes("/sys/devices/system/node");
  if (auto text = ReadFileToString("/proc/sys/kernel/numa_balancing"); text.ok())
    if (auto v = ParseInt64(Trim(*text))) numa_balancing_ = *v;
  smi_ = collect::SmiCounters::Open("/dev/cpu", cpus_);
  smi_start_ = smi_.Read();
  return OkStatus();
}

Result<uint64_t> CpustateRecording::Drain(perfetto::TraceSink& sink) {
  events_.clear();
  const uint64_t most = collector_->Drain(&events_);
  auto& w = sink.node_tracks();
  for (const model::CpuStateEvent& e : events_) {
    if (e.kind == model::CpuStateKind::kIdle) {
      ++idle_count_;
      GN_RETURN_IF_ERROR(w.WriteIdle(e));
    } else {
      ++frequency_count_;
      GN_RETURN_IF_ERROR(w.WriteFrequency(e.begin, e.cpu, e.value));
    }
  }
  numa_.clear();
  collector_->DrainNuma(&numa_);
  for (const model::NumaEvent& n : numa_) {
    ++numa_count_;
    GN_RETURN_IF_ERROR(w.WriteNuma(n));
  }
  return most;
}

uint64_t CpustateRecording::lost() const { return collector_ ? collector_->lost() : 0; }

Status CpustateRecording::Finish(perfetto::TraceSink& sink, uint64_t ts) {
  if (auto drained = Drain(sink); !drained.ok()) return drained.error();
  auto& w = sink.node_tracks();
  const std::map<int, uint64_t> end = smi_.Read();
  for (const auto& [cpu, count] : end) {
    auto start = smi_start_.find(cpu);
    if (start == smi_start_.end()) continue;
    smi_read_ = true;
    // The count is bits 31:0 of the register (Intel SDM, MSR_SMI_COUNT).
    smi_total_ += (count - start->second) & 0xffffffffull;
    GN_RETURN_IF_ERROR(w.WriteNodeInstant(ts, perfetto::kSmiCountEventName,
                                          {{"cpu", cpu},
                                           {"start", static_cast<int64_t>(start->second & 0xffffffffull)},
                                           {"end", static_cast<int64_t>(count & 0xffffffffull)}}));
  }
  const bool numa_tp = collector_->Attached("sched_move_numa") && collector_->Attached("sched_swap_numa");
  std::string smi_why = smi_read_ ? "" : smi_.why_not().empty() ? "the counters could not be read at the end"
                                                                : smi_.why_not();
  return w.WriteNodeInstant(ts, perfetto::kCpuStateInfoEventName,
                            {{"cpu_idle", collector_->Attached("cpu_idle") ? 1 : 0},
                             {"cpu_frequency", collector_->Attached("cpu_frequency") ? 1 : 0},
                             {"cpufreq_sysfs", cpufreq_ ? 1 : 0},
                             {"numa_tracepoints", numa_tp ? 1 : 0},
                             {"mm_migrate_pages", collector_->Attached("mm_migrate_pages") ? 1 : 0},
                             {"numa_nodes", numa_nodes_},
                             {"numa_balancing", numa_balancing_},
                             {"smi", smi_read_ ? 1 : 0},
                             {"smi_unavailable", 0, smi_why}});
}

void CpustateRecording::FillReport(std::vector<model::CollectorReport>& reports) const {
  for (auto& r : reports)
    if (r.name == collector_->name()) {
      r.events = idle_count_ + frequency_count_ + numa_count_;
      r.lost = collector_->lost();
    }
}

std::string CpustateRecording::Summary() const {
  std::string smi = smi_read_ ? fmt::format("{} SMIs", smi_total_)
                              : fmt::format("SMIs not measurable ({})", smi_.why_not().empty() ? "not read" : smi_.why_not());
  return fmt::format("cpustate: {} idle periods, {} frequency changes, {} NUMA balancing events (moves, swaps, "
                     "page migrations), {} lost, {} unpaired; {}",
                     idle_count_, frequency_count_, numa_count_, collector_->lost(), collector_->unpaired(), smi);
}

}  // namespace gpunoise::record
