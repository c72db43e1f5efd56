#include "record/net_recording.h"

#include <sys/stat.h>

#include <algorithm>
#include <array>

#include "collect/drops_collector.h"
#include "collect/kallsyms_loader.h"
#include "collect/link_stats.h"
#include "collect/napi_collector.h"
#include "collect/netdev_collector.h"
#include "collect/nic_collector.h"
#include "common/clock.h"
#include "common/log.h"
#include "export/perfetto/trace_sink.h"

namespace gpunoise::record {

uint32_t OwnNetnsInode() {
  struct stat st {};
  if (::stat("/proc/self/ns/net", &st) != 0) return 0;
  return static_cast<uint32_t>(st.st_ino);
}

NetRecording::NetRecording(const collect::NetOptions& options, uint64_t interval_ns, uint64_t nic_interval_ns,
                           std::vector<std::unique_ptr<collect::Collector>>& collectors)
    : interval_ns_(std::max<uint64_t>(interval_ns, 1000000)),
      nic_interval_ns_(std::max<uint64_t>(nic_interval_ns, 1000000)),
      from_device_statistics_(!options.device_counters) {
  auto add = [&](auto collector) {
    collectors_.push_back(collector.get());
    auto* raw = collector.get();
    collectors.push_back(std::move(collector));
    return raw;
  };
  napi_ = add(std::make_unique<collect::NapiCollector>(options));
  netdev_ = add(std::make_unique<collect::NetdevCollector>(options));
  drops_ = add(std::make_unique<collect::DropsCollector>(options));
  nic_ = add(std::make_unique<collect::NicCollector>(options));
  names_.own_netns = OwnNetnsInode();
  names_.packets_counted_everywhere = !from_device_statistics_;
}

model::NetSnapshot NetRecording::Read() {
  model::NetSnapshot s;
  s.ts = BoottimeNs();
  for (const collect::NetCollector* c : collectors_) c->ReadCounters(&s);
  if (from_device_statistics_) {
    auto links = link_stats_.Read();
    device_statistics_read_ = links.ok();
    if (links.ok()) {
      model::NetSnapshot reading;
      collect::AppendDeviceStatistics(*links, names_.own_netns, &reading, &names_.devices,
                                      collect::DeviceNaming::kKeepFirst);
      device_statistics_.Observe(reading.devices);
    } else if (!device_statistics_warned_) {
      device_statistics_warned_ = true;
      log::Warning("network: no device statistics, so no packet or byte counts per device: {}",
                   links.error().message);
    }
    device_statistics_.AppendTo(&s);
  }
  return s;
}

bool HasUnnamedDevice(const model::NetSnapshot& snapshot, const model::NetNames& names) {
  // ifindex 0 (the per-CPU backlog, drops without a device) never has a name.
  auto unnamed = [&](const model::NetDeviceKey& dev) { return dev.ifindex && !names.devices.count(dev); };
  return std::any_of(snapshot.devices.begin(), snapshot.devices.end(), [&](const auto& c) { return unnamed(c.dev); }) ||
         std::any_of(snapshot.napi.begin(), snapshot.napi.end(), [&](const auto& c) { return unnamed(c.dev); }) ||
         std::any_of(snapshot.drops.begin(), snapshot.drops.end(), [&](const auto& c) { return unnamed(c.dev); });
}

void NetRecording::RefreshNames(const model::NetSnapshot& snapshot) {
  // Reading a name map walks all its 8192 buckets: a third of the buckets
  // every sample walked, for names the recording already had.
  if (HasUnnamedDevice(snapshot, names_))
    for (const collect::NetCollector* c : collectors_) c->ReadDeviceNames(&names_.devices);
  for (const auto& d : snapshot.drops)
    if (!names_.drop_reasons.count(d.reason))
      names_.drop_reasons.emplace(d.reason, drops_->reason_names().Name(d.reason));
}

void NetRecording::Begin(perfetto::TraceSink& sink, std::shared_ptr<collect::KernelSymbolsLoader> symbols) {
  names_.nic_events = nic_->event_names();
  sink.set_nic_event_names(names_.nic_events);
  symbols_ = std::move(symbols);
  baseline_ = Read();
  // Device statistics need no tracepoint: a kernel without the network
  // tracepoints (or with them hidden) still has packets and bytes per device.
  active_ = device_statistics_read_ ||
            std::any_of(collectors_.begin(), collectors_.end(), [](const collect::NetCollector* c) {
              return c->report().state != model::CollectorState::kDisabled;
            });
  previous_ = baseline_;
  if (Status st = nic_counters_.Begin(sink); !st.ok()) log::Warning("nic counters: {}", st.error().message);
  next_nic_ = baseline_.ts + nic_interval_ns_;
}

Result<uint64_t> NetRecording::MaybeSample(perfetto::TraceSink& sink, uint64_t now) {
  // The NICs' own counters and link events need no kernel counter: sampled
  // even when no network counter is.
  uint64_t due = active_ ? previous_.ts + interval_ns_ : next_nic_;
  if (active_ && now >= due) {
    model::NetSnapshot current = Read();
    RefreshNames(current);
    GN_RETURN_IF_ERROR(sink.WriteNetRates(previous_, current, names_));
    previous_ = std::move(current);
    due = previous_.ts + interval_ns_;
  }
  if (now >= next_nic_) {
    GN_RETURN_IF_ERROR(nic_counters_.Sample(sink, now));
    next_nic_ = now + nic_interval_ns_;
  } else {
    GN_RETURN_IF_ERROR(nic_counters_.Poll(sink, now));
  }
  const uint64_t next = std::min(due, next_nic_);
  return next > now ? next - now : 0;
}

void NetRecording::Freeze() {
  if (frozen_) return;
  frozen_ = true;
  if (active_) {
    final_ = Read();
    frozen_ts_ = final_.ts;
  } else {
    frozen_ts_ = BoottimeNs();
  }
  nic_counters_.Freeze(frozen_ts_);
}

Status NetRecording::Finish(perfetto::TraceSink& sink) {
  Status result = OkStatus();
  auto keep = [&](Status st) {
    if (!st.ok() && result.ok()) result = st;
  };
  if (!frozen_) Freeze();
  keep(sink.WriteNicStatus(frozen_ts_, nic_->report()));
  if (!active_) {
    keep(nic_counters_.Finish(sink, frozen_ts_));
    return result;
  }
  RefreshNames(final_);
  keep(sink.WriteNetRates(previous_, final_, names_));
  keep(sink.CloseNetRates(final_.ts));
  if (!final_.drops.empty()) {
    static const collect::KernelSymbols kNone;
    const collect::KernelSymbols& symbols = symbols_ ? symbols_->Get() : kNone;
    for (const auto& d : final_.drops)
      names_.drop_locations.emplace(d.location, symbols.Symbolize(d.location));
  }
  keep(sink.WriteNetTotals(baseline_, final_, names_));
  keep(nic_counters_.Finish(sink, final_.ts));
  return result;
}

namespace {

std::string Count(uint64_t n) {
  if (n >= 10'000'000) return fmt::format("{:.1f}M", static_cast<double>(n) / 1e6);
  if (n >= 10'000) return fmt::format("{:.1f}k", static_cast<double>(n) / 1e3);
  return std::to_string(n);
}

}  // namespace

std::string NetRecording::Summary() const {
  if (!active_) {
    std::string why;
    for (const collect::NetCollector* c : collectors_)
      why += fmt::format("{}{}: {}", why.empty() ? "" : "; ", c->name(), c->report().reason);
    return "network: not recorded (" + why + ")";
  }
  auto totals = model::TotalsByDevice(model::Delta(baseline_, final_));
  uint64_t rx = 0, tx = 0, napi = 0, drops = 0, full = 0, timeouts = 0;
  std::map<uint32_t, uint64_t> by_reason;
  size_t devices = 0;
  for (const auto& [dev, t] : totals) {
    if (dev.ifindex && !model::IsIdle(t)) ++devices;
    rx += t.rx_packets;
    tx += t.tx_packets;
    napi += t.napi_work;
    full += t.napi_full_budget;
    timeouts += t.tx_timeouts;
    for (const auto& [reason, n] : t.drops_by_reason) {
      drops += n;
      by_reason[reason] += n;
    }
  }
  // A count whose collector could not start is unknown, not zero: left out,
  // and the collector named with its reason.
  auto ran = [](const collect::NetCollector* c) { return c->report().state != model::CollectorState::kDisabled; };
  std::string text = fmt::format("network: {} devices", devices);
  if (from_device_statistics_ || ran(netdev_))
    text += fmt::format(", rx {} packets, tx {} packets ({})", Count(rx), Count(tx),
                        from_device_statistics_ ? "the devices' own statistics, this network namespace"
                                                : "counted per packet, every network namespace");
  if (ran(napi_))
    text += fmt::format(", {} packets through NAPI polls, {} full-budget NAPI polls", Count(napi), Count(full));
  if (ran(netdev_)) text += fmt::format(", {} TX timeouts", timeouts);
  if (ran(drops_)) {
    text += fmt::format(", {} drops", Count(drops));
    if (!by_reason.empty()) {
      auto top = std::max_element(by_reason.begin(), by_reason.end(),
                                  [](const auto& a, const auto& b) { return a.second < b.second; });
      text += fmt::format(" (most: {} {})", model::DropReasonLabel(top->first, names_), Count(top->second));
    }
  }
  std::string uncounted;
  for (const collect::NetCollector* c : std::array<const collect::NetCollector*, 3>{napi_, netdev_, drops_})
    if (!ran(c)) uncounted += fmt::format("{}{} ({})", uncounted.empty() ? "" : ", ", c->name(), c->report().reason);
  if (!uncounted.empty()) text += "; not counted: " + uncounted;
  const model::CollectorReport& nic = nic_->report();
  if (nic.state == model::CollectorState::kDisabled)
    text += "; nic: " + nic.reason;
  else
    text += fmt::format("; nic: {} NIC-driver tracepoints counted", nic.attached_events.size());
  return text + "\n" + nic_counters_.Summary();
}

}  // namespace gpunoise::record
