#include "record/node_recording.h"

#include <algorithm>
#include <time.h>
#include <unistd.h>

#include <fmt/format.h>

#include "common/clock.h"
#include "collect/cpustate_collector.h"
#include "collect/irq_scanner.h"
#include "collect/kernel_health.h"
#include "collect/kwork_collector.h"
#include "collect/memstall_collector.h"
#include "collect/numa_topology.h"
#include "common/files.h"
#include "common/strings.h"
#include "export/perfetto/trace_sink.h"

namespace gpunoise::record {
namespace {

// Quotas appear (a pod starts) and processes move: rescanned this often.
constexpr uint64_t kRescanNs = 1'000'000'000;
constexpr uint64_t kRescanCpuShare = 100;  // at most 1/100 of a CPU
constexpr uint64_t kProcStatCpuShare = 1000;  // at most 1/1000 of a CPU

uint64_t ThreadCpuNs() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(t.tv_nsec);
}

// The NIC IRQs' CPUs now (numa_locality compares them with the NIC's node):
// written at both ends, so a change during the recording (irqbalance) shows.
Status WriteNicIrqCpus(perfetto::TraceSink& sink, uint64_t ts, std::string_view phase) {
  model::IrqTable irqs = collect::ScanIrqs();
  collect::MapNicIrqs(&irqs);
  for (const model::NicIrqAffinity& a : collect::NicIrqAffinities(irqs))
    GN_RETURN_IF_ERROR(sink.node_tracks().WriteNicIrqCpus(ts, a, phase));
  return OkStatus();
}

}  // namespace

uint64_t NextRescanGapNs(uint64_t scan_cpu_ns) { return std::max(kRescanNs, scan_cpu_ns * kRescanCpuShare); }

uint64_t NextProcStatGapNs(uint64_t interval_ns, uint64_t read_cpu_ns) {
  return std::max(interval_ns, read_cpu_ns * kProcStatCpuShare);
}

uint64_t NextLogReadGapNs(uint64_t elapsed_ns, uint64_t most, uint64_t capacity, uint64_t shortest,
                          uint64_t longest) {
  longest = std::max(shortest, longest);
  if (!most) return longest;
  const double gap = static_cast<double>(elapsed_ns) * static_cast<double>(capacity) / 4.0 / static_cast<double>(most);
  return std::clamp(static_cast<uint64_t>(std::min(gap, 1e18)), shortest, longest);
}

NodeRecording::NodeRecording(uint64_t interval_ns, std::vector<std::unique_ptr<collect::Collector>>& collectors,
                             bool idle)
    : interval_ns_(std::max<uint64_t>(interval_ns, 1000000)) {
  auto memstall = std::make_unique<collect::MemstallCollector>();
  memstall_ = memstall.get();
  collectors.push_back(std::move(memstall));
  auto kwork = std::make_unique<collect::KworkCollector>();
  kwork_ = kwork.get();
  collectors.push_back(std::move(kwork));
  cpustate_ = std::make_unique<CpustateRecording>(idle, collectors);
  long hz = ::sysconf(_SC_CLK_TCK);
  ns_per_tick_ = hz > 0 ? 1'000'000'000ull / static_cast<uint64_t>(hz) : 10'000'000ull;
}

model::NodeSnapshot NodeRecording::Read(bool all) {
  model::NodeSnapshot s;
  s.ts = BoottimeNs();
  if (all || s.ts >= next_proc_stat_) {
    const uint64_t cpu_before = ThreadCpuNs();
    if (auto stat = proc_stat_.Read(); stat.ok()) s.steal_ns = collect::ParseProcStatSteal(*stat, ns_per_tick_);
    next_proc_stat_ = s.ts + NextProcStatGapNs(interval_ns_, ThreadCpuNs() - cpu_before);
  } else {
    s.steal_ns = previous_.steal_ns;
    s.steal_ts = previous_.steal_ts ? previous_.steal_ts : previous_.ts;
  }
  for (const auto& q : quotas_) {
    auto text = ReadFileToString(q.dir + "/cpu.stat");
    if (!text.ok()) continue;  // removed meanwhile
    if (auto st = collect::ParseCpuStat(*text)) s.cgroups[q.path] = *st;
  }
  s.kernel_health = kernel_health_.Read();  // five small sysfs reads
  return s;
}

namespace {

// Quota cgroups, the processes in them, with `first_stats` their counters
// (the baseline of a recording), and every thread's affinity.
NodeRecording::NodeScan ScanNode(const collect::CpuCgroupMounts& mounts, uint64_t ts, bool first_stats);

}  // namespace

Status NodeRecording::Rescan(perfetto::TraceSink& sink, uint64_t ts, bool wait) {
  if (wait) GN_RETURN_IF_ERROR(CollectScan(sink, true));
  if (!scan_) {
    const bool first = !scanned_once_;
    scanned_once_ = true;
    scan_.emplace([mounts = mounts_, ts, first] { return ScanNode(mounts, ts, first); });
    next_rescan_ = UINT64_MAX;  // due once this one is done
  }
  return wait ? CollectScan(sink, true) : OkStatus();
}

void NodeRecording::AdoptScan(NodeScan& scan) {
  if (scan.adopted) return;
  scan.adopted = true;
  // A cgroup found by a later scan appeared during the recording: it counts
  // from zero (WriteSample).
  for (const auto& [path, stat] : scan.first_stats) baseline_.cgroups.emplace(path, stat);
  quotas_ = scan.quotas;
}

Status NodeRecording::CollectScan(perfetto::TraceSink& sink, bool wait) {
  if (!scan_) return OkStatus();
  NodeScan* scan = wait ? &scan_->Get() : scan_->TryGet();
  if (!scan) return OkStatus();
  AdoptScan(*scan);
  for (size_t i = 0; i < scan->quotas.size(); ++i) {
    const collect::QuotaCgroup& q = scan->quotas[i];
    GN_RETURN_IF_ERROR(sink.node_tracks().WriteQuota(scan->ts, {q.path, q.version, q.quota_us, q.period_us}));
    for (int32_t pid : scan->quota_processes[i])
      GN_RETURN_IF_ERROR(sink.node_tracks().WriteQuotaProcess(scan->ts, q.path, pid));
  }
  for (const auto& [tid, cpus] : scan->affinities)
    GN_RETURN_IF_ERROR(sink.node_tracks().WriteAffinity(scan->ts, tid, cpus));
  // Affinity changes are rare; a scan a second catches those of threads
  // that live longer than that, or less often where the scan is dear.
  next_rescan_ = scan->ts + NextRescanGapNs(scan->cpu_ns);
  scan_.reset();
  return OkStatus();
}

namespace {

NodeRecording::NodeScan ScanNode(const collect::CpuCgroupMounts& mounts, uint64_t ts, bool first_stats) {
  NodeRecording::NodeScan scan;
  scan.ts = ts;
  const uint64_t cpu_before = ThreadCpuNs();
  if (!mounts.v1_cpu.empty()) scan.quotas = collect::FindQuotaCgroups(mounts.v1_cpu, 1);
  if (mounts.v2_has_cpu) {
    auto v2 = collect::FindQuotaCgroups(mounts.v2, 2);
    scan.quotas.insert(scan.quotas.end(), v2.begin(), v2.end());
  }
  for (const auto& q : scan.quotas) {
    scan.quota_processes.push_back(collect::CgroupProcessesBelow(q.dir));
    if (!first_stats) continue;
    auto text = ReadFileToString(q.dir + "/cpu.stat");
    if (!text.ok()) continue;  // removed meanwhile
    if (auto stat = collect::ParseCpuStat(*text)) scan.first_stats[q.path] = *stat;
  }
  scan.affinities = collect::ReadThreadAffinities();
  scan.cpu_ns = ThreadCpuNs() - cpu_before;
  return scan;
}

}  // namespace

Status NodeRecording::WriteStalls(perfetto::TraceSink& sink) {
  stalls_.clear();
  memstall_->Drain(&stalls_);
  for (const model::MemStall& s : stalls_) {
    const auto& who = threads_.Who(s.tid);
    ++stall_count_;
    stall_ns_ += s.end > s.begin ? s.end - s.begin : 0;
    GN_RETURN_IF_ERROR(sink.node_tracks().WriteStall(s, who.first, who.second));
  }
  return WriteKernelWork(sink);
}

const std::string& NodeRecording::Symbol(const collect::KernelSymbols& symbols, uint64_t address) {
  auto it = symbol_names_.find(address);
  if (it != symbol_names_.end()) return it->second;
  return symbol_names_.emplace(address, address ? symbols.Symbolize(address) : "").first->second;
}

Status NodeRecording::WriteKernelWork(perfetto::TraceSink& sink) {
  uint64_t most = kwork_->Drain(&work_);
  // The cpustate log has 4x kwork's entries per CPU: scaled to kwork's.
  GN_ASSIGN_OR_RETURN(uint64_t cs_most, cpustate_->Drain(sink));
  most = std::max(most, cs_most * collect::KworkCollector::kEntriesPerCpu / collect::CpustateCollector::kEntriesPerCpu);
  // A CPU's log is read whole: what it held is what it took in since.
  log_fill_.held = std::max(log_fill_.held, most);
  log_fill_.produced += most;
  const uint64_t now = BoottimeNs();
  const uint64_t longest = std::min<uint64_t>(interval_ns_, 100'000'000);
  work_interval_ns_ = NextLogReadGapNs(last_log_read_ ? now - std::min(now, last_log_read_) : longest, most,
                                       collect::KworkCollector::kEntriesPerCpu, 10'000'000, longest);
  last_log_read_ = now;
  const collect::KernelSymbols* symbols = !symbols_ ? &no_symbols_ : frozen_ ? &symbols_->Get() : symbols_->TryGet();
  if (!symbols) return OkStatus();
  for (const model::KernelWork& w : work_) {
    ++work_count_[static_cast<size_t>(w.kind)];
    const bool send = w.kind == model::KernelWorkKind::kIpiSend;
    const auto& who = send ? threads_.Who(w.tid, w.tgid) : kNobody;
    GN_RETURN_IF_ERROR(sink.node_tracks().WriteKernelWork(w, Symbol(*symbols, w.func),
                                                          send ? Symbol(*symbols, w.callsite) : "", who.first,
                                                          who.second));
  }
  work_.clear();
  return OkStatus();
}

BufferFill NodeRecording::TakeLogFill() {
  BufferFill fill = log_fill_;
  fill.capacity = collect::KworkCollector::kEntriesPerCpu;
  log_fill_ = {};
  return fill;
}

bool NodeRecording::TakeNewLogLoss() {
  const uint64_t lost = kwork_->lost() + cpustate_->lost() + memstall_->lost();
  const bool found = lost > log_lost_seen_;
  log_lost_seen_ = lost;
  return found;
}

Status NodeRecording::Begin(perfetto::TraceSink& sink, std::shared_ptr<collect::KernelSymbolsLoader> symbols) {
  symbols_ = std::move(symbols);
  mounts_ = collect::ReadCpuCgroupMounts();
  const uint64_t now = BoottimeNs();
  GN_RETURN_IF_ERROR(sink.node_tracks().WriteNumaTopology(now, collect::ReadNumaTopology()));
  GN_RETURN_IF_ERROR(WriteNicIrqCpus(sink, now, "start"));
  GN_RETURN_IF_ERROR(Rescan(sink, now));
  GN_RETURN_IF_ERROR(cpustate_->Begin(sink, now));
  last_log_read_ = now;
  baseline_ = Read(true);
  previous_ = baseline_;
  return OkStatus();
}

Result<uint64_t> NodeRecording::MaybeSample(perfetto::TraceSink& sink, uint64_t now) {
  uint64_t due = previous_.ts + interval_ns_;
  if (now >= next_work_drain_) {
    GN_RETURN_IF_ERROR(WriteKernelWork(sink));
    next_work_drain_ = now + work_interval_ns_;
  }
  GN_RETURN_IF_ERROR(CollectScan(sink, false));
  if (now < due) return std::min(due, next_work_drain_) - now;
  if (now >= next_rescan_) GN_RETURN_IF_ERROR(Rescan(sink, now));
  model::NodeSnapshot current = Read(false);
  GN_RETURN_IF_ERROR(sink.node_tracks().WriteSample(baseline_, previous_, current));
  previous_ = std::move(current);
  GN_RETURN_IF_ERROR(WriteStalls(sink));
  return std::min(interval_ns_, next_work_drain_ > now ? next_work_drain_ - now : interval_ns_);
}

void NodeRecording::Freeze() {
  if (frozen_) return;
  frozen_ = true;
  // The end's counters need the quota list of a scan still in flight.
  if (scan_) AdoptScan(scan_->Get());
  final_ = Read(true);
}

Status NodeRecording::Finish(perfetto::TraceSink& sink) {
  if (!frozen_) Freeze();
  // Processes that joined a quota cgroup since the last scan still count.
  GN_RETURN_IF_ERROR(Rescan(sink, final_.ts, /*wait=*/true));
  GN_RETURN_IF_ERROR(sink.node_tracks().WriteSample(baseline_, previous_, final_));
  GN_RETURN_IF_ERROR(WriteStalls(sink));  // the collector has stopped: the log is complete
  GN_RETURN_IF_ERROR(cpustate_->Finish(sink, final_.ts));
  GN_RETURN_IF_ERROR(WriteNicIrqCpus(sink, final_.ts, "end"));
  return sink.node_tracks().Close(final_.ts);
}

void NodeRecording::FillReport(std::vector<model::CollectorReport>& reports) const {
  for (auto& r : reports)
    if (r.name == memstall_->name()) {
      r.events = stall_count_;
      r.lost = memstall_->lost();
    } else if (r.name == kwork_->name()) {
      for (uint64_t n : work_count_) r.events += n;
      r.lost = kwork_->lost();
    }
  cpustate_->FillReport(reports);
}

std::string NodeRecording::Summary() const {
  uint64_t throttled = 0, steal = 0;
  for (const auto& [path, now] : final_.cgroups) {
    auto b = baseline_.cgroups.find(path);
    uint64_t before = b == baseline_.cgroups.end() ? 0 : b->second.nr_throttled;
    if (now.nr_throttled > before) throttled += now.nr_throttled - before;
  }
  for (const auto& [cpu, ns] : final_.steal_ns) {
    auto b = baseline_.steal_ns.find(cpu);
    if (b != baseline_.steal_ns.end() && ns > b->second) steal += ns - b->second;
  }
  return fmt::format("node: {} cgroups with a CPU quota (throttled {} times), steal {:.1f} ms; {} reclaim/compaction "
                     "stalls ({:.1f} ms), {} lost; kernel work: {} IPIs sent, {} IPI callbacks, {} work items, "
                     "{} hrtimers, {} lost, {} unpaired",
                     quotas_.size(), throttled, static_cast<double>(steal) / 1e6, stall_count_,
                     static_cast<double>(stall_ns_) / 1e6, memstall_->lost(), work_count_[0], work_count_[1],
                     work_count_[2], work_count_[3], kwork_->lost(), kwork_->unpaired()) +
         "; " + cpustate_->Summary();
}

}  // namespace gpunoise::record
