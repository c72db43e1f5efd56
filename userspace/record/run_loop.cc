#include "record/run_loop.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "collect/clock_discipline.h"
#include "collect/irq_collector.h"
#include "collect/irq_scanner.h"
#include "collect/kallsyms_loader.h"
#include "collect/rdma_counters.h"
#include "collect/ring_transport.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/unique_fd.h"
#include "export/perfetto/trace_sink.h"
#include "model/pid_ns_map.h"
#include "record/background_detach.h"
#include "record/drain.h"
#include "record/drain_priority.h"
#include "record/kernel_log_recording.h"
#include "record/record_session.h"
#include "common/start_at.h"

namespace gpunoise::record {
namespace {

bool Readable(int fd) {
  if (fd < 0) return false;
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR));
}

}  // namespace

Result<TraceStart> StartRecording(const RecordOptions& options, const RecordPlan& plan, CollectorSet& set,
                                  collect::RingTransport& transport, perfetto::TraceSink& sink,
                                  const model::HostInfo& host, model::ProcessSnapshot processes,
                                  model::SessionInfo& session) {
  TraceStart start;
  // Names and affinities of every IRQ: two files an IRQ, about a thousand
  // IRQs on a big node. Read while the gate is still closed, since nothing
  // drains the rings until this function returns, and before --start-at's
  // wait, which must open the gate on its instant.
  model::IrqTable irqs = collect::ScanIrqs();
  collect::MapNicIrqs(&irqs);
  sink.set_irq_table(irqs);
  if (collect::IrqCollector* irq_collector = set.irq)
    sink.set_irq_name_fallback([irq_collector](int32_t irq) { return irq_collector->LookupIrqName(irq); });

  // --start-at: the gate stays closed until that wall-clock instant (a stop
  // signal opens it at once; the loop then ends the recording).
  if (options.start_at_realtime_ns) WaitUntilRealtime(options.start_at_realtime_ns, options.stop_fd);

  session.start_ts = BoottimeNs();
  sink.set_data_start(session.start_ts);
  GN_RETURN_IF_ERROR(transport.Resume());
  if (set.irq) start.softirq_audit = SoftirqAudit::Begin(*set.irq);
  // RDMA traffic bypasses the kernel's stack: its ports' own counters, read
  // now and at the end, say what it went through (nothing without RDMA).
  start.rdma_start = collect::ReadRdmaCounters();

  for (int cpu : plan.cpus) session.cpus.push_back({static_cast<uint32_t>(cpu), 0, 0, 0});
  for (auto& c : set.collectors) session.collectors.push_back(c->report());
  GN_RETURN_IF_ERROR(sink.WriteHeader(host, processes, session));
  if (options.pid_ns_map) options.pid_ns_map->AddSnapshot(processes);
  processes = {};
  // One read of /proc/kallsyms for both groups (kernel-work callbacks, drop
  // locations), opened while the recorder still holds its capabilities.
  std::shared_ptr<collect::KernelSymbolsLoader> symbols;
  if (set.net || set.node)
    symbols = std::make_shared<collect::KernelSymbolsLoader>(UniqueFd(::open("/proc/kallsyms", O_RDONLY | O_CLOEXEC)));
  if (set.net) {
    GN_RETURN_IF_ERROR(sink.WriteNetIrqMap(session.start_ts));
    set.net->Begin(sink, symbols);
  }
  if (set.node) GN_RETURN_IF_ERROR(set.node->Begin(sink, symbols));
  session.in_progress_path = sink.temp_path();
  if (options.on_started) options.on_started(session);
  if (options.start_workload) {
    GN_ASSIGN_OR_RETURN(start.workload_fd, options.start_workload());
  }
  // The drain yields to the node's work between turns of pressure
  // (record/drain_priority.h). Made after the command started, which so
  // does not inherit the RLIMIT_NICE it may set, and before the drop.
  std::unique_ptr<collect::Doorbell> doorbell;
  if (auto opened = collect::OpenRingDoorbell(transport.doorbell_map_fd()); opened.ok())
    doorbell = std::move(*opened);
  else
    log::Warning("record: {}; a full buffer is found at the next drain alone", opened.error().message);
  start.drain_yield =
      std::make_unique<DrainYield>(options.drain_yield, options.drain_interval_ms * 1'000'000, std::move(doorbell));
  start.drain_yield->Follow(sink.writer().background_tid());
  if (options.after_attach) GN_RETURN_IF_ERROR(options.after_attach());
  return start;
}

void RunLoop(const RecordOptions& options, collect::RingTransport& transport, RecordDrain& drain,
             perfetto::TraceSink& sink, CollectorSet& set, int workload_fd, DrainYield& yield,
             model::SessionInfo& session, std::optional<Error>& late_error) {
  UniqueFd epoll_fd(::epoll_create1(EPOLL_CLOEXEC));
  {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = 0;
    ::epoll_ctl(epoll_fd.get(), EPOLL_CTL_ADD, transport.wait_fd(), &ev);
    if (options.stop_fd >= 0) {
      ev.data.u32 = 1;
      ::epoll_ctl(epoll_fd.get(), EPOLL_CTL_ADD, options.stop_fd, &ev);
    }
    if (workload_fd >= 0) {
      ev.data.u32 = 2;
      ::epoll_ctl(epoll_fd.get(), EPOLL_CTL_ADD, workload_fd, &ev);
    }
    // A buffer rang the doorbell (bpf/doorbell.bpf.h): read now, the logs
    // included, not at the next timer.
    if (yield.drain_wake_fd() >= 0) {
      ev.data.u32 = 3;
      ::epoll_ctl(epoll_fd.get(), EPOLL_CTL_ADD, yield.drain_wake_fd(), &ev);
    }
  }

  uint64_t deadline = options.duration_ns ? session.start_ts + options.duration_ns : 0;
  constexpr uint64_t kFileFlushIntervalNs = 1'000'000'000;
  uint64_t next_file_flush = session.start_ts + kFileFlushIntervalNs;
  session.end_reason = "stopped";
  bool stopping = false;  // a stop signal came; waiting for the workload to exit
  std::string stop_reason;
  yield.Begin(BoottimeNs());
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
    // The network and node counters: a sample when one is due, and the wait
    // ends in time for the next. False: the file failed.
    auto sample = [&](auto& recording) {
      auto next = recording.MaybeSample(sink, now);
      if (!next.ok()) {
        late_error = next.error();
        session.end_reason = sink.disk_full() ? "disk full" : "write error";
        return false;
      }
      timeout_ms = static_cast<int>(std::min<uint64_t>(timeout_ms, *next / 1000000 + 1));
      return true;
    };
    if (set.net && !sample(*set.net)) break;
    if (set.node && !sample(*set.node)) break;
    if (transport.backlog()) timeout_ms = 0;  // the last drain stopped at its bound
    epoll_event events[4];
    int n = ::epoll_wait(epoll_fd.get(), events, 4, timeout_ms);
    if (n < 0 && errno != EINTR) {
      late_error = MakeError("failed to wait for events: {}", std::strerror(errno));
      break;
    }
    yield.TurnStarted(BoottimeNs());
    bool stop = !stopping && Readable(options.stop_fd);
    bool workload_done = Readable(workload_fd);
    // From the wait's own events: no poll on a turn the doorbell did not
    // wake (under a storm turns come back to back).
    for (int i = 0; i < n; ++i)
      if (events[i].data.u32 == 3) {
        yield.TakeDrainWake();
        if (set.node) set.node->ReadLogsNow();
      }
    auto drained = drain.Drain();
    if (!drained.ok()) {
      late_error = drained.error();
      break;
    }
    // The kernel log is written as it becomes final (record/kernel_log_recording.h).
    Status flushed = options.console ? options.console->Drain(sink.writer()) : OkStatus();
    if (flushed.ok()) flushed = drain.Flush(false);
    // At least once a second what was written reaches the file, also on a
    // quiet node whose compression block fills slowly: a recorder killed by
    // SIGKILL leaves a trace at most that old (the in-progress file).
    if (flushed.ok() && BoottimeNs() >= next_file_flush) {
      flushed = sink.FlushEvents();
      next_file_flush = BoottimeNs() + kFileFlushIntervalNs;
      if (!flushed.ok()) drain.CountUnwritten();
    }
    if (!flushed.ok()) {
      late_error = flushed.error();
      session.end_reason = sink.disk_full() ? "disk full" : "write error";
      break;
    }
    // The rings, and the node's logs, read on their own cadence by the
    // sample above: each can hold the drain back from yielding.
    const BufferFill buffers[] = {
        {transport.fullest_ring_bytes(), transport.most_produced_bytes(), transport.bytes_per_cpu()},
        set.node ? set.node->TakeLogFill() : BufferFill{}};
    const bool new_log_loss = set.node && set.node->TakeNewLogLoss();
    yield.TurnEnded(BoottimeNs(), buffers, drain.found_new_loss() || new_log_loss);
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
      // Keep recording a little while the workload winds down, under
      // SCHED_OTHER: the end must not wait for a CPU.
      yield.Stop();
      stopping = true;
      ::epoll_ctl(epoll_fd.get(), EPOLL_CTL_DEL, options.stop_fd, nullptr);
      uint64_t grace_end = BoottimeNs() + options.workload_grace_ns;
      deadline = deadline ? std::min(deadline, grace_end) : grace_end;
    }
  }
  yield.Stop();
  DrainYieldStats y = yield.stats();
  session.drain_yielded = y.yielded;
  session.drain_idle_from = y.idle_from;
  session.drain_raises = y.raises;
  session.drain_raised_for_late = y.raised_for_late;
  session.drain_raised_for_doorbell = y.raised_for_doorbell;
  session.drain_raised_ns = y.raised_ns;
  if (!y.unavailable.empty())
    log::Info("record: the drain did not yield to the node's work: {}", y.unavailable);
}

bool StopCollectors(const RecordOptions& options, CollectorSet& set, collect::RingTransport& transport,
                    std::span<collect::BatchFlusher> flushers, std::span<const int> cpus,
                    SoftirqAudit* softirq_audit, model::SessionInfo& session) {
  // Close the gate, so every collector ends at end_ts; then detach (each
  // detach waits for kernel grace periods) and drain what is left.
  // Recursion misses live in the programs, so read them before they go.
  for (auto& c : set.collectors) {
    auto misses = c->ProgramMisses();
    for (const auto& m : misses) session.bpf_recursion_misses += m.missed;
    session.program_misses.insert(session.program_misses.end(), misses.begin(), misses.end());
  }
  Status closed = transport.Pause();
  session.clock_end = collect::ReadClockDiscipline();
  if (closed.ok()) {
    session.end_ts = BoottimeNs();
    if (set.net) set.net->Freeze();
    if (set.node) set.node->Freeze();
  } else {
    log::Warning("{}; the collectors stop as they detach", closed.error().message);
  }
  // Still attached: the entry program counts until the kernel's count is read.
  if (softirq_audit && set.irq) softirq_audit->End(*set.irq);
  // A stop signal during the detach (Ctrl-C again) finishes the trace at
  // once; the kernel detaches the rest as the process ends.
  bool abandoned = !DetachUnlessStopped(set.collectors, options.stop_fd);
  if (abandoned)
    log::Warning("stop signal while detaching: finishing the trace now; the kernel detaches the programs as gpunoise exits");
  if (!closed.ok()) session.end_ts = BoottimeNs();
  // The programs are detached: every batch can go out, and nothing is
  // half-written any more.
  for (collect::BatchFlusher& f : flushers)
    if (uint64_t left = f.FlushAllUntilDone(); left)
      log::Warning("the record batches of {} CPUs could not be flushed at the end", left);
  if (!abandoned)
    for (auto& c : set.collectors)
      if (uint64_t left = c->FlushHeldRecords(cpus); left)
        log::Warning("{}: what the kernel side held back on {} CPUs could not be written at the end", c->name(), left);
  return abandoned;
}

}  // namespace gpunoise::record
