#include "monitor/metrics_builder.h"

#include <set>

#include "model/kernel_log.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/strings.h"

namespace gpunoise::monitor {
namespace {

using openmetrics::Labels;
using openmetrics::Family;
using openmetrics::MetricFamily;
using openmetrics::MetricType;

std::string Cpu(uint32_t cpu) { return std::to_string(cpu); }
std::string Queue(int32_t q) { return q >= 0 ? std::to_string(q) : std::string(); }
double Seconds(uint64_t ns) { return static_cast<double>(ns) / 1e9; }

std::string IrqName(int32_t irq, const model::IrqTable* irqs) {
  if (irqs)
    if (auto it = irqs->find(irq); it != irqs->end()) return it->second.name;
  return {};
}

void AddIrqFamilies(const MetricsInput& in, std::vector<MetricFamily>& out) {
  const model::AggregateSnapshot& s = *in.totals;
  auto secs = Family("gpunoise_softirq_seconds", MetricType::kCounter, "seconds",
                     "Time spent in softirq handlers, by CPU and vector (includes hard irqs that interrupted them).");
  auto count = Family("gpunoise_softirqs", MetricType::kCounter, "", "Softirq handler runs, by CPU and vector.");
  for (const auto& c : s.softirqs)
    for (uint32_t v = 0; v < model::kNumSoftirqVecs; ++v) {
      if (!c.count[v]) continue;
      Labels l = {{"cpu", Cpu(c.cpu)}, {"vector", SoftirqLabel(v)}};
      secs.samples.push_back({l, Seconds(c.ns[v])});
      count.samples.push_back({l, static_cast<double>(c.count[v])});
    }
  out.push_back(std::move(secs));
  out.push_back(std::move(count));
  if (in.unreported_softirqs) {
    // Every vector, zeros too: an alert's rate() needs the series before
    // the first one is counted.
    auto unreported = Family("gpunoise_softirqs_unreported", MetricType::kCounter, "",
                             "Softirqs the kernel counted (/proc/softirqs) that no program saw at their tracepoint, "
                             "by vector, over all CPUs since the monitor started; a lower bound.");
    for (uint32_t v = 0; v < model::kNumSoftirqVecs; ++v)
      unreported.samples.push_back({{{"vector", SoftirqLabel(v)}}, static_cast<double>((*in.unreported_softirqs)[v])});
    out.push_back(std::move(unreported));
  }

  auto hsecs = Family("gpunoise_hardirq_seconds", MetricType::kCounter, "seconds",
                      "Time spent in hard-irq handlers, by CPU and IRQ (with the NIC device and queue it serves).");
  auto hcount = Family("gpunoise_hardirqs", MetricType::kCounter, "", "Hard-irq handler runs, by CPU and IRQ.");
  for (const auto& h : s.hardirqs) {
    std::string device, queue;
    if (in.irqs)
      if (auto it = in.irqs->find(h.irq); it != in.irqs->end()) {
        device = it->second.device;
        queue = Queue(it->second.queue);
      }
    Labels l = {{"cpu", Cpu(h.cpu)}, {"irq", std::to_string(h.irq)}, {"name", IrqName(h.irq, in.irqs)},
                {"device", device}, {"queue", queue}};
    hsecs.samples.push_back({l, Seconds(h.ns)});
    hcount.samples.push_back({l, static_cast<double>(h.count)});
  }
  out.push_back(std::move(hsecs));
  out.push_back(std::move(hcount));

  auto vsecs = Family("gpunoise_system_vector_seconds", MetricType::kCounter, "seconds",
                      "Time spent in x86 system vectors (local timer, IPIs, irq_work, ...), by CPU.");
  auto vcount = Family("gpunoise_system_vectors", MetricType::kCounter, "", "x86 system vector runs, by CPU.");
  for (const auto& c : s.vectors)
    for (uint32_t k = 0; k < model::kNumVectorKinds; ++k) {
      if (!c.count[k]) continue;
      Labels l = {{"cpu", Cpu(c.cpu)}, {"vector", std::string(model::VectorName(static_cast<model::VectorKind>(k)))}};
      vsecs.samples.push_back({l, Seconds(c.ns[k])});
      vcount.samples.push_back({l, static_cast<double>(c.count[k])});
    }
  out.push_back(std::move(vsecs));
  out.push_back(std::move(vcount));
}

openmetrics::HistogramSample ToHistogram(const model::Log2Histogram& h, Labels labels) {
  openmetrics::HistogramSample out;
  out.labels = std::move(labels);
  uint64_t cumulative = 0;
  // The last slot is open-ended: it only reaches the +Inf bucket.
  for (size_t i = 0; i + 1 < h.slots.size(); ++i) {
    cumulative += h.slots[i];
    out.buckets.emplace_back(model::Log2Histogram::UpperBoundSeconds(i), cumulative);
  }
  out.count = h.count;
  out.sum = Seconds(h.sum_ns);
  return out;
}

void AddSchedFamilies(const MetricsInput& in, std::vector<MetricFamily>& out) {
  const model::AggregateSnapshot& s = *in.totals;
  auto hist = Family("gpunoise_runqueue_latency_seconds", MetricType::kHistogram, "seconds",
                     "Run-queue latency (runnable to running), all CPUs, log2 buckets; threads=all|focus.");
  hist.histograms.push_back(ToHistogram(model::TotalRunqueue(s, false), {{"threads", "all"}}));
  hist.histograms.push_back(ToHistogram(model::TotalRunqueue(s, true), {{"threads", "focus"}}));
  out.push_back(std::move(hist));

  auto wait = Family("gpunoise_runqueue_wait_seconds", MetricType::kCounter, "seconds",
                     "Run-queue waiting that ended on this CPU; threads=all|focus.");
  auto waits = Family("gpunoise_runqueue_waits", MetricType::kCounter, "", "Run-queue waits that ended on this CPU.");
  for (const auto& c : s.runqueue) {
    for (bool focus : {false, true}) {
      const model::Log2Histogram& h = focus ? c.focus : c.all;
      if (!h.count) continue;
      Labels l = {{"cpu", Cpu(c.cpu)}, {"threads", focus ? "focus" : "all"}};
      wait.samples.push_back({l, Seconds(h.sum_ns)});
      waits.samples.push_back({l, static_cast<double>(h.count)});
    }
  }
  out.push_back(std::move(wait));
  out.push_back(std::move(waits));

  auto switches = Family("gpunoise_focus_context_switches", MetricType::kCounter, "",
                         "Context switches of focus threads (switched out), by CPU.");
  auto preempt = Family("gpunoise_focus_preemptions", MetricType::kCounter, "",
                        "Focus threads pushed off their CPU, by culprit: a task (involuntary switch, with "
                        "the class of the task that took the CPU), a hard irq or a softirq.");
  auto interrupted = Family("gpunoise_focus_interrupted_seconds", MetricType::kCounter, "seconds",
                            "Interrupt time that ran over focus threads, by CPU and culprit (hardirq, softirq).");
  auto fwait = Family("gpunoise_focus_runqueue_wait_seconds", MetricType::kCounter, "seconds",
                      "Run-queue wait of focus threads, by CPU and what made them wait (wakeup, preemption).");
  auto behind = Family("gpunoise_focus_runqueue_wait_interrupted_seconds", MetricType::kCounter, "seconds",
                       "Run-queue wait of focus threads that interrupts took (hardirq, softirq) or that began "
                       "before the CPU's last 16 runs (unknown); the rest went to other tasks and idle.");
  auto oncpu = Family("gpunoise_focus_oncpu_seconds", MetricType::kCounter, "seconds",
                      "Time focus threads ran, by CPU.");
  for (const auto& f : s.focus) {
    std::string cpu = Cpu(f.cpu);
    switches.samples.push_back({{{"cpu", cpu}}, static_cast<double>(f.switches)});
    for (uint32_t k = 0; k < model::kNumTaskClasses; ++k) {
      if (!f.preempted_by[k]) continue;
      preempt.samples.push_back(
          {{{"cpu", cpu}, {"culprit", "task"}, {"task_class", std::string(model::TaskClassName(static_cast<model::TaskClass>(k)))}},
           static_cast<double>(f.preempted_by[k])});
    }
    preempt.samples.push_back({{{"cpu", cpu}, {"culprit", "hardirq"}, {"task_class", ""}}, static_cast<double>(f.hardirq_count)});
    preempt.samples.push_back({{{"cpu", cpu}, {"culprit", "softirq"}, {"task_class", ""}}, static_cast<double>(f.softirq_count)});
    interrupted.samples.push_back({{{"cpu", cpu}, {"culprit", "hardirq"}}, Seconds(f.hardirq_ns)});
    interrupted.samples.push_back({{{"cpu", cpu}, {"culprit", "softirq"}}, Seconds(f.softirq_ns)});
    fwait.samples.push_back({{{"cpu", cpu}, {"after", "wakeup"}}, Seconds(f.wait_woken_ns)});
    fwait.samples.push_back({{{"cpu", cpu}, {"after", "preemption"}}, Seconds(f.wait_preempted_ns)});
    behind.samples.push_back({{{"cpu", cpu}, {"by", "hardirq"}}, Seconds(f.wait_hardirq_ns)});
    behind.samples.push_back({{{"cpu", cpu}, {"by", "softirq"}}, Seconds(f.wait_softirq_ns)});
    behind.samples.push_back({{{"cpu", cpu}, {"by", "unknown"}}, Seconds(f.wait_unknown_ns)});
    oncpu.samples.push_back({{{"cpu", cpu}}, Seconds(f.oncpu_ns)});
  }
  for (auto* f : {&switches, &preempt, &interrupted, &fwait, &behind, &oncpu}) out.push_back(std::move(*f));

  auto procs = Family("gpunoise_focus_processes", MetricType::kGauge, "", "Processes in the focus set now.");
  procs.samples.push_back({{}, static_cast<double>(in.focus_processes)});
  out.push_back(std::move(procs));
  auto jobs = Family("gpunoise_focus_job_processes", MetricType::kGauge, "",
                     "Focus processes by the SLURM job whose cgroup (job_<id>) they run in; at most 16 jobs, "
                     "the rest under slurm_job_id=\"other\".");
  for (const auto& [job, n] : in.focus_slurm_jobs)
    jobs.samples.push_back({{{"slurm_job_id", job}}, static_cast<double>(n)});
  out.push_back(std::move(jobs));
}

void AddSamplerFamilies(const MetricsInput& in, std::vector<MetricFamily>& out) {
  auto samples = Family("gpunoise_cpu_samples", MetricType::kCounter, "",
                        "Sampler hits on focus CPUs: what ran (context task|softirq|hardirq|idle; who: comm, "
                        "vector or IRQ; class of the current task).");
  for (const auto& c : in.totals->samples) {
    std::string who;
    switch (c.context) {
      case model::SampleContext::kTask: who = std::string(c.comm.view()); break;
      case model::SampleContext::kSoftirq: who = SoftirqLabel(static_cast<uint32_t>(c.id)); break;
      case model::SampleContext::kHardirq: {
        std::string name = IrqName(c.id, in.irqs);
        who = c.id <= -1000 ? std::string(model::VectorName(static_cast<model::VectorKind>(-1000 - c.id)))
                            : (name.empty() ? "irq" + std::to_string(c.id) : name);
        break;
      }
      case model::SampleContext::kIdle: who = "idle"; break;
    }
    samples.samples.push_back({{{"cpu", Cpu(c.cpu)},
                                {"context", std::string(model::SampleContextName(c.context))},
                                {"class", std::string(model::TaskClassName(c.task_class))},
                                {"who", who}},
                               static_cast<double>(c.count)});
  }
  // Two keys can name the same series (comms that differ only past what a
  // label keeps do not exist, but task classes can map together): merge.
  std::sort(samples.samples.begin(), samples.samples.end(),
            [](const auto& a, const auto& b) { return a.labels < b.labels; });
  std::vector<openmetrics::Sample> merged;
  for (auto& s : samples.samples) {
    if (!merged.empty() && merged.back().labels == s.labels) merged.back().value += s.value;
    else merged.push_back(std::move(s));
  }
  samples.samples = std::move(merged);
  out.push_back(std::move(samples));
  auto hz = Family("gpunoise_sampler_frequency_hertz", MetricType::kGauge, "hertz",
                   "Sampling rate per focus CPU (0: sampler off).");
  hz.samples.push_back({{}, static_cast<double>(in.sampler_cpus.empty() ? 0 : in.sample_hz)});
  out.push_back(std::move(hz));
  auto cpus = Family("gpunoise_sampler_cpus", MetricType::kGauge, "", "CPUs the sampler watches now.");
  cpus.samples.push_back({{}, static_cast<double>(in.sampler_cpus.size())});
  out.push_back(std::move(cpus));
}

void AddNetFamilies(const MetricsInput& in, std::vector<MetricFamily>& out) {
  const model::NetSnapshot& net = in.totals->net;
  static const model::NetNames kNoNames;
  const model::NetNames& names = in.net_names ? *in.net_names : kNoNames;

  // Per device, queue and direction (summed over CPUs).
  std::map<std::tuple<std::string, std::string, model::NetDirection>, model::DeviceQueueCount> dev;
  for (const auto& d : net.devices) {
    auto& t = dev[{model::DeviceLabel(d.dev, names), Queue(d.queue), d.dir}];
    t.packets += d.packets;
    t.bytes += d.bytes;
    t.errors += d.errors;
  }
  auto packets = Family("gpunoise_net_packets", MetricType::kCounter, "",
                        "Packets through network devices, by device, queue and direction (rx, tx, queued).");
  auto bytes = Family("gpunoise_net_bytes", MetricType::kCounter, "bytes",
                      "Bytes through network devices, by device, queue and direction.");
  auto errors = Family("gpunoise_net_tx_errors", MetricType::kCounter, "",
                       "Packets a driver refused to transmit, by device and queue.");
  auto timeouts = Family("gpunoise_net_tx_timeouts", MetricType::kCounter, "",
                         "TX watchdog timeouts (net_dev_xmit_timeout), by device and queue.");
  for (const auto& [key, t] : dev) {
    const auto& [device, queue, dir] = key;
    if (dir == model::NetDirection::kTxTimeout) {
      timeouts.samples.push_back({{{"device", device}, {"queue", queue}}, static_cast<double>(t.packets)});
      continue;
    }
    Labels l = {{"device", device}, {"queue", queue}, {"direction", std::string(model::NetDirectionName(dir))}};
    packets.samples.push_back({l, static_cast<double>(t.packets)});
    bytes.samples.push_back({l, static_cast<double>(t.bytes)});
    if (dir == model::NetDirection::kTx && t.errors)
      errors.samples.push_back({{{"device", device}, {"queue", queue}}, static_cast<double>(t.errors)});
  }
  for (auto* f : {&packets, &bytes, &errors, &timeouts}) out.push_back(std::move(*f));

  std::map<std::tuple<std::string, std::string, uint32_t>, model::NapiCount> napi;
  for (const auto& n : net.napi) {
    auto& t = napi[{model::DeviceLabel(n.dev, names), Queue(n.queue), n.cpu}];
    t.polls += n.polls;
    t.full_budget += n.full_budget;
    t.work += n.work;
  }
  auto polls = Family("gpunoise_napi_polls", MetricType::kCounter, "", "NAPI polls, by device, queue and CPU.");
  auto full = Family("gpunoise_napi_full_budget_polls", MetricType::kCounter, "",
                     "NAPI polls that used their whole budget (work was left: the RX storm signal).");
  auto work = Family("gpunoise_napi_packets", MetricType::kCounter, "", "Packets NAPI polls processed.");
  for (const auto& [key, t] : napi) {
    const auto& [device, queue, cpu] = key;
    Labels l = {{"device", device}, {"queue", queue}, {"cpu", Cpu(cpu)}};
    polls.samples.push_back({l, static_cast<double>(t.polls)});
    full.samples.push_back({l, static_cast<double>(t.full_budget)});
    work.samples.push_back({l, static_cast<double>(t.work)});
  }
  for (auto* f : {&polls, &full, &work}) out.push_back(std::move(*f));

  std::map<std::pair<std::string, std::string>, uint64_t> drops;
  for (const auto& d : net.drops) drops[{model::DeviceLabel(d.dev, names), model::DropReasonLabel(d.reason, names)}] += d.packets;
  auto dropf = Family("gpunoise_net_drops", MetricType::kCounter, "",
                      "Packets the kernel dropped (kfree_skb), by device and drop reason.");
  for (const auto& [key, n] : drops)
    dropf.samples.push_back({{{"device", key.first}, {"reason", key.second}}, static_cast<double>(n)});
  out.push_back(std::move(dropf));

  auto dql = Family("gpunoise_dql_stalls", MetricType::kCounter, "",
                    "TX byte-queue-limit stalls the kernel detected (napi:dql_stall_detected, Linux 6.10+).");
  dql.samples.push_back({{}, static_cast<double>(in.dql_stalls)});
  out.push_back(std::move(dql));
}

void AddKernelFamilies(const MetricsInput& in, std::vector<MetricFamily>& out) {
  auto k = Family("gpunoise_kernel_trouble_events", MetricType::kCounter, "",
                  "The kernel's own trouble counters since boot (/sys/kernel/*_count): softlockup, "
                  "hardlockup, rcu_stall, warn, oops.");
  for (const auto& [name, value] : in.totals->kernel) {
    std::string kind = name;
    if (EndsWith(kind, "_count")) kind.resize(kind.size() - 6);
    k.samples.push_back({{{"kind", kind}}, static_cast<double>(value)});
  }
  out.push_back(std::move(k));
  if (!in.kernel_log_read) return;
  // The classes of docs/record.md's kernel log, every one present (0 until
  // seen), so an alert rule can use rate() from the first scrape.
  auto log = Family("gpunoise_kernel_log_messages", MetricType::kCounter, "",
                    "Kernel log messages of a known class since the monitor started (tx_timeout, link_down, "
                    "nic_reset, soft_lockup, rcu_stall, hung_task, pcie_aer, ...), by class and the device they name.");
  std::set<std::string> seen;
  for (const auto& [key, n] : in.kernel_log) {
    log.samples.push_back({{{"class", key.first}, {"device", key.second}}, static_cast<double>(n)});
    seen.insert(key.first);
  }
  for (const auto& p : model::KernelLogPatterns())
    if (seen.insert(std::string(p.name)).second)
      log.samples.push_back({{{"class", std::string(p.name)}, {"device", ""}}, 0.0});
  out.push_back(std::move(log));
  auto lost = Family("gpunoise_kernel_log_lost", MetricType::kCounter, "",
                     "Kernel log records overwritten in the kernel's ring before the monitor read them.");
  lost.samples.push_back({{}, static_cast<double>(in.kernel_log_lost)});
  out.push_back(std::move(lost));
}

void AddFindingFamilies(const MetricsInput& in, std::vector<MetricFamily>& out) {
  auto active = Family("gpunoise_finding_active", MetricType::kGauge, "",
                       "1 while a detector has an active finding (an episode in progress), else 0.");
  for (std::string_view d : kDetectorNames) {
    bool on = std::any_of(in.active.begin(), in.active.end(), [&](const ActiveFinding& f) { return f.detector == d; });
    active.samples.push_back({{{"detector", std::string(d)}}, on ? 1.0 : 0.0});
  }
  out.push_back(std::move(active));
  auto total = Family("gpunoise_findings", MetricType::kCounter, "",
                      "Finding episodes started, by detector (one per episode, however long).");
  for (std::string_view d : kDetectorNames) {
    auto it = in.findings_total.find(std::string(d));
    total.samples.push_back({{{"detector", std::string(d)}}, it == in.findings_total.end() ? 0.0 : static_cast<double>(it->second)});
  }
  out.push_back(std::move(total));
  auto info = Family("gpunoise_finding", MetricType::kInfo, "",
                     "Each active finding: detector, kind, where (cpu, device, queue) and culprit.");
  for (const ActiveFinding& f : in.active)
    info.samples.push_back({{{"detector", f.detector}, {"kind", f.kind},
                             {"cpu", f.cpu >= 0 ? std::to_string(f.cpu) : ""}, {"device", f.device},
                             {"queue", Queue(f.queue)}, {"culprit", f.culprit}},
                            1});
  // Two findings with the same labels (one detector firing twice for one
  // place) are one series.
  std::sort(info.samples.begin(), info.samples.end(), [](const auto& a, const auto& b) { return a.labels < b.labels; });
  info.samples.erase(std::unique(info.samples.begin(), info.samples.end(),
                                 [](const auto& a, const auto& b) { return a.labels == b.labels; }),
                     info.samples.end());
  out.push_back(std::move(info));
}

void AddSelfFamilies(const MetricsInput& in, std::vector<MetricFamily>& out) {
  auto build = Family("gpunoise_build", MetricType::kInfo, "", "The gpunoise version serving these metrics.");
  build.samples.push_back({{{"version", in.version}}, 1});
  out.push_back(std::move(build));
  auto up = Family("gpunoise_collector_up", MetricType::kGauge, "",
                   "1 when a collector is attached (fully or in part), 0 when it is disabled.");
  auto degraded = Family("gpunoise_collector_degraded", MetricType::kGauge, "",
                         "1 when a collector runs with some of its events missing on this kernel.");
  for (const auto& c : in.collectors) {
    if (c.state == model::CollectorState::kNotRequested) continue;
    up.samples.push_back({{{"collector", c.name}}, c.state == model::CollectorState::kDisabled ? 0.0 : 1.0});
    degraded.samples.push_back({{{"collector", c.name}}, c.state == model::CollectorState::kDegraded ? 1.0 : 0.0});
  }
  out.push_back(std::move(up));
  out.push_back(std::move(degraded));
  if (!in.collector_bpf_ns.empty()) {
    auto bpf = Family("gpunoise_bpf_program_seconds", MetricType::kCounter, "seconds",
                      "Time the kernel spent in each collector's eBPF programs (needs kernel.bpf_stats_enabled=1).");
    for (const auto& [name, ns] : in.collector_bpf_ns) bpf.samples.push_back({{{"collector", name}}, Seconds(ns)});
    out.push_back(std::move(bpf));
  }
  auto lost = Family("gpunoise_lost_events", MetricType::kCounter, "",
                     "Updates the kernel side could not make (a full map) or records it could not store "
                     "(flight recorder ring full), by where.");
  lost.samples.push_back({{{"where", "aggregates"}}, static_cast<double>(in.totals->lost)});
  lost.samples.push_back({{{"where", "flight_recorder"}}, static_cast<double>(in.flight_recorder.lost)});
  out.push_back(std::move(lost));

  auto interval = Family("gpunoise_monitor_interval_seconds", MetricType::kGauge, "seconds",
                         "How often the monitor reads the kernel's counters and runs the detectors.");
  interval.samples.push_back({{}, in.interval_seconds});
  out.push_back(std::move(interval));
  auto intervals = Family("gpunoise_monitor_intervals", MetricType::kCounter, "", "Intervals completed.");
  intervals.samples.push_back({{}, static_cast<double>(in.intervals)});
  out.push_back(std::move(intervals));

  const FlightRecorderStats& fr = in.flight_recorder;
  auto enabled = Family("gpunoise_flight_recorder_enabled", MetricType::kGauge, "", "1 when the flight recorder runs.");
  enabled.samples.push_back({{}, fr.enabled ? 1.0 : 0.0});
  out.push_back(std::move(enabled));
  if (fr.enabled) {
    auto ev = Family("gpunoise_flight_recorder_events", MetricType::kGauge, "", "Detailed events in the ring now.");
    ev.samples.push_back({{}, static_cast<double>(fr.events)});
    auto by = Family("gpunoise_flight_recorder_memory_bytes", MetricType::kGauge, "bytes", "Memory the ring holds.");
    by.samples.push_back({{}, static_cast<double>(fr.bytes)});
    auto win = Family("gpunoise_flight_recorder_window_seconds", MetricType::kGauge, "seconds",
                      "How far back the ring reaches now.");
    win.samples.push_back({{}, fr.window_seconds});
    for (auto* f : {&ev, &by, &win}) out.push_back(std::move(*f));
  }
  auto dumps = Family("gpunoise_flight_recorder_dumps", MetricType::kCounter, "",
                      "Flight-recorder dumps by result: written, rate_limited, too_big (over max-dump-bytes "
                      "alone), busy (one was still being written), failed.");
  for (std::string_view r : {"written", "rate_limited", "too_big", "busy", "failed"}) {
    auto it = fr.dumps.find(std::string(r));
    dumps.samples.push_back({{{"result", std::string(r)}}, it == fr.dumps.end() ? 0.0 : static_cast<double>(it->second)});
  }
  out.push_back(std::move(dumps));
  auto deleted = Family("gpunoise_flight_recorder_dumps_deleted", MetricType::kCounter, "",
                        "Older dumps deleted to keep max-dumps and max-dump-bytes.");
  deleted.samples.push_back({{}, static_cast<double>(fr.dumps_deleted)});
  out.push_back(std::move(deleted));

  // The standard process metrics Prometheus client libraries export.
  auto cpu = Family("process_cpu_seconds", MetricType::kCounter, "seconds", "User and system CPU time of this process.");
  cpu.samples.push_back({{}, in.self.cpu_seconds});
  auto rss = Family("process_resident_memory_bytes", MetricType::kGauge, "bytes", "Resident memory of this process.");
  rss.samples.push_back({{}, static_cast<double>(in.self.resident_bytes)});
  auto start = Family("process_start_time_seconds", MetricType::kGauge, "seconds",
                      "When this process started, in seconds since the Unix epoch.");
  start.samples.push_back({{}, in.self.start_time_seconds});
  for (auto* f : {&cpu, &rss, &start}) out.push_back(std::move(*f));
}

// NVML's clock-throttle reason bits as label values; idle is left out (not
// a limit on a busy GPU).
struct ThrottleBit {
  uint64_t bit;
  const char* reason;
};
constexpr ThrottleBit kThrottleBits[] = {
    {gpu::kThrottleApplicationsClocks, "applications_clocks"},
    {gpu::kThrottleSwPowerCap, "sw_power_cap"},
    {gpu::kThrottleHwSlowdown, "hw_slowdown"},
    {gpu::kThrottleSyncBoost, "sync_boost"},
    {gpu::kThrottleSwThermal, "sw_thermal"},
    {gpu::kThrottleHwThermal, "hw_thermal"},
    {gpu::kThrottleHwPowerBrake, "hw_power_brake"},
    {gpu::kThrottleDisplayClocks, "display_clocks"},
};

// One GPU that runs slower than its peers holds back every collective of a
// synchronous job, so a straggler node's GPUs are worth watching beside its
// CPUs. Absent when NVML is not there.
void AddGpuFamilies(const MetricsInput& in, std::vector<MetricFamily>& out) {
  if (in.gpus.empty()) return;
  auto info = Family("gpunoise_gpu", MetricType::kInfo, "", "Each GPU NVML lists: its index, name and UUID.");
  for (const auto& g : in.gpus)
    info.samples.push_back({{{"gpu", std::to_string(g.index)}, {"name", g.name}, {"uuid", g.uuid}}, 1});
  out.push_back(std::move(info));

  auto clock = Family("gpunoise_gpu_sm_clock_hertz", MetricType::kGauge, "hertz", "SM clock now.");
  auto util = Family("gpunoise_gpu_utilization_ratio", MetricType::kGauge, "",
                     "Share of the last sample period in which a kernel ran (NVML's GPU utilization).");
  auto mem_util = Family("gpunoise_gpu_memory_utilization_ratio", MetricType::kGauge, "",
                         "Share of the last sample period in which device memory was read or written.");
  auto mem = Family("gpunoise_gpu_memory_used_bytes", MetricType::kGauge, "bytes", "Device memory in use.");
  auto temp = Family("gpunoise_gpu_temperature_celsius", MetricType::kGauge, "celsius", "GPU core temperature.");
  auto power = Family("gpunoise_gpu_power_watts", MetricType::kGauge, "watts", "Board power draw.");
  auto held = Family("gpunoise_gpu_clocks_held_back", MetricType::kGauge, "",
                     "1 while NVML reports this reason holding the clocks down (hw_* and sw_thermal slow a "
                     "training step; sw_power_cap often does).");
  for (const auto& s : in.gpu_samples) {
    Labels l = {{"gpu", std::to_string(s.gpu)}};
    if (s.sm_clock_mhz) clock.samples.push_back({l, *s.sm_clock_mhz * 1e6});
    if (s.gpu_utilization) util.samples.push_back({l, *s.gpu_utilization / 100.0});
    if (s.memory_utilization) mem_util.samples.push_back({l, *s.memory_utilization / 100.0});
    if (s.memory_used_bytes) mem.samples.push_back({l, *s.memory_used_bytes});
    if (s.temperature_c) temp.samples.push_back({l, *s.temperature_c});
    if (s.power_w) power.samples.push_back({l, *s.power_w});
    if (s.throttle_reasons)
      for (const auto& b : kThrottleBits) {
        Labels r = l;
        r.emplace_back("reason", b.reason);
        held.samples.push_back({r, (*s.throttle_reasons & b.bit) ? 1.0 : 0.0});
      }
  }
  for (auto* f : {&clock, &util, &mem_util, &mem, &temp, &power, &held}) out.push_back(std::move(*f));
}

}  // namespace

std::string SoftirqLabel(uint32_t vec) { return Lower(model::SoftirqName(vec)); }

std::vector<MetricFamily> BuildMetrics(const MetricsInput& in) {
  std::vector<MetricFamily> out;
  static const model::AggregateSnapshot kEmpty;
  MetricsInput safe = in;
  if (!safe.totals) safe.totals = &kEmpty;
  AddIrqFamilies(safe, out);
  AddSchedFamilies(safe, out);
  AddSamplerFamilies(safe, out);
  AddNetFamilies(safe, out);
  if (safe.nic) AddNicFamilies(*safe.nic, out);
  AddKernelFamilies(safe, out);
  AddFindingFamilies(safe, out);
  AddGpuFamilies(safe, out);
  AddSelfFamilies(safe, out);
  return out;
}

}  // namespace gpunoise::monitor
