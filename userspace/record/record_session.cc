#include "record/record_session.h"
#include "common/start_at.h"
#include "collect/rdma_counters.h"

#include "record/background_detach.h"

#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <map>

#include "collect/batch_flush.h"
#include "collect/clock_discipline.h"
#include "collect/host_info.h"
#include "collect/irq_collector.h"
#include "collect/irq_scanner.h"
#include "collect/proc_scanner.h"
#include "collect/record_decoder.h"
#include "collect/ring_transport.h"
#include "collect/sched_collector.h"
#include "collect/system_checks.h"
#include "collect/tracepoint_catalog.h"
#include "common/clock.h"
#include "common/cpu_list.h"
#include "common/log.h"
#include "common/strings.h"
#include "common/unique_fd.h"
#include "model/pid_ns_map.h"
#include "model/redact.h"
#include "model/switch_chain.h"
#include "record/net_recording.h"
#include "record/kernel_log_recording.h"
#include "record/node_recording.h"
#include "record/record_intake.h"
#include "record/perfetto_trace_sink.h"

#ifndef GPUNOISE_VERSION
#define GPUNOISE_VERSION "0.1.0"
#endif

namespace gpunoise::record {
namespace {

bool Readable(int fd) {
  if (fd < 0) return false;
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR));
}

std::string Hostname() {
  char buf[256] = {};
  ::gethostname(buf, sizeof(buf) - 1);
  return buf;
}

}  // namespace


uint64_t DefaultRingBytesPerCpu(size_t ncpus) {
  uint64_t per_cpu = 4ull << 20;
  const uint64_t budget = 256ull << 20;
  while (per_cpu > (256u << 10) && per_cpu * ncpus > budget) per_cpu >>= 1;
  return per_cpu;
}

Result<RecordResult> RunRecord(const RecordOptions& options) {
  GN_RETURN_IF_ERROR(collect::CheckPrivileges());
  GN_RETURN_IF_ERROR(collect::CheckKernelBtf());
  GN_ASSIGN_OR_RETURN(std::string tracefs, collect::EnsureTracefs());
  GN_ASSIGN_OR_RETURN(collect::TracepointCatalog catalog, collect::TracepointCatalog::Open(tracefs));

  std::vector<int> online = OnlineCpus();
  std::vector<int> cpus = options.filters.cpus.empty() ? online : options.filters.cpus;
  for (int cpu : cpus)
    if (std::find(online.begin(), online.end(), cpu) == online.end())
      return MakeError("CPU {} is not online (online: {})", cpu, FormatCpuList(online));

  GN_ASSIGN_OR_RETURN(std::unique_ptr<PerfettoTraceSink> sink,
                      PerfettoTraceSink::Create(options.output_path, options.compression, options.trace_gid));

  RecordResult result;
  model::SessionInfo& session = result.session;
  session.tool_version = GPUNOISE_VERSION;
  session.hostname = Hostname();
  model::HostInfo host = collect::ReadHostInfo();
  if (!options.machine_name.empty()) host.machine_name = options.machine_name;
  session.boot_id = host.boot_id;
  session.machine_name = host.machine_name;
  session.clock_start = collect::ReadClockDiscipline();
  session.command_line = options.command_line;

  // Staging, indexed by CPU.
  int max_cpu = *std::max_element(cpus.begin(), cpus.end());
  RecordIntake intake(static_cast<size_t>(max_cpu));
  intake.set_pid_ns_map(options.pid_ns_map);
  std::vector<CpuBatch>& batches = intake.batches();
  std::vector<std::unique_ptr<collect::Collector>> collectors;
  auto handler = [&intake](uint32_t cpu, std::span<const uint8_t> data) { intake.OnRecord(cpu, data); };

  uint64_t ring_bytes = options.ring_bytes_per_cpu ? options.ring_bytes_per_cpu
                                                   : DefaultRingBytesPerCpu(cpus.size());
  GN_ASSIGN_OR_RETURN(std::unique_ptr<collect::RingTransport> transport,
                      collect::RingTransport::Create(cpus, ring_bytes, handler));

  collect::CollectorContext context;
  context.catalog = &catalog;
  transport->ShareWith(&context);
  context.attach_mode = options.attach_mode;
  context.filters = options.filters;

  auto wants = [&](std::string_view group) { return options.event_groups.count(std::string(group)) > 0; };
  collect::IrqCollector* irq_collector = nullptr;
  if (wants("sched")) collectors.push_back(std::make_unique<collect::SchedCollector>(options.batching));
  if (wants("irq") || wants("softirq")) {
    auto irq = std::make_unique<collect::IrqCollector>(wants("irq"), wants("softirq"), options.batching);
    irq_collector = irq.get();
    collectors.push_back(std::move(irq));
  }
  std::unique_ptr<NetRecording> net;
  if (wants("net") || wants("net-packets")) {
    collect::NetOptions net_options = options.net;
    net_options.packets = wants("net-packets");
    net = std::make_unique<NetRecording>(net_options, options.net_interval_ms * 1000000, collectors);
  }
  std::unique_ptr<NodeRecording> node;
  if (wants("node")) node = std::make_unique<NodeRecording>(options.net_interval_ms * 1000000, collectors);
  if (options.console) options.console->AddCollector(collectors);

  // Process names first, so tasks seen during the recording are named even
  // if the scan is slow on a big node.
  auto scan_processes = [&options] {
    model::ProcessSnapshot snapshot = collect::ScanProcesses("/proc", options.kubelet_log_dir);
    if (options.redact) model::RedactCommandLines(&snapshot);
    return snapshot;
  };
  model::ProcessSnapshot start_processes = scan_processes();

  // Collectors attach one link at a time behind a closed gate, so every
  // collector's data starts at the same instant: start_ts, when it opens.
  GN_RETURN_IF_ERROR(transport->Pause());
  collect::StartCollectors(collectors, context);
  bool any_active = false;
  for (size_t i = 0; i < collectors.size(); ++i) {
    if (collectors[i]->report().state != model::CollectorState::kDisabled) any_active = true;
    for (int kind = 0; kind < GN_REC_KIND_MAX; ++kind)
      if (collect::CollectorOfKind(static_cast<uint16_t>(kind)) == collectors[i]->name())
        intake.SetOwner(static_cast<uint16_t>(kind), i);
  }
  // Batching collectors' flush programs, run on every CPU before each drain.
  std::vector<collect::BatchFlusher> flushers;
  uint32_t batch_streams = 0;
  for (auto& c : collectors)
    if (int fd = c->batch_flush_fd(); fd >= 0) {
      flushers.emplace_back(fd, cpus);
      batch_streams |= 1u << c->batch_stream();
    }
  intake.set_batching(batch_streams);
  if (!any_active) {
    std::string why;
    for (auto& c : collectors) why += fmt::format("{}: {}; ", c->name(), c->report().reason);
    return MakeError("no collector could start ({})", Trim(why));
  }
  // --start-at: the gate stays closed until that wall-clock instant (a stop
  // signal opens it at once; the loop below then ends the recording).
  if (options.start_at_realtime_ns) WaitUntilRealtime(options.start_at_realtime_ns, options.stop_fd);
  session.start_ts = BoottimeNs();
  sink->set_data_start(session.start_ts);
  GN_RETURN_IF_ERROR(transport->Resume());
  // RDMA traffic bypasses the kernel's stack: its ports' own counters, read
  // now and at the end, say what it went through (nothing without RDMA).
  const std::vector<model::RdmaPort> rdma_start = collect::ReadRdmaCounters();

  model::IrqTable irqs = collect::ScanIrqs();
  collect::MapNicIrqs(&irqs);
  sink->set_irq_table(irqs);
  if (irq_collector)
    sink->set_irq_name_fallback([irq_collector](int32_t irq) { return irq_collector->LookupIrqName(irq); });

  for (int cpu : cpus) session.cpus.push_back({static_cast<uint32_t>(cpu), 0, 0, 0});
  for (auto& c : collectors) session.collectors.push_back(c->report());
  GN_RETURN_IF_ERROR(sink->WriteHeader(host, start_processes, session));
  if (options.pid_ns_map) options.pid_ns_map->AddSnapshot(start_processes);
  start_processes = {};
  if (net) {
    GN_RETURN_IF_ERROR(sink->WriteNetIrqMap(session.start_ts));
    net->Begin(*sink);
  }
  if (node) GN_RETURN_IF_ERROR(node->Begin(*sink));
  session.in_progress_path = sink->temp_path();
  if (options.on_started) options.on_started(session);
  int workload_fd = -1;
  if (options.start_workload) {
    GN_ASSIGN_OR_RETURN(workload_fd, options.start_workload());
  }
  if (options.after_attach) GN_RETURN_IF_ERROR(options.after_attach());

  UniqueFd epoll_fd(::epoll_create1(EPOLL_CLOEXEC));
  {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = 0;
    ::epoll_ctl(epoll_fd.get(), EPOLL_CTL_ADD, transport->wait_fd(), &ev);
    if (options.stop_fd >= 0) {
      ev.data.u32 = 1;
      ::epoll_ctl(epoll_fd.get(), EPOLL_CTL_ADD, options.stop_fd, &ev);
    }
    if (workload_fd >= 0) {
      ev.data.u32 = 2;
      ::epoll_ctl(epoll_fd.get(), EPOLL_CTL_ADD, workload_fd, &ev);
    }
  }

  // A filter removes switches by design: the chain would blame the kernel.
  bool filtering = !options.filters.pids.empty() || options.filters.cgroup_id;
  session.switch_chain_checked = !filtering;
  model::SwitchChain switch_chain;
  const uint64_t records_per_drain = options.records_per_cpu_per_drain;
  auto drain = [&]() -> Result<uint64_t> {
    for (CpuBatch& b : batches) b.drained = 0;
    // Batches out first: the drain then reads everything stamped before the
    // flush (the staging holds back what came after, record/cpu_staging.h).
    for (collect::BatchFlusher& f : flushers) f.FlushAll();
    return transport->DrainAll(records_per_drain);
  };
  // `final`: the programs are detached and the rings empty; nothing is held.
  auto flush_batches = [&](bool final) -> Status {
    std::vector<uint64_t> lost = transport->LostPerCpu();
    for (size_t cpu = 0; cpu < batches.size(); ++cpu) {
      CpuBatch& b = batches[cpu];
      uint64_t lost_now = cpu < lost.size() ? lost[cpu] : 0;
      bool new_loss = lost_now > b.lost_seen;
      b.lost_seen = lost_now;
      if (b.staging.staged() == 0 && !new_loss) continue;
      bool cut = !final && records_per_drain && b.drained >= records_per_drain;
      std::span<const model::Event> events = b.staging.Writable(cut, final);
      if (session.switch_chain_checked)
        for (const model::Event& ev : events) switch_chain.Observe(ev);
      Status st = sink->WriteCpuBatch(static_cast<uint32_t>(cpu), events, new_loss);
      b.staging.Written();
      if (!st.ok()) {
        // What failed to reach the file, this batch and what the writer had
        // buffered before it, is lost in user space: counted.
        sink->TakeUnwritten([&](uint32_t c, std::string_view kind, uint64_t n) {
          if (c < batches.size()) batches[c].CountUnwritten(kind, n);
        });
        return st;
      }
    }
    return OkStatus();
  };
  // After a write error the file takes nothing more: what is still staged or
  // in the rings is read and counted as unwritten.
  auto discard_staged = [&]() {
    for (CpuBatch& b : batches) {
      b.CountUnwritten(b.staging.Writable(false, true));
      b.staging.Written();
    }
  };

  uint64_t deadline = options.duration_ns ? session.start_ts + options.duration_ns : 0;
  constexpr uint64_t kFileFlushIntervalNs = 1'000'000'000;
  uint64_t next_file_flush = session.start_ts + kFileFlushIntervalNs;
  session.end_reason = "stopped";
  bool stopping = false;  // a stop signal came; waiting for the workload to exit
  std::string stop_reason;
  while (true) {
    int timeout_ms = static_cast<int>(options.drain_interval_ms);
    uint64_t now = BoottimeNs();
    if (deadline) {
      if (now >= deadline) {
        session.end_reason = stopping ? stop_reason : "duration";
        break;
      }
      timeout_ms = static_cast<int>(std::min<uint64_t>(timeout_ms, (deadline - now) / 1000000 + 1));
    }
    if (net) {
      auto next = net->MaybeSample(*sink, now);
      if (!next.ok()) {
        result.late_error = next.error();
        session.end_reason = sink->disk_full() ? "disk full" : "write error";
        break;
      }
      timeout_ms = static_cast<int>(std::min<uint64_t>(timeout_ms, *next / 1000000 + 1));
    }
    if (node) {
      auto next = node->MaybeSample(*sink, now);
      if (!next.ok()) {
        result.late_error = next.error();
        session.end_reason = sink->disk_full() ? "disk full" : "write error";
        break;
      }
      timeout_ms = static_cast<int>(std::min<uint64_t>(timeout_ms, *next / 1000000 + 1));
    }
    if (transport->backlog()) timeout_ms = 0;  // the last drain stopped at its bound
    epoll_event events[3];
    int n = ::epoll_wait(epoll_fd.get(), events, 3, timeout_ms);
    if (n < 0 && errno != EINTR) {
      result.late_error = MakeError("failed to wait for events: {}", std::strerror(errno));
      break;
    }
    bool stop = !stopping && Readable(options.stop_fd);
    bool workload_done = Readable(workload_fd);
    auto drained = drain();
    if (!drained.ok()) {
      result.late_error = drained.error();
      break;
    }
    // The kernel log is written as it becomes final (record/kernel_log_recording.h).
    Status flushed = options.console ? options.console->Drain(sink->writer()) : OkStatus();
    if (flushed.ok()) flushed = flush_batches(false);
    // At least once a second what was written reaches the file, also on a
    // quiet node whose compression block fills slowly: a recorder killed by
    // SIGKILL leaves a trace at most that old (the in-progress file).
    if (flushed.ok() && BoottimeNs() >= next_file_flush) {
      flushed = sink->FlushEvents();
      next_file_flush = BoottimeNs() + kFileFlushIntervalNs;
      if (!flushed.ok())
        sink->TakeUnwritten([&](uint32_t c, std::string_view kind, uint64_t n) {
          if (c < batches.size()) batches[c].CountUnwritten(kind, n);
        });
    }
    if (!flushed.ok()) {
      result.late_error = flushed.error();
      session.end_reason = sink->disk_full() ? "disk full" : "write error";
      break;
    }
    if (workload_done) {
      session.end_reason = options.workload_end_reason ? options.workload_end_reason() : "command exited";
      break;
    }
    if (stop) {
      stop_reason = options.stop_reason ? options.stop_reason() : "stopped";
      if (workload_fd < 0 || options.workload_grace_ns == 0) {
        session.end_reason = stop_reason;
        break;
      }
      // Keep recording a little while the workload winds down.
      stopping = true;
      ::epoll_ctl(epoll_fd.get(), EPOLL_CTL_DEL, options.stop_fd, nullptr);
      uint64_t grace_end = BoottimeNs() + options.workload_grace_ns;
      deadline = deadline ? std::min(deadline, grace_end) : grace_end;
    }
  }

  // Close the gate, so every collector ends at end_ts; then detach (each
  // detach waits for kernel grace periods) and drain what is left.
  // Recursion misses live in the programs, so read them before they go.
  for (auto& c : collectors) {
    auto misses = c->ProgramMisses();
    for (const auto& m : misses) session.bpf_recursion_misses += m.missed;
    session.program_misses.insert(session.program_misses.end(), misses.begin(), misses.end());
  }
  Status closed = transport->Pause();
  session.clock_end = collect::ReadClockDiscipline();
  if (closed.ok()) {
    session.end_ts = BoottimeNs();
    if (net) net->Freeze();
    if (node) node->Freeze();
  } else {
    log::Warning("{}; the collectors stop as they detach", closed.error().message);
  }
  // A stop signal during the detach (Ctrl-C again) finishes the trace at
  // once; the kernel detaches the rest as the process ends.
  result.detach_abandoned = !DetachUnlessStopped(collectors, options.stop_fd);
  if (result.detach_abandoned)
    log::Warning("stop signal while detaching: finishing the trace now; the kernel detaches the programs as gpunoise exits");
  if (!closed.ok()) session.end_ts = BoottimeNs();
  // The programs are detached: every batch can go out, and nothing is
  // half-written any more.
  for (collect::BatchFlusher& f : flushers)
    if (uint64_t left = f.FlushAllUntilDone(); left)
      log::Warning("the record batches of {} CPUs could not be flushed at the end", left);
  // The programs are detached, so the rings only empty from here. After a
  // write error they are still read to the end, to count what they held.
  bool file_failed = sink->failed();
  if (file_failed) {
    // Whatever the failing write was (events, counters), what the writer had
    // buffered is gone.
    sink->TakeUnwritten([&](uint32_t c, std::string_view kind, uint64_t n) {
      if (c < batches.size()) batches[c].CountUnwritten(kind, n);
    });
  }
  while (true) {
    auto drained = drain();
    if (!drained.ok()) {
      if (!result.late_error) result.late_error = drained.error();
      break;
    }
    if (file_failed) {
      discard_staged();
    } else if (Status st = flush_batches(!transport->backlog()); !st.ok()) {
      if (!result.late_error) result.late_error = st.error();
      if (session.end_reason != "disk full" && session.end_reason != "write error")
        session.end_reason = sink->disk_full() ? "disk full" : "write error";
      file_failed = true;
      discard_staged();
    }
    if (!transport->backlog()) break;
  }
  if (!file_failed) {
    Status st = flush_batches(true);  // anything held back for order
    if (st.ok()) st = sink->FlushEvents();
    if (!st.ok()) {
      if (!result.late_error) result.late_error = st.error();
      if (session.end_reason != "disk full" && session.end_reason != "write error")
        session.end_reason = sink->disk_full() ? "disk full" : "write error";
      sink->TakeUnwritten([&](uint32_t c, std::string_view kind, uint64_t n) {
        if (c < batches.size()) batches[c].CountUnwritten(kind, n);
      });
    }
  }
  discard_staged();

  // Final accounting: per CPU and kind, per collector, per program, per map.
  auto lost_by_kind = transport->LostByCpuAndKind();
  std::vector<uint64_t> collector_lost(collectors.size(), 0);
  std::vector<model::CpuLoss> cpu_rows;
  for (size_t cpu = 0; cpu < std::max(lost_by_kind.size(), batches.size()); ++cpu) {
    bool recorded = cpu < batches.size() && std::find(cpus.begin(), cpus.end(), static_cast<int>(cpu)) != cpus.end();
    model::CpuLoss row;
    row.cpu = static_cast<uint32_t>(cpu);
    if (cpu < lost_by_kind.size()) {
      for (int kind = 0; kind < GN_REC_KIND_MAX; ++kind) {
        uint64_t n = lost_by_kind[cpu][kind];
        if (!n) continue;
        row.lost += n;
        std::string_view name = collect::RecordKindName(static_cast<uint16_t>(kind));
        row.lost_by_kind[name.empty() ? fmt::format("kind{}", kind) : std::string(name)] += n;
        if (int owner = intake.OwnerOf(static_cast<uint16_t>(kind)); owner >= 0)
          collector_lost[static_cast<size_t>(owner)] += n;
      }
    }
    if (cpu < batches.size()) {
      const CpuBatch& b = batches[cpu];
      row.events = b.events_total;
      row.bytes = b.bytes_total;
      row.decode_errors = b.decode_errors;
      row.unwritten = b.unwritten;
      row.unwritten_by_kind = b.unwritten_by_kind;
    }
    row.unseen_switches = session.switch_chain_checked ? switch_chain.breaks(row.cpu) : 0;
    // A CPU outside the recording has a row only when it lost something
    // (its programs found no ring: it came online during the recording).
    if (recorded || row.lost) cpu_rows.push_back(std::move(row));
  }
  session.cpus = std::move(cpu_rows);
  session.records_outside_cpus = intake.records_outside_cpus();
  session.collectors.clear();
  for (size_t i = 0; i < collectors.size(); ++i) {
    model::CollectorReport report = collectors[i]->report();
    report.events = intake.collector_events(i);
    report.lost = collector_lost[i];
    session.collectors.push_back(std::move(report));
    collectors[i]->AddMapFull(session.map_full);
  }
  if (!rdma_start.empty()) {
    Status st = sink->WriteRdmaPorts(session.end_ts, model::RdmaDelta(rdma_start, collect::ReadRdmaCounters()));
    if (!st.ok() && !result.late_error) result.late_error = st.error();
  }
  if (net) {
    // The network totals are written even after a disk-full error, like the
    // footer: they are small and say what the recording saw.
    Status st = net->Finish(*sink);
    if (!st.ok() && !result.late_error) result.late_error = st.error();
    result.net_summary = net->Summary();
  }
  if (node) {
    Status st = node->Finish(*sink);
    if (!st.ok() && !result.late_error) result.late_error = st.error();
    result.node_summary = node->Summary();
    node->FillReport(session.collectors);
  }
  if (options.console) {
    // Detached: the console log is complete.
    if (Status st = options.console->Drain(sink->writer()); !st.ok() && !result.late_error) result.late_error = st.error();
    options.console->FillReport(session.collectors);
  }
  for (const auto& cpu : session.cpus) result.parse_errors += cpu.decode_errors;
  if (result.parse_errors) log::Warning("{} malformed records were skipped (counted as lost)", result.parse_errors);
  if (session.records_outside_cpus)
    log::Warning("{} records came from CPUs outside the recording (counted as lost)", session.records_outside_cpus);

  model::ProcessSnapshot end_processes = scan_processes();
  // Tasks born between the first scan and the attach, and still alive.
  if (options.pid_ns_map) options.pid_ns_map->AddSnapshot(end_processes);
  Status footer = sink->WriteFooter(end_processes, session);
  if (!footer.ok() && !result.late_error) result.late_error = footer.error();
  if (options.append_extra) {
    Status extra = options.append_extra(sink->writer(), session);
    if (!extra.ok() && !result.late_error) result.late_error = extra.error();
  }
  if (net && options.kernel_log) {
    auto joined = net->AttachKernelLog(*sink, *options.kernel_log);
    if (!joined.ok() && !result.late_error) result.late_error = joined.error();
    else if (joined.ok() && *joined) log::Info("kernel log: {} lines attached to link events", *joined);
  }
  Status committed = sink->Commit();
  if (!committed.ok() && !result.late_error) result.late_error = committed.error();
  result.path = sink->path();
  result.bytes_written = sink->bytes_written();
  result.packet_bytes = sink->packet_bytes();
  result.compression = options.compression;
  if (result.detach_abandoned) LeaveToDetacher(collectors);
  return result;
}

std::string FormatSummary(const RecordResult& r) {
  const auto& s = r.session;
  std::string per_collector;
  uint64_t lost = 0;
  for (const auto& c : s.collectors) {
    if (!per_collector.empty()) per_collector += ", ";
    if (c.state == model::CollectorState::kDisabled)
      per_collector += fmt::format("{} disabled", c.name);
    else
      per_collector += fmt::format("{} {} events", c.name, c.events);
  }
  uint64_t unseen = 0;
  for (const auto& cpu : s.cpus) unseen += cpu.unseen_switches;
  lost = model::TotalKernelAndUserLoss(s);
  double seconds = s.end_ts > s.start_ts ? static_cast<double>(s.end_ts - s.start_ts) / 1e9 : 0;
  std::string unseen_text =
      unseen ? fmt::format(", {} context switches the kernel did not report", unseen) : "";
  std::string net_text = r.net_summary.empty() ? "" : "\n" + r.net_summary;
  if (!r.node_summary.empty()) net_text += "\n" + r.node_summary;
  std::string size_text = HumanBytes(r.bytes_written);
  if (r.compression != perfetto::TraceCompression::kNone)
    size_text += fmt::format("; {} before {}", HumanBytes(r.packet_bytes),
                             perfetto::TraceCompressionName(r.compression));
  return fmt::format("gpunoise: recorded {:.1f} s on {} CPUs to {} ({}): {}; {} lost events{}{}",
                     seconds, s.cpus.size(), r.path, size_text, per_collector, lost, unseen_text,
                     net_text);
}

}  // namespace gpunoise::record
