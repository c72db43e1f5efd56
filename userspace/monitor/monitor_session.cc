#include "collect/kmsg_reader.h"
#include "monitor/monitor_session.h"

#include "record/privilege_drop.h"

#include <malloc.h>
#include <net/if.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <optional>
#include <set>

#include "collect/drops_collector.h"
#include "collect/focus_map.h"
#include "collect/irq_scanner.h"
#include "collect/irqtime_collector.h"
#include "collect/kernel_health.h"
#include "collect/link_stats.h"
#include "collect/load_heap.h"
#include "collect/napi_collector.h"
#include "collect/netdev_collector.h"
#include "collect/nic_collector.h"
#include "collect/ring_transport.h"
#include "collect/runqlat_collector.h"
#include "collect/sampler_collector.h"
#include "collect/system_checks.h"
#include "collect/tracepoint_catalog.h"
#include "common/clock.h"
#include "common/cpu_list.h"
#include "gpu/nvml_api.h"
#include "gpu/nvml_sampler.h"
#include "common/files.h"
#include "common/log.h"
#include "common/strings.h"
#include "common/unique_fd.h"
#include "monitor/finding_tracker.h"
#include "monitor/cpu_placement.h"
#include "monitor/flight_recorder.h"
#include "monitor/kernel_log_triggers.h"
#include "monitor/focus_resolver.h"
#include "monitor/http_endpoint.h"
#include "monitor/interval_detection.h"
#include "monitor/metrics_builder.h"
#include "monitor/nic_monitor.h"
#include "monitor/record_trigger.h"

extern "C" {
#include "bpf/net.h"
}

#ifndef GPUNOISE_VERSION
#define GPUNOISE_VERSION "0.1.0"
#endif

namespace gpunoise::monitor {
namespace {

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

// How often the IRQ table (names, NIC devices and queues) is read again:
// devices come and go, and their IRQs with them.
constexpr uint64_t kIrqRescanNs = 30'000'000'000;
// How often stale series are looked for (at most; more often when
// stale-after is short).
constexpr uint64_t kPruneEveryNs = 10'000'000'000;
// The flight recorder's drain period when no ring asks sooner.
constexpr int kDrainMs = 100;

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

class Monitor {
 public:
  explicit Monitor(const MonitorRun& run) : run_(run) {}
  ~Monitor() { Shutdown(); }

  Status Start(MonitorOptions options);
  Status Loop();

 private:
  model::AggregateSnapshot Read();
  Status Interval();
  void Publish(uint64_t now);
  // The kernel log since the last call, counted by class and device.
  std::vector<model::KernelLogEntry> ReadKernelLog();
  void OpenNvml();
  void RefreshFocus(uint64_t now);
  void ReconcileSampler();
  void PlaceOwnThreads();
  void RescanIrqs(uint64_t now);
  void RefreshNames(const model::AggregateSnapshot& s);
  void ReadDeviceStatistics(model::NetSnapshot* net);
  void TrackActivity(const model::AggregateSnapshot& snapshot, const model::AggregateSnapshot& delta, uint64_t now);
  void Prune(uint64_t now);
  void HandleChanges(const FindingTracker::Changes& changes, uint64_t now);
  void Reload();
  Status ArmTimer();
  void Shutdown();
  std::vector<collect::Collector*> AggregateCollectors() const;

  const MonitorRun& run_;
  MonitorOptions options_;
  std::unique_ptr<collect::TracepointCatalog> catalog_;
  std::unique_ptr<HttpEndpoint> http_;
  std::shared_ptr<RecordTrigger> trigger_ = std::make_shared<RecordTrigger>();
  std::unique_ptr<IntervalDetection> detection_;
  std::unique_ptr<collect::FocusMap> focus_map_;
  std::unique_ptr<collect::IrqtimeCollector> irqtime_;
  std::unique_ptr<collect::RunqlatCollector> runqlat_;
  std::unique_ptr<collect::SamplerCollector> sampler_;
  std::unique_ptr<collect::RingTransport> net_transport_;
  std::vector<std::unique_ptr<collect::NetCollector>> net_;
  collect::DropsCollector* drops_ = nullptr;
  std::unique_ptr<FlightRecorder> recorder_;
  std::unique_ptr<gpu::NvmlSampler> nvml_;
  UniqueFd timer_fd_;
  UniqueFd epoll_fd_;

  model::IrqTable irqs_;
  model::NetNames names_;
  model::AggregateSnapshot previous_;
  FindingTracker tracker_;
  std::map<model::NetDeviceKey, uint64_t> device_active_;
  std::vector<int> sampler_cpus_;
  uint64_t dql_stalls_ = 0;
  // The kernel log since the monitor started, counted by class and device
  // (model/kernel_log.h), read every interval.
  std::optional<collect::KmsgReader> kmsg_;
  std::map<std::pair<std::string, std::string>, uint64_t> kernel_log_counts_;
  uint64_t focus_processes_ = 0;
  uint64_t next_focus_refresh_ = 0;
  uint64_t next_irq_scan_ = 0;
  uint64_t next_prune_ = 0;
  uint64_t intervals_ = 0;
  double start_time_seconds_ = 0;
  bool stopped_ = false;
  bool link_stats_warned_ = false;
  NicMonitor nic_;  // the NIC's own counters, link state and PCIe health
};

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
  if (options_.dump_gid >= 0) GN_RETURN_IF_ERROR(record::JoinGroup(static_cast<gid_t>(options_.dump_gid)));
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
  runqlat_ = std::make_unique<collect::RunqlatCollector>(focus_map_->fd());
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
  if (auto kmsg = collect::KmsgReader::Open("/dev/kmsg", /*anchor=*/false); kmsg.ok()) kmsg_ = std::move(*kmsg);
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
  // Everything is loaded and attached: keep only what a reload or a CPU
  // coming online needs (record/privilege_drop.h).
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
  CapMask keep = record::MonitorKeeps(&reasons);
  GN_RETURN_IF_ERROR(record::DropPrivilegesAfterAttach("monitor", keep, reasons));
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
  irqtime_->Read(&s);
  runqlat_->Read(&s);
  if (sampler_) sampler_->Read(&s);
  for (const auto& c : net_) c->ReadCounters(&s.net);
  if (!options_.net_packet_counters) ReadDeviceStatistics(&s.net);
  s.net.ts = s.ts;
  s.kernel = collect::ReadKernelHealth();
  s.dql_stalls = dql_stalls_;
  // Updates the in-kernel aggregates refused (a full map): they undercount.
  std::vector<model::MapLoss> full;
  for (collect::Collector* c : AggregateCollectors()) c->AddMapFull(full);
  for (const auto& m : full) s.lost += m.full;
  if (net_transport_)
    for (uint64_t l : net_transport_->LostPerCpu()) s.lost += l;
  return s;
}

// Without per-packet programs, packets and bytes per device come from the
// kernel's device statistics (this network namespace only).
void Monitor::ReadDeviceStatistics(model::NetSnapshot* net) {
  auto links = collect::ReadLinkStats();
  if (!links.ok()) {
    if (!link_stats_warned_) log::Warning("monitor: {}", links.error().message);
    link_stats_warned_ = true;
    return;
  }
  for (const collect::LinkStats& l : *links) {
    model::NetDeviceKey dev{names_.own_netns, static_cast<uint32_t>(l.ifindex)};
    names_.devices[dev] = l.name;
    net->devices.push_back({dev, -1, model::NetDirection::kRx, 0, l.rx_packets, l.rx_bytes, l.rx_errors});
    net->devices.push_back({dev, -1, model::NetDirection::kTx, 0, l.tx_packets, l.tx_bytes, l.tx_errors});
  }
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
    DumpOutcome outcome = recorder_->RequestDump(std::move(req));
    log::Info("monitor: {} recording request ({}): flight-recorder dump {}", t->source, t->reason,
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
  in.sample_hz = options_.sample_hz;
  in.sampler_cpus = sampler_cpus_;
  in.interval_seconds = static_cast<double>(options_.interval_ns) / 1e9;
  in.intervals = intervals_;
  in.dql_stalls = dql_stalls_;
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

}  // namespace

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
