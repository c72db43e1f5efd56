#include "record/record_session.h"

#include <unistd.h>

#include <algorithm>

#include "collect/clock_discipline.h"
#include "collect/host_info.h"
#include "collect/irq_collector.h"
#include "collect/ring_transport.h"
#include "collect/system_checks.h"
#include "collect/tracepoint_catalog.h"
#include "common/cpu_list.h"
#include "common/log.h"
#include "export/perfetto/trace_sink.h"
#include "record/drain.h"
#include "record/finish.h"
#include "record/loss_accounting.h"
#include "record/prepare_collectors.h"
#include "record/record_intake.h"
#include "record/run_loop.h"
#include "record/spare_cpu.h"

#ifndef GPUNOISE_VERSION
#define GPUNOISE_VERSION "0.1.0"
#endif

namespace gpunoise::record {
namespace {

std::string Hostname() {
  char buf[256] = {};
  ::gethostname(buf, sizeof(buf) - 1);
  return buf;
}

}  // namespace

// The stages, each in its own file: prepare the collectors
// (prepare_collectors.h), start, run and stop (run_loop.h) with the drain
// (drain.h), account the loss (loss_accounting.h), finish the trace
// (finish.h).
Result<RecordResult> RunRecord(const RecordOptions& options) {
  GN_RETURN_IF_ERROR(collect::CheckPrivileges());
  GN_RETURN_IF_ERROR(collect::CheckKernelBtf());
  GN_ASSIGN_OR_RETURN(std::string tracefs, collect::EnsureTracefs());
  GN_ASSIGN_OR_RETURN(collect::TracepointCatalog catalog, collect::TracepointCatalog::Open(tracefs));
  GN_ASSIGN_OR_RETURN(RecordPlan plan, PlanRecord(options, OnlineCpus()));

  GN_ASSIGN_OR_RETURN(std::unique_ptr<perfetto::TraceSink> sink,
                      perfetto::TraceSink::Create(options.output_path, options.compression, options.trace_gid));
  if (options.compression != perfetto::TraceCompression::kNone && options.compress_with_spare_cpu_only)
    sink->writer().CompressOnlyWhen([spare = std::make_shared<SpareCpu>()] { return spare->Now(); });
  if (options.deflate_in_background)
    if (Status st = sink->writer().DeflateInBackground(); !st.ok())
      log::Warning("record: {}; blocks are deflated on the drain thread", st.error().message);

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
  int max_cpu = *std::max_element(plan.cpus.begin(), plan.cpus.end());
  RecordIntake intake(static_cast<size_t>(max_cpu));
  intake.set_pid_ns_map(options.pid_ns_map);
  // Declared before the transport, so that the collectors outlive it as they
  // always did.
  CollectorSet set;
  auto handler = [&intake](uint32_t cpu, std::span<const uint8_t> data) { intake.OnRecord(cpu, data); };
  GN_ASSIGN_OR_RETURN(std::unique_ptr<collect::RingTransport> transport,
                      collect::RingTransport::Create(plan.cpus, plan.ring_bytes_per_cpu, handler));

  collect::CollectorContext context;
  context.catalog = &catalog;
  transport->ShareWith(&context);
  context.attach_mode = options.attach_mode;
  context.filters = options.filters;
  set = BuildCollectors(plan, options);

  // Process names first, so tasks seen during the recording are named even
  // if the scan is slow on a big node.
  model::ProcessSnapshot start_processes = ScanProcessSnapshot(options);
  GN_ASSIGN_OR_RETURN(std::vector<collect::BatchFlusher> flushers,
                      AttachCollectors(set, context, *transport, intake, plan.cpus));
  GN_ASSIGN_OR_RETURN(TraceStart start, StartRecording(options, plan, set, *transport, *sink, host,
                                                       std::move(start_processes), session));

  session.switch_chain_checked = plan.check_switch_chain;
  // More lanes than rings would have nothing to read.
  std::unique_ptr<DrainLanes> lanes;
  if (size_t n = std::min(options.drain_lanes, plan.cpus.size()); n >= 2) {
    // The gate is open: no thread to be had is no reason to stop.
    if (auto started = DrainLanes::Start(n, *sink, static_cast<size_t>(max_cpu)); started.ok()) {
      lanes = std::move(*started);
      for (pid_t tid : lanes->tids()) start.drain_yield->Follow(tid);
    } else {
      log::Warning("record: {}; the drain reads and encodes alone", started.error().message);
    }
  }
  RecordDrain drain(*transport, flushers, intake.batches(), *sink, options.records_per_cpu_per_drain,
                    session.switch_chain_checked, session.start_ts, lanes.get());
  RunLoop(options, *transport, drain, *sink, set, start.workload_fd, *start.drain_yield, session, result.late_error);
  result.detach_abandoned = StopCollectors(options, set, *transport, flushers, plan.cpus,
                                            start.softirq_audit ? &*start.softirq_audit : nullptr, session);
  drain.DrainToEnd(session, result.late_error);
  // After the last drain and the held entries' flush: what the kernel
  // counted untimed after each CPU's last timed NET_RX entry goes in too.
  if (set.irq && plan.softirq && options.netrx_sample_every) {
    session.netrx_sample_every = options.netrx_sample_every;
    if (!result.detach_abandoned && !sink->failed())
      if (Status st = sink->WriteNetRxUntimedTotals(session.end_ts, set.irq->UntimedNetRx()); !st.ok())
        log::Warning("the untimed NET_RX softirq counts could not be written: {}", st.error().message);
    session.netrx_untimed = sink->netrx_untimed();
  }

  // Final accounting: per CPU and kind, per collector, per program, per map.
  LossAccount loss = AccountLoss(transport->LostByCpuAndKind(), intake, plan.cpus, set.collectors.size(),
                                 session.switch_chain_checked ? &drain.switch_chain() : nullptr);
  session.cpus = std::move(loss.cpus);
  if (start.softirq_audit) start.softirq_audit->ApplyTo(session);
  session.records_outside_cpus = intake.records_outside_cpus();
  for (size_t cpu = 0; cpu < intake.batches().size(); ++cpu)
    if (uint64_t early = intake.batches()[cpu].staging.written_early())
      log::Warning("CPU {}: {} events were written before their turn (more than {} were held with none yet "
                   "due: no batch flush read for that long), so their order with later events is not assured",
                   cpu, early, CpuStaging::kDefaultMaxHeld);
  ReportCollectors(set.collectors, intake, loss.collector_lost, session);
  FinishTrace(options, set, *sink, start.rdma_start, result);
  return result;
}

}  // namespace gpunoise::record
