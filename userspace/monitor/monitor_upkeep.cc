#include "monitor/monitor_daemon.h"

extern "C" {
#include "bpf/net.h"
}

#ifndef GPUNOISE_VERSION
#define GPUNOISE_VERSION "0.1.0"
#endif

namespace gpunoise::monitor::daemon {

void Monitor::ReadDeviceStatistics(model::NetSnapshot* net) {
  auto links = link_stats_.Read();
  if (!links.ok()) {
    if (!link_stats_warned_) log::Warning("monitor: {}", links.error().message);
    link_stats_warned_ = true;
    return;
  }
  collect::AppendDeviceStatistics(*links, names_.own_netns, net, &names_.devices,
                                  collect::DeviceNaming::kFollowRenames);
}

void Monitor::RefreshNames(const model::AggregateSnapshot& s) {
  for (const auto& c : net_) c->ReadDeviceNames(&names_.devices);
  for (const auto& d : s.net.drops)
    if (!names_.drop_reasons.count(d.reason))
      names_.drop_reasons.emplace(d.reason, drops_->reason_names().Name(d.reason));
}

void Monitor::RefreshFocus(uint64_t now) {
  if (now < next_focus_refresh_) return;
  next_focus_refresh_ = now + options_.focus_refresh_ns;
  FocusResolution r = ResolveFocus(options_.focus);
  auto left_out = focus_map_->Assign(r.ids);
  if (!left_out.ok()) {
    log::Warning("monitor: {}", left_out.error().message);
  } else if (*left_out) {
    log::Warning("monitor: {} focus threads did not fit the focus map and are not focus", *left_out);
  }
  if (r.processes.size() != focus_processes_ && !options_.focus.empty())
    log::Info("monitor: focus: {} processes, {} threads", r.processes.size(), r.ids.size());
  focus_processes_ = r.processes.size();
  // Their jobs: the SLURM series, and what job-level alerts match.
  FocusJobs jobs = ReadFocusJobs(r.processes);
  if (jobs.ids != focus_jobs_.ids && !jobs.ids.empty())
    log::Info("monitor: focus processes of job(s) {}", fmt::join(jobs.ids, ", "));
  focus_jobs_ = std::move(jobs);
  std::set<std::string> node_jobs = focus_jobs_.ids;
  node_jobs.insert(options_.jobs.begin(), options_.jobs.end());
  trigger_->SetNodeJobs(std::move(node_jobs));
  bool enabled = !focus_map_->ids().empty();
  irqtime_->SetFocusEnabled(enabled);
  runqlat_->SetFocusEnabled(enabled);
  if (sampler_) sampler_->SetFocusEnabled(enabled);
}

// Before any thread starts (the HTTP workers, the dump writer inherit it).
void Monitor::PlaceOwnThreads() {
  if (options_.sample_isolated) return;
  CpuIsolation iso = ReadCpuIsolation();
  if (iso.All().empty() && options_.focus_cpus.empty()) return;
  std::vector<int> housekeeping = HousekeepingCpus(OnlineCpus(), iso, options_.focus_cpus);
  if (housekeeping.empty()) {
    log::Warning("monitor: every online CPU is isolated or a focus CPU; the monitor's threads stay where they are");
    return;
  }
  if (!PinProcessTo(housekeeping))
    log::Warning("monitor: failed to move the monitor's threads to CPUs {}: {}", FormatCpuList(housekeeping),
                 std::strerror(errno));
  else
    log::Info("monitor: own threads on CPUs {} (off isolated and focus CPUs)", FormatCpuList(housekeeping));
}

void Monitor::ReconcileSampler() {
  if (!sampler_) {
    sampler_cpus_.clear();
    return;
  }
  std::vector<int> online = OnlineCpus();
  std::vector<int> wanted = SamplerCpus(options_.focus_cpus.empty() ? online : options_.focus_cpus,
                                        ReadCpuIsolation(), options_.sample_isolated);
  std::vector<int> running = sampler_->Reconcile(options_.sample_hz > 0 ? wanted : std::vector<int>{}, online,
                                                 std::max(1, options_.sample_hz));
  if (running != sampler_cpus_ && !sampler_cpus_.empty())
    log::Info("monitor: sampler now on CPUs {}", running.empty() ? "(none)" : FormatCpuList(running));
  sampler_cpus_ = std::move(running);
}

void Monitor::RescanIrqs(uint64_t now) {
  if (now < next_irq_scan_) return;
  next_irq_scan_ = now + kIrqRescanNs;
  model::IrqTable irqs = collect::ScanIrqs();
  collect::MapNicIrqs(&irqs);
  irqs_ = std::move(irqs);
}

void Monitor::TrackActivity(const model::AggregateSnapshot& snapshot, const model::AggregateSnapshot& delta,
                            uint64_t now) {
  auto touch = [&](const model::NetDeviceKey& dev, bool active) {
    auto [it, inserted] = device_active_.emplace(dev, now);
    if (active) it->second = now;
  };
  for (const auto& d : snapshot.net.devices) touch(d.dev, false);
  for (const auto& n : snapshot.net.napi) touch(n.dev, false);
  for (const auto& d : snapshot.net.drops) touch(d.dev, false);
  for (const auto& d : delta.net.devices) touch(d.dev, d.packets || d.errors);
  for (const auto& n : delta.net.napi) touch(n.dev, n.polls != 0);
  for (const auto& d : delta.net.drops) touch(d.dev, d.packets != 0);
}

// Devices that vanished keep their counters in the kernel's maps until
// deleted; over weeks of containers coming and going that would fill the
// maps and the metrics. A device is forgotten when its counters have not
// moved for stale-after and it does not exist in our own namespace (where
// we can check). The per-CPU backlog (ifindex 0 here) is never forgotten.
void Monitor::Prune(uint64_t now) {
  if (now < next_prune_) return;
  next_prune_ = now + std::clamp<uint64_t>(options_.stale_after_ns / 2, 1'000'000'000, kPruneEveryNs);
  std::set<model::NetDeviceKey> gone;
  for (const auto& [dev, last] : device_active_) {
    if (now - last < options_.stale_after_ns) continue;
    bool ours = dev.netns == names_.own_netns;
    if (ours && dev.ifindex == 0) continue;
    char name[IF_NAMESIZE];
    if (ours && ::if_indextoname(dev.ifindex, name)) continue;
    gone.insert(dev);
  }
  if (!gone.empty()) {
    size_t deleted = 0;
    for (auto& c : net_) deleted += c->ForgetDevices(gone);
    for (const auto& dev : gone) {
      log::Debug("monitor: forgot device {}", model::DeviceLabel(dev, names_));
      device_active_.erase(dev);
      names_.devices.erase(dev);
    }
    log::Info("monitor: forgot {} network devices that are gone ({} kernel map entries)", gone.size(), deleted);
  }
  if (sampler_) {
    size_t deleted = sampler_->Prune(now, options_.stale_after_ns);
    if (deleted) log::Debug("monitor: forgot {} sampled comms not seen for a while", deleted);
  }
}

void Monitor::HandleChanges(const FindingTracker::Changes& changes, uint64_t now) {
  for (const Episode& e : changes.started) {
    log::Warning("finding {} ({}): {}", e.what.detector, e.what.kind, e.what.title);
    for (const std::string& line : e.evidence) log::Info("  {}", line);
    if (!recorder_) continue;
    DumpRequest req;
    req.detector = e.what.detector;
    req.title = e.what.title;
    req.evidence = e.evidence;
    req.finding_start = e.start;
    req.now = now;
    req.irqs = irqs_;
    DumpOutcome outcome = recorder_->RequestDump(std::move(req));
    if (outcome == DumpOutcome::kStarted)
      log::Info("monitor: writing the last {:g} s of events into {}", static_cast<double>(options_.flight_recorder_ns) / 1e9,
                options_.dump_dir);
    else
      log::Info("monitor: no flight-recorder dump for this finding ({})", DumpOutcomeName(outcome));
  }
  for (const Episode& e : changes.ended)
    log::Info("finding {} ({}) ended after {:.1f} s: {}", e.what.detector, e.what.kind,
              static_cast<double>(e.last_seen - e.start) / 1e9, e.what.title);
}


void Monitor::OpenNvml() {
  auto api = gpu::LoadNvml();
  if (!api.ok()) {
    log::Info("monitor: no GPU metrics: {}", api.error().message);
    return;
  }
  auto sampler = gpu::NvmlSampler::Create(*api);
  if (!sampler.ok()) {
    log::Info("monitor: no GPU metrics: {}", sampler.error().message);
    return;
  }
  nvml_ = std::move(*sampler);
  log::Info("monitor: GPU metrics for {} GPUs (NVML)", nvml_->gpus().size());
}

std::vector<model::KernelLogEntry> Monitor::ReadKernelLog() {
  std::vector<model::KernelLogEntry> entries;
  if (!kmsg_) return entries;
  if (Status st = kmsg_->ReadAvailable(&entries); !st.ok()) log::Warning("monitor: {}", st.error().message);
  for (const auto& e : entries)
    if (e.cls != model::KernelLogClass::kNone)
      ++kernel_log_counts_[{std::string(model::KernelLogClassName(e.cls)), e.about}];
  // The flight recorder keeps them for its dumps, before any finding they
  // start asks for one (so the dump holds the line that triggered it).
  if (recorder_) {
    uint64_t lost = kmsg_->lost();
    recorder_->AddKernelLog(entries, lost - kernel_log_lost_fed_, BoottimeNs());
    kernel_log_lost_fed_ = lost;
  }
  return entries;
}

void Monitor::Publish(uint64_t now) {
  MetricsInput in;
  if (nvml_) {
    nvml_->SampleOnce(now);
    in.gpus = nvml_->gpus();
    in.gpu_samples = nvml_->TakeSamples();
  }
  in.totals = &previous_;
  in.irqs = &irqs_;
  in.net_names = &names_;
  bool stats = BpfStatsEnabled();
  for (collect::Collector* c : AggregateCollectors()) {
    in.collectors.push_back(c->report());
    if (stats) in.collector_bpf_ns[std::string(c->name())] = c->ProgramRunTimeNs();
  }
  if (recorder_) {
    for (const auto& r : recorder_->reports()) in.collectors.push_back(r);
    in.flight_recorder = recorder_->Stats();
  }
  in.active = tracker_.Active();
  in.findings_total = tracker_.totals();
  in.self = ReadSelfStats(start_time_seconds_);
  in.focus_processes = focus_processes_;
  in.focus_slurm_jobs = BoundedJobSeries(focus_jobs_.slurm, kMaxJobSeries);
  in.sample_hz = options_.sample_hz;
  in.sampler_cpus = sampler_cpus_;
  in.interval_seconds = static_cast<double>(options_.interval_ns) / 1e9;
  in.intervals = intervals_;
  in.dql_stalls = dql_stalls_;
  if (softirq_audit_.audited()) in.unreported_softirqs = softirq_audit_.unreported();
  if (kmsg_) {
    in.kernel_log = kernel_log_counts_;
    in.kernel_log_lost = kmsg_->lost();
    in.kernel_log_read = true;
  }
  in.version = GPUNOISE_VERSION;
  in.nic = &nic_.metrics();
  http_->Publish(std::make_shared<const HttpEndpoint::Families>(BuildMetrics(in)), now);
}

void Monitor::Reload() {
  auto it = run_.command_line.find("config");
  std::string path = it != run_.command_line.end() && !it->second.empty() ? it->second.back() : "";
  OptionLayer file;
  if (!path.empty()) {
    auto read = ReadConfigFile(path);
    if (!read.ok()) {
      log::Error("monitor: reload failed: {}; keeping the running configuration", read.error().message);
      return;
    }
    file = std::move(read).value();
  }
  OptionLayer cli = run_.command_line;
  cli.erase("config");
  auto resolved = ResolveOptions(file, cli);
  if (!resolved.ok()) {
    log::Error("monitor: reload failed: {}; keeping the running configuration", resolved.error().message);
    return;
  }
  MonitorOptions next = std::move(resolved).value();
  auto detection = IntervalDetection::Create(next.thresholds);
  if (!detection.ok()) {
    log::Error("monitor: reload failed: {}; keeping the running configuration", detection.error().message);
    return;
  }
  if (next.listen != options_.listen)
    log::Warning("monitor: listen changed to {}: that needs a restart; still listening on {}", next.listen,
                 http_->address());
  if (next.dump_gid != options_.dump_gid) log::Warning("monitor: dump-group changes need a restart");
  if (next.web_config_file != options_.web_config_file)
    log::Warning("monitor: web.config.file changes need a restart (the file itself is re-read when it changes)");
  if (next.attach_mode != options_.attach_mode) log::Warning("monitor: attach changes need a restart");
  if (next.net_packet_counters != options_.net_packet_counters)
    log::Warning("monitor: net-packet-counters changes need a restart");
  next.listen = options_.listen;
  next.web_config_file = options_.web_config_file;
  next.dump_gid = options_.dump_gid;
  next.insecure_listen = options_.insecure_listen;
  next.attach_mode = options_.attach_mode;
  next.net_packet_counters = options_.net_packet_counters;
  detection_ = std::move(detection).value();

  if (next.flight_recorder() && !recorder_) {
    auto fr = FlightRecorder::Start(RecorderConfig(next, run_.command_text), *catalog_, next.attach_mode);
    if (!fr.ok()) {
      log::Error("monitor: failed to start the flight recorder: {}", fr.error().message);
      next.flight_recorder_ns = 0;
    } else {
      recorder_ = std::move(fr).value();
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u32 = 3;
      ::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, recorder_->wait_fd(), &ev);
    }
  } else if (!next.flight_recorder() && recorder_) {
    ::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, recorder_->wait_fd(), nullptr);
    recorder_.reset();
  } else if (recorder_) {
    recorder_->Reconfigure(RecorderConfig(next, run_.command_text));
  }
  trigger_->Configure(recorder_ != nullptr, next.dump_interval_ns);
  if (next.sample_hz > 0 && !sampler_) {
    collect::CollectorContext context;
    context.catalog = catalog_.get();
    sampler_ = std::make_unique<collect::SamplerCollector>(focus_map_->fd(), irqtime_->irq_state_map_fd());
    sampler_->Start(context);
  }
  bool interval_changed = next.interval_ns != options_.interval_ns;
  options_ = std::move(next);
  if (interval_changed) {
    if (Status st = ArmTimer(); !st.ok()) log::Error("monitor: {}", st.error().message);
    http_->set_stale_after(3 * options_.interval_ns + 2'000'000'000);
  }
  next_focus_refresh_ = 0;
  RefreshFocus(BoottimeNs());
  ReconcileSampler();
  log::Info("monitor: reloaded {} (interval {:g} s, {} focus specs, sampler {} Hz, flight recorder {})",
            path.empty() ? "the command line" : path, static_cast<double>(options_.interval_ns) / 1e9,
            options_.focus.size(), options_.sample_hz,
            recorder_ ? fmt::format("{:g} s", static_cast<double>(options_.flight_recorder_ns) / 1e9) : "off");
}


}  // namespace gpunoise::monitor::daemon
