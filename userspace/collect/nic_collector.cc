#include "collect/nic_collector.h"

#include <bpf/libbpf.h>

#include <algorithm>
#include <set>

#include <fmt/ranges.h>

#include "common/files.h"
#include "common/log.h"
#include "common/strings.h"
#include "collect/driver_tracepoints.h"
#include "collect/pcie_health.h"
#include "nic.skel.h"

namespace gpunoise::collect {

NicCollector::NicCollector(NetOptions options) : NetCollector("nic"), options_(std::move(options)) {}

// Stop() only detaches: the counters stay readable until destruction.
NicCollector::~NicCollector() {
  Stop();
  if (skel_) nic_bpf__destroy(skel_);
}

std::vector<std::string> NicCollector::searched_categories() const {
  if (!options_.nic_categories.empty()) return options_.nic_categories;
  if (!driver_systems_.empty()) return driver_systems_;
  return std::vector<std::string>(std::begin(kKnownDriverCategories), std::end(kKnownDriverCategories));
}

// The event systems the modules of this node's NIC drivers register; empty
// when every driver is built in or the kernel's symbols say nothing, and
// then the known category list applies.
void NicCollector::DiscoverDriverSystems(const TracepointCatalog& catalog) {
  if (!options_.nic_categories.empty()) return;  // --nic-tracepoints decides
  const std::string sysfs = DefaultSysfsRoot();
  std::vector<NetdevDriver> drivers = FindNetdevDrivers(sysfs);
  if (std::none_of(drivers.begin(), drivers.end(), [](const NetdevDriver& d) { return !d.module.empty(); })) {
    for (const auto& d : drivers) driver_notes_.push_back(fmt::format("{} ({}): built in", d.driver, d.device));
    return;  // every NIC driver is built in: the known categories apply
  }
  auto kallsyms = ReadFileToString("/proc/kallsyms");
  if (!kallsyms.ok()) return;
  std::set<std::string> systems;
  for (const DriverEventSystems& m : DiscoverDriverEventSystems(sysfs, catalog.tracefs(), *kallsyms)) {
    std::string devices;
    for (const auto& d : m.devices) devices += (devices.empty() ? "" : ",") + d;
    std::string list;
    for (const auto& sys : m.systems) list += (list.empty() ? "" : ",") + sys;
    driver_notes_.push_back(fmt::format("{} ({}): {}", m.module, devices,
                                        m.systems.empty() ? std::string("no events") : list));
    systems.insert(m.systems.begin(), m.systems.end());
  }
  if (systems.empty()) return;
  systems.insert("devlink");  // NIC firmware health reports, whatever the driver
  driver_systems_.assign(systems.begin(), systems.end());
  log::Info("nic: tracepoints of the NIC drivers' modules: {}", fmt::join(driver_notes_, "; "));
}

std::vector<NicCollector::Event> NicCollector::Discover(const TracepointCatalog& catalog) const {
  std::vector<Event> events;
  std::vector<std::string> present = catalog.TracefsCategories();
  for (const std::string& category : searched_categories()) {
    if (std::find(present.begin(), present.end(), category) == present.end()) continue;
    for (const std::string& event : catalog.TracefsEvents(category)) {
      if (events.size() >= GN_NIC_MAX_EVENTS) {
        log::Warning("nic: more than {} NIC-driver tracepoints; attaching the first {}",
                     GN_NIC_MAX_EVENTS, GN_NIC_MAX_EVENTS);
        return events;
      }
      Event e{category, event, std::nullopt};
      std::string path = catalog.tracefs() + "/events/" + category + "/" + event + "/format";
      if (auto text = ReadFileToString(path); text.ok())
        if (auto format = ParseTraceFormat(*text); format.ok())
          e.device_field = FindDeviceNameField(*format);
      events.push_back(std::move(e));
    }
  }
  return events;
}

void NicCollector::Start(const CollectorContext& context) {
  DiscoverDriverSystems(*context.catalog);
  std::vector<Event> events = Discover(*context.catalog);
  if (events.empty()) {
    std::string searched;
    for (const auto& c : searched_categories()) searched += (searched.empty() ? "" : ", ") + c;
    std::string drivers;
    for (const auto& n : driver_notes_) drivers += (drivers.empty() ? "" : "; ") + n;
    Disable(fmt::format("no NIC-driver tracepoints on this node ({}looked in tracefs for: {})",
                        drivers.empty() ? std::string() : "drivers: " + drivers + "; ", searched));
    log::Info("nic: no NIC-driver tracepoints on this node; the other network counters do not need them");
    return;
  }
  skel_ = nic_bpf__open();
  if (!skel_) {
    Disable(fmt::format("failed to open the eBPF object: {}", std::strerror(errno)));
    return;
  }
  ApplyCommonConfig(skel_, context);
  ApplyNetConfig(skel_, options_);
  if (!ShareTransport(skel_, context)) {
    Disable(fmt::format("failed to share the ring buffers and gate: {}", std::strerror(errno)));
    return;
  }
  if (int err = nic_bpf__load(skel_); err != 0) {
    Disable(fmt::format("failed to load eBPF programs: {}", std::strerror(-err)));
    log::Warning("failed to load the nic collector: {}", std::strerror(-err));
    return;
  }
  for (uint32_t index = 0; index < events.size(); ++index) {
    const Event& e = events[index];
    std::string label = e.category + "/" + e.name;
    event_names_.push_back(label);
    gn_nic_field field{};
    if (e.device_field) {
      field.kind = e.device_field->data_loc ? GN_NIC_FIELD_DATA_LOC : GN_NIC_FIELD_ARRAY;
      field.offset = static_cast<uint16_t>(e.device_field->offset);
      field.size = static_cast<uint16_t>(e.device_field->size);
    }
    if (bpf_map__update_elem(skel_->maps.gn_nic_fields, &index, sizeof(index), &field,
                             sizeof(field), BPF_ANY) != 0) {
      report_.missing_events.push_back(label);
      continue;
    }
    LIBBPF_OPTS(bpf_tracepoint_opts, opts, .bpf_cookie = index);
    bpf_link* link = bpf_program__attach_tracepoint_opts(skel_->progs.gn_nic_event,
                                                         e.category.c_str(), e.name.c_str(), &opts);
    if (!link) {
      int err = errno;
      report_.missing_events.push_back(label);
      log::Warning("nic: failed to attach {}: {}", label, std::strerror(err));
      continue;
    }
    links_.emplace_back(link);
    report_.attached_events.push_back(label + " (tracepoint)");
  }
  TrackProgram(skel_->progs.gn_nic_event);
  if (links_.empty()) {
    Disable("no NIC-driver tracepoint could be attached");
    return;
  }
  report_.state = report_.missing_events.empty() ? model::CollectorState::kActive
                                                 : model::CollectorState::kDegraded;
  log::Info("nic: counting {} NIC-driver tracepoints", links_.size());
}

void NicCollector::AddMapLosses(std::vector<model::MapLoss>& out) const {
  if (skel_ && skel_->bss) AddFullMap(out, name(), "gn_nic_stats", SumPerCpuCounter(skel_->bss->gn_agg_full));
}

void NicCollector::ReadCounters(model::NetSnapshot* out) const {
  if (!skel_ || report_.state == model::CollectorState::kDisabled) return;
  ForEachPerCpuValue<gn_nic_key, gn_nic_val>(
      skel_->maps.gn_nic_stats, [&](const gn_nic_key& k, uint32_t cpu, const gn_nic_val& v) {
        if (!v.count) return;
        model::NicEventCount c;
        c.event = k.event;
        c.device = std::string(FixedCString(k.dev, sizeof(k.dev)));
        c.cpu = cpu;
        c.count = v.count;
        out->nic.push_back(std::move(c));
      });
}

}  // namespace gpunoise::collect
