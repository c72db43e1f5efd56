#include "record/prepare_collectors.h"

#include <algorithm>
#include <string>

#include "collect/irq_collector.h"
#include "collect/proc_scanner.h"
#include "collect/record_decoder.h"
#include "collect/ring_transport.h"
#include "collect/sched_collector.h"
#include "common/cpu_list.h"
#include "common/strings.h"
#include "model/redact.h"
#include "record/kernel_log_recording.h"
#include "record/record_intake.h"
#include "record/record_session.h"

namespace gpunoise::record {

uint64_t DefaultRingBytesPerCpu(size_t ncpus) {
  uint64_t per_cpu = 4ull << 20;
  const uint64_t budget = 256ull << 20;
  while (per_cpu > (256u << 10) && per_cpu * ncpus > budget) per_cpu >>= 1;
  return per_cpu;
}

Result<RecordPlan> PlanRecord(const RecordOptions& options, std::span<const int> online) {
  RecordPlan plan;
  plan.cpus = options.filters.cpus.empty() ? std::vector<int>(online.begin(), online.end()) : options.filters.cpus;
  for (int cpu : plan.cpus)
    if (std::find(online.begin(), online.end(), cpu) == online.end())
      return MakeError("CPU {} is not online (online: {})", cpu,
                       FormatCpuList(std::vector<int>(online.begin(), online.end())));
  plan.ring_bytes_per_cpu =
      options.ring_bytes_per_cpu ? options.ring_bytes_per_cpu : DefaultRingBytesPerCpu(plan.cpus.size());
  auto wants = [&](std::string_view group) { return options.event_groups.count(std::string(group)) > 0; };
  plan.sched = wants("sched");
  plan.hardirq = wants("irq");
  plan.softirq = wants("softirq");
  plan.net = wants("net") || wants("net-packets");
  plan.net_packets = wants("net-packets");
  plan.node = wants("node");
  plan.batch_sched = options.batching != BatchMode::kNone;
  plan.batch_irq = options.batching == BatchMode::kAll;
  plan.check_switch_chain = options.filters.pids.empty() && !options.filters.cgroup_id;
  return plan;
}

CollectorSet BuildCollectors(const RecordPlan& plan, const RecordOptions& options) {
  CollectorSet set;
  if (plan.sched) set.collectors.push_back(std::make_unique<collect::SchedCollector>(plan.batch_sched));
  if (plan.hardirq || plan.softirq) {
    auto irq = std::make_unique<collect::IrqCollector>(plan.hardirq, plan.softirq, plan.batch_irq,
                                                       options.netrx_sample_every);
    set.irq = irq.get();
    set.collectors.push_back(std::move(irq));
  }
  if (plan.net) {
    collect::NetOptions net_options = options.net;
    net_options.packets = plan.net_packets;
    // Per-packet records come from the programs that count per packet.
    net_options.device_counters = net_options.device_counters || plan.net_packets;
    set.net = std::make_unique<NetRecording>(net_options, options.net_interval_ms * 1000000,
                                             options.nic_interval_ms * 1000000, set.collectors);
  }
  if (plan.node) set.node = std::make_unique<NodeRecording>(options.net_interval_ms * 1000000, set.collectors);
  if (options.console) options.console->AddCollector(set.collectors);
  return set;
}

model::ProcessSnapshot ScanProcessSnapshot(const RecordOptions& options) {
  model::ProcessSnapshot snapshot = collect::ScanProcesses("/proc", options.kubelet_log_dir);
  if (options.redact) model::RedactCommandLines(&snapshot);
  return snapshot;
}

void AssignRecordOwners(std::span<const std::string_view> names, RecordIntake& intake) {
  for (size_t i = 0; i < names.size(); ++i)
    for (int kind = 0; kind < GN_REC_KIND_MAX; ++kind)
      if (collect::CollectorOfKind(static_cast<uint16_t>(kind)) == names[i])
        intake.SetOwner(static_cast<uint16_t>(kind), i);
}

Status CheckSomeCollectorStarted(std::span<const std::string_view> names,
                                 std::span<const model::CollectorReport> reports) {
  for (const model::CollectorReport& r : reports)
    if (r.state != model::CollectorState::kDisabled) return OkStatus();
  std::string why;
  for (size_t i = 0; i < reports.size() && i < names.size(); ++i)
    why += fmt::format("{}: {}; ", names[i], reports[i].reason);
  return MakeError("no collector could start ({})", Trim(why));
}

Result<std::vector<collect::BatchFlusher>> AttachCollectors(CollectorSet& set, const collect::CollectorContext& context,
                                                            collect::RingTransport& transport, RecordIntake& intake,
                                                            std::span<const int> cpus) {
  // Collectors attach one link at a time behind a closed gate, so every
  // collector's data starts at the same instant: start_ts, when it opens.
  GN_RETURN_IF_ERROR(transport.Pause());
  collect::StartCollectors(set.collectors, context);
  std::vector<std::string_view> names;
  std::vector<model::CollectorReport> reports;
  for (const auto& c : set.collectors) {
    names.push_back(c->name());
    reports.push_back(c->report());
  }
  AssignRecordOwners(names, intake);
  // Batching collectors' flush programs, run on every CPU before each drain.
  std::vector<collect::BatchFlusher> flushers;
  uint32_t batch_streams = 0;
  for (auto& c : set.collectors)
    if (int fd = c->batch_flush_fd(); fd >= 0) {
      flushers.emplace_back(fd, std::vector<int>(cpus.begin(), cpus.end()), c->batch_stream(), c->batch_words());
      batch_streams |= 1u << c->batch_stream();
    }
  intake.set_batching(batch_streams);
  GN_RETURN_IF_ERROR(CheckSomeCollectorStarted(names, reports));
  return flushers;
}

}  // namespace gpunoise::record
