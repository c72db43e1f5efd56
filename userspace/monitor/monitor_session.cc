#include "monitor/monitor_session.h"

#include "monitor/monitor_daemon.h"

extern "C" {
#include "bpf/net.h"
}

namespace gpunoise::monitor::daemon {

// The names an Alertmanager alert may give this node: its hostname, and
// NODE_NAME (the DaemonSet sets it from spec.nodeName: the `node` label of
// the job rules, which can differ from the pod's own hostname).
std::vector<std::string> TriggerNodeNames() {
  std::vector<std::string> names;
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) == 0 && host[0]) names.emplace_back(host);
  if (const char* node = std::getenv("NODE_NAME"); node && *node) names.emplace_back(node);
  return names;
}


uint32_t OwnNetnsInode() {
  struct stat st {};
  if (::stat("/proc/self/ns/net", &st) != 0) return 0;
  return static_cast<uint32_t>(st.st_ino);
}

SelfStats ReadSelfStats(double start_time_seconds) {
  SelfStats s;
  rusage ru{};
  if (::getrusage(RUSAGE_SELF, &ru) == 0)
    s.cpu_seconds = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                    static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  if (auto statm = ReadFileToString("/proc/self/statm"); statm.ok()) {
    auto fields = Split(Trim(*statm), ' ');
    if (fields.size() >= 2)
      if (auto pages = ParseUint64(fields[1])) s.resident_bytes = *pages * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  }
  s.start_time_seconds = start_time_seconds;
  return s;
}

bool BpfStatsEnabled() {
  auto text = ReadFileToString("/proc/sys/kernel/bpf_stats_enabled");
  return text.ok() && Trim(*text) == "1";
}

FlightRecorderConfig RecorderConfig(const MonitorOptions& o, const std::string& command_text) {
  FlightRecorderConfig c;
  c.window_ns = o.flight_recorder_ns;
  c.max_bytes = o.flight_recorder_bytes;
  c.dump_dir = o.dump_dir;
  c.max_dumps = o.max_dumps;
  c.max_dump_bytes = o.max_dump_bytes;
  c.dump_interval_ns = o.dump_interval_ns;
  c.command_line = command_text;
  c.redact = o.redact;
  c.dump_gid = o.dump_gid;
  return c;
}

std::vector<collect::Collector*> Monitor::AggregateCollectors() const {
  std::vector<collect::Collector*> out;
  if (irqtime_) out.push_back(irqtime_.get());
  if (runqlat_) out.push_back(runqlat_.get());
  if (sampler_) out.push_back(sampler_.get());
  for (const auto& c : net_) out.push_back(c.get());
  return out;
}

Status Monitor::Start(MonitorOptions options) {
  options_ = std::move(options);
  start_time_seconds_ = static_cast<double>(RealtimeNs()) / 1e9;
  // Freed blocks above 256 KiB go back to the kernel at once (glibc would
  // otherwise raise this threshold as dumps free their large buffers, and
  // keep them): resident memory stays flat over weeks.
  ::mallopt(M_MMAP_THRESHOLD, 256 * 1024);

  GN_RETURN_IF_ERROR(collect::CheckPrivileges());
  GN_RETURN_IF_ERROR(collect::CheckKernelBtf());
  PlaceOwnThreads();
  GN_ASSIGN_OR_RETURN(std::string tracefs, collect::EnsureTracefs());
  GN_ASSIGN_OR_RETURN(collect::TracepointCatalog catalog, collect::TracepointCatalog::Open(tracefs));
  catalog_ = std::make_unique<collect::TracepointCatalog>(std::move(catalog));
  GN_ASSIGN_OR_RETURN(detection_, IntervalDetection::Create(options_.thresholds));
  // Dumps are written after the drop: as a member of the group the monitor
  // may give them to it without CAP_CHOWN. Before any thread starts: glibc
  // applies setgroups to every thread and aborts if one (the HTTP thread,
  // which holds no capability) cannot.
  if (options_.dump_gid >= 0) GN_RETURN_IF_ERROR(JoinGroup(static_cast<gid_t>(options_.dump_gid)));
  GN_ASSIGN_OR_RETURN(ListenAddress address, ParseListenAddress(options_.listen));
  EndpointOptions endpoint;
  endpoint.address = address;
  endpoint.web_config_file = options_.web_config_file;
  endpoint.trigger = trigger_;
  endpoint.node_names = TriggerNodeNames();
  GN_ASSIGN_OR_RETURN(http_, HttpEndpoint::Start(endpoint));
  http_->set_stale_after(3 * options_.interval_ns + 2'000'000'000);

  GN_ASSIGN_OR_RETURN(collect::FocusMap focus, collect::FocusMap::Create());
  focus_map_ = std::make_unique<collect::FocusMap>(std::move(focus));

  collect::CollectorContext context;
  context.catalog = catalog_.get();
  context.attach_mode = options_.attach_mode;
  // Until every collector object is loaded (collect/load_heap.h).
  std::optional<collect::ScopedHeapReuse> loading_heap(std::in_place);
  irqtime_ = std::make_unique<collect::IrqtimeCollector>(focus_map_->fd());
  irqtime_->Start(context);
  runqlat_ = std::make_unique<collect::RunqlatCollector>(focus_map_->fd(), irqtime_->irq_state_map_fd());
  runqlat_->Start(context);
  if (options_.sample_hz > 0) {
    sampler_ = std::make_unique<collect::SamplerCollector>(focus_map_->fd(), irqtime_->irq_state_map_fd());
    sampler_->Start(context);
  }

  // The network collectors keep per-device counters in the kernel; their
  // only ring records are the rare ones (TX timeouts, DQL stalls), so the
  // rings are small.
  std::vector<int> possible;
  for (int i = 0; i < std::max(1, libbpf_num_possible_cpus()); ++i) possible.push_back(i);
  auto on_record = [this](uint32_t, std::span<const uint8_t> data) {
    if (data.size() < sizeof(gn_header)) return;
    uint16_t kind = 0;
    std::memcpy(&kind, data.data() + offsetof(gn_header, kind), sizeof(kind));
    if (kind == GN_REC_DQL_STALL) ++dql_stalls_;
  };
  GN_ASSIGN_OR_RETURN(net_transport_, collect::RingTransport::Create(possible, 16 * 1024, on_record));
  net_transport_->ShareWith(&context);
  collect::NetOptions net_options;
  net_options.retransmits = false;
  net_options.device_counters = options_.net_packet_counters;
  net_.push_back(std::make_unique<collect::NapiCollector>(net_options));
  net_.push_back(std::make_unique<collect::NetdevCollector>(net_options));
  auto drops = std::make_unique<collect::DropsCollector>(net_options);
  drops_ = drops.get();
  net_.push_back(std::move(drops));
  net_.push_back(std::make_unique<collect::NicCollector>(net_options));
  std::vector<collect::Collector*> net_collectors;
  for (auto& c : net_) net_collectors.push_back(c.get());
  collect::StartCollectors(net_collectors, context);
  loading_heap.reset();
  names_.own_netns = OwnNetnsInode();

  bool any = false;
  for (collect::Collector* c : AggregateCollectors()) any = any || c->report().state != model::CollectorState::kDisabled;
  if (!any) return MakeError("no collector could start (see the warnings above)");

  if (options_.flight_recorder()) {
    GN_ASSIGN_OR_RETURN(recorder_, FlightRecorder::Start(RecorderConfig(options_, run_.command_text), *catalog_,
                                                         options_.attach_mode));
  }
  trigger_->Configure(recorder_ != nullptr, options_.dump_interval_ns);

  uint64_t now = BoottimeNs();
  RefreshFocus(now);
  ReconcileSampler();
  RescanIrqs(now);
  previous_ = Read();
  RefreshNames(previous_);
  next_prune_ = now + kPruneEveryNs;
  OpenNvml();
  // With a flight recorder the records go into its dumps, so they need the
  // trace clock: the reader writes its one anchor record to measure it.
  if (auto kmsg = collect::KmsgReader::Open("/dev/kmsg", /*anchor=*/recorder_ != nullptr); kmsg.ok())
    kmsg_ = std::move(*kmsg);
  else log::Info("monitor: no kernel log metrics: {}", kmsg.error().message);
  Publish(now);

  timer_fd_ = UniqueFd(::timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC | TFD_NONBLOCK));
  if (!timer_fd_.valid()) return MakeError("failed to create the interval timer: {}", std::strerror(errno));
  GN_RETURN_IF_ERROR(ArmTimer());
  epoll_fd_ = UniqueFd(::epoll_create1(EPOLL_CLOEXEC));
  auto add = [&](int fd, uint32_t tag) {
    if (fd < 0) return;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = tag;
    ::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, fd, &ev);
  };
  add(run_.signal_fd, 0);
  add(timer_fd_.get(), 1);
  add(net_transport_->wait_fd(), 2);
  if (recorder_) add(recorder_->wait_fd(), 3);

  std::string attached;
  for (collect::Collector* c : AggregateCollectors())
    attached += fmt::format("{}{} {}", attached.empty() ? "" : ", ", c->name(), model::CollectorStateName(c->report().state));
  log::Info("monitor: collectors: {}", attached);
  log::Info("monitor: listening on {}://{}/metrics (authentication: {}; interval {:g} s{}{})",
            http_->tls() ? "https" : "http", http_->address(), http_->authentication(),
            static_cast<double>(options_.interval_ns) / 1e9,
            sampler_cpus_.empty() ? "" : fmt::format(", sampling {} CPUs at {} Hz", sampler_cpus_.size(), options_.sample_hz),
            recorder_ ? fmt::format(", flight recorder {:g} s into {}", static_cast<double>(options_.flight_recorder_ns) / 1e9,
                                    options_.dump_dir)
                      : "");
  if (std::string note = detection_->WindowNote(options_.interval_ns); !note.empty()) log::Info("monitor: {}", note);
  // Everything is loaded and attached: keep only what a reload or a CPU
  // coming online needs (common/privilege_drop.h).
  if (options_.dump_gid >= 0) {
    // The directory goes to the group as well, or its members could not
    // reach the files.
    struct stat st {};
    if (!options_.dump_dir.empty() && ::stat(options_.dump_dir.c_str(), &st) == 0 && st.st_uid == ::geteuid() &&
        st.st_gid != static_cast<gid_t>(options_.dump_gid) &&
        ::chown(options_.dump_dir.c_str(), static_cast<uid_t>(-1), static_cast<gid_t>(options_.dump_gid)) != 0)
      return MakeError("failed to give {} to group {}: {}", options_.dump_dir, options_.dump_gid, std::strerror(errno));
  }
  std::vector<std::string> reasons;
  CapMask keep = MonitorKeeps(&reasons);
  GN_RETURN_IF_ERROR(DropPrivilegesAfterAttach("monitor", keep, reasons));
  return OkStatus();
}

Status Monitor::ArmTimer() {
  itimerspec spec{};
  spec.it_interval.tv_sec = static_cast<time_t>(options_.interval_ns / 1'000'000'000);
  spec.it_interval.tv_nsec = static_cast<long>(options_.interval_ns % 1'000'000'000);
  spec.it_value = spec.it_interval;
  if (::timerfd_settime(timer_fd_.get(), 0, &spec, nullptr) != 0)
    return MakeError("failed to arm the interval timer: {}", std::strerror(errno));
  return OkStatus();
}

model::AggregateSnapshot Monitor::Read() {
  model::AggregateSnapshot s;
  s.ts = BoottimeNs();
  // The kernel's softirq counts just before the entry program's.
  const bool audit_softirqs = irqtime_->report().state != model::CollectorState::kDisabled;
  if (audit_softirqs) softirq_audit_.BeforeRuns();
  irqtime_->Read(&s);
  if (audit_softirqs) softirq_audit_.AfterRuns(s.softirqs);
  runqlat_->Read(&s);
  if (sampler_) sampler_->Read(&s);
  for (const auto& c : net_) c->ReadCounters(&s.net);
  if (!options_.net_packet_counters) ReadDeviceStatistics(&s.net);
  s.net.ts = s.ts;
  s.kernel = collect::ReadKernelHealth();
  s.dql_stalls = dql_stalls_;
  // Updates the in-kernel aggregates refused (a full map): they undercount.
  std::vector<model::MapLoss> full;
  for (collect::Collector* c : AggregateCollectors()) c->AddMapLosses(full);
  for (const auto& m : full) s.lost += m.count;
  if (net_transport_)
    for (uint64_t l : net_transport_->LostPerCpu()) s.lost += l;
  return s;
}

// Without per-packet programs, packets and bytes per device come from the
// kernel's device statistics (this network namespace only).
Status Monitor::Interval() {
  uint64_t now = BoottimeNs();
  if (recorder_) GN_RETURN_IF_ERROR(recorder_->Drain(now));
  if (std::optional<TriggerRequest> t = trigger_->Take(); t && recorder_) {
    DumpRequest req;
    req.detector = "trigger";
    req.title = "recording requested (" + t->source + "): " + t->reason;
    req.finding_start = t->at;
    req.now = now;
    req.irqs = irqs_;
    std::string window;
    if (t->source == "api" && (t->starts_at_realtime_ns || !t->id.empty())) {
      // A script's request to many nodes: the window from its "since", the
      // file named by its "id".
      req.window_start = AlertWindowStart(t->starts_at_realtime_ns, 0, static_cast<int64_t>(RealtimeNs()), now);
      if (!t->id.empty()) {
        std::vector<std::string> names = TriggerNodeNames();
        req.file_tag = RequestDumpTag(t->id, names.empty() ? "" : names.front());
      }
      if (req.window_start)
        window = fmt::format(", window from {:.1f} s ago", static_cast<double>(now - std::min(now, req.window_start)) / 1e9);
    } else if (!t->fingerprint.empty()) {
      // An alert: the same window on every node it reached, named alike.
      int64_t rt_now = static_cast<int64_t>(RealtimeNs());
      uint64_t lookback = options_.alert_lookback_ns ? options_.alert_lookback_ns : options_.flight_recorder_ns;
      req.window_start = AlertWindowStart(t->starts_at_realtime_ns, lookback, rt_now, now);
      // An alert older than the ring: the window as long as the ring, from
      // when the webhook came (within milliseconds on every node it went to),
      // not from this interval's tick.
      uint64_t reach = t->at > options_.flight_recorder_ns ? t->at - options_.flight_recorder_ns : 0;
      req.window_start = std::max(req.window_start, reach);
      // The finding slice starts where the alert did, when the ring reaches that far.
      if (uint64_t fired = AlertWindowStart(t->starts_at_realtime_ns, 0, rt_now, now); fired) req.finding_start = fired;
      std::vector<std::string> names = TriggerNodeNames();
      req.file_tag = AlertDumpTag(t->fingerprint, names.empty() ? "" : names.front());
      req.title += " [" + t->role + ", alert " + t->fingerprint + "]";
      window = fmt::format(", window from {:.1f} s ago", static_cast<double>(now - std::min(now, req.window_start)) / 1e9);
    }
    DumpOutcome outcome = recorder_->RequestDump(std::move(req));
    log::Info("monitor: {} recording request ({}{}): flight-recorder dump {}", t->source, t->reason, window,
              DumpOutcomeName(outcome));
  }
  if (auto drained = net_transport_->DrainAll(); !drained.ok()) return drained.error();
  RefreshFocus(now);
  ReconcileSampler();
  RescanIrqs(now);
  model::AggregateSnapshot snapshot = Read();
  RefreshNames(snapshot);
  model::AggregateSnapshot delta = model::Delta(previous_, snapshot);
  TrackActivity(snapshot, delta, now);
  nic_.Read(now);

  IntervalInput in;
  in.delta = &delta;
  in.start = previous_.ts;
  in.end = snapshot.ts;
  in.irqs = &irqs_;
  in.names = &names_;
  std::vector<Observation> observations = detection_->Run(in);
  // The kernel log's severe messages are findings too (and so trigger the
  // flight recorder, rate-limited like the rest).
  std::vector<Observation> logged = KernelLogObservations(ReadKernelLog());
  observations.insert(observations.end(), std::make_move_iterator(logged.begin()),
                      std::make_move_iterator(logged.end()));
  HandleChanges(tracker_.Observe(observations, previous_.ts, snapshot.ts), now);

  previous_ = std::move(snapshot);
  ++intervals_;
  Prune(now);
  Publish(BoottimeNs());
  return OkStatus();
}

// GPU series come from NVML, read once per published interval. A node
// without NVML (no GPU, no driver) simply has none.
Status Monitor::Loop() {
  while (true) {
    epoll_event events[4];
    int timeout = recorder_ ? kDrainMs : -1;
    int n = ::epoll_wait(epoll_fd_.get(), events, 4, timeout);
    if (n < 0 && errno != EINTR) return MakeError("failed to wait for events: {}", std::strerror(errno));
    bool tick = false, drain = n == 0, stop = false;
    for (int i = 0; i < n; ++i) {
      switch (events[i].data.u32) {
        case 0: {
          signalfd_siginfo info{};
          while (::read(run_.signal_fd, &info, sizeof(info)) == sizeof(info)) {
            if (info.ssi_signo == SIGHUP) {
              Reload();
            } else {
              log::Info("monitor: stopping ({})", info.ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT");
              stop = true;
            }
          }
          break;
        }
        case 1: {
          uint64_t expirations = 0;
          if (::read(timer_fd_.get(), &expirations, sizeof(expirations)) > 0) tick = true;
          break;
        }
        case 2:
          if (auto d = net_transport_->DrainAll(); !d.ok()) return d.error();
          break;
        case 3:
          drain = true;
          break;
      }
    }
    if (stop) return OkStatus();
    if (drain && recorder_) GN_RETURN_IF_ERROR(recorder_->Drain(BoottimeNs()));
    if (tick) {
      GN_RETURN_IF_ERROR(Interval());
      if (run_.max_intervals && intervals_ >= run_.max_intervals) return OkStatus();
    }
  }
}

void Monitor::Shutdown() {
  if (stopped_) return;
  stopped_ = true;
  // Detach every program before anything else goes, so nothing is left
  // attached even if a dump is still being written.
  collect::StopCollectors(AggregateCollectors());
  recorder_.reset();
  http_.reset();
}

}  // namespace gpunoise::monitor::daemon

namespace gpunoise::monitor {

using daemon::Monitor;


Status RunMonitor(const MonitorRun& run) {
  OptionLayer file;
  if (auto it = run.command_line.find("config"); it != run.command_line.end() && !it->second.empty()) {
    GN_ASSIGN_OR_RETURN(file, ReadConfigFile(it->second.back()));
  }
  OptionLayer cli = run.command_line;
  cli.erase("config");
  GN_ASSIGN_OR_RETURN(MonitorOptions options, ResolveOptions(file, cli));
  Monitor monitor(run);
  GN_RETURN_IF_ERROR(monitor.Start(std::move(options)));
  return monitor.Loop();
}

}  // namespace gpunoise::monitor
