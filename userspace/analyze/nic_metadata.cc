#include "analyze/nic_metadata.h"

#include <algorithm>

#include "common/strings.h"

namespace gpunoise::analyze {
namespace {

std::string Str(const MetaInstant& m, std::string_view key) {
  const model::TrackArg* a = m.Find(key);
  return a ? a->ToString() : std::string();
}

uint64_t U(const MetaInstant& m, std::string_view key) {
  const model::TrackArg* a = m.Find(key);
  int64_t v = 0;
  return a && a->AsInt64(&v) && v > 0 ? static_cast<uint64_t>(v) : 0;
}

double D(const MetaInstant& m, std::string_view key) {
  const model::TrackArg* a = m.Find(key);
  return a ? a->AsDouble() : 0;
}

bool B(const MetaInstant& m, std::string_view key) {
  const model::TrackArg* a = m.Find(key);
  int64_t v = 0;
  return a && a->AsInt64(&v) && v != 0;
}

}  // namespace

uint64_t NicDevice::drops() const {
  uint64_t n = 0;
  for (const auto& [kind, v] : by_kind)
    if (model::IsNicDropKind(kind)) n += v;
  return n;
}

uint64_t NicDevice::pause_frames() const {
  uint64_t n = 0;
  for (const auto& [kind, v] : by_kind)
    if (kind == model::NicCounterKind::kPauseRx || kind == model::NicCounterKind::kPauseTx ||
        kind == model::NicCounterKind::kPfcRx || kind == model::NicCounterKind::kPfcTx)
      n += v;
  return n;
}

const NicDevice* NicMetadata::Device(std::string_view name) const {
  for (const auto& d : devices)
    if (d.device == name) return &d;
  return nullptr;
}

NicMetadata ReadNicMetadata(const Timeline& t, const NetMetadata& net) {
  NicMetadata m;
  std::map<std::string, std::string> driver_of;
  for (const MetaInstant& e : t.net_metadata) {
    if (e.name == "nic counters") {
      NicDevice d;
      d.device = Str(e, "device");
      d.driver = Str(e, "driver");
      d.bus_info = Str(e, "bus_info");
      d.resets = U(e, "resets");
      d.carrier_changes = static_cast<uint32_t>(U(e, "carrier_changes"));
      d.link_down_events = static_cast<uint32_t>(U(e, "link_down_events"));
      for (const auto& a : e.args) {
        if (!StartsWith(a.name, "c.")) continue;
        int64_t v = 0;
        if (!a.AsInt64(&v) || v <= 0) continue;
        std::string name = a.name.substr(2);
        model::NicCounterClass c = model::ClassifyNicCounter(d.driver, name);
        d.counters.push_back({d.device, name, c.kind, c.queue, static_cast<uint64_t>(v)});
      }
      d.by_kind = model::SumByKind(d.counters);
      driver_of[d.device] = d.driver;
      m.devices.push_back(std::move(d));
    } else if (e.name == "pcie link") {
      PcieLink p;
      p.state.address = Str(e, "address");
      p.state.role = Str(e, "role");
      p.state.device = Str(e, "device");
      p.state.speed_gts = D(e, "speed_gts");
      p.state.max_speed_gts = D(e, "max_speed_gts");
      p.state.width = static_cast<uint32_t>(U(e, "width"));
      p.state.max_width = static_cast<uint32_t>(U(e, "max_width"));
      if (e.Find("aer_correctable")) p.state.aer_correctable = U(e, "aer_correctable");
      if (e.Find("aer_nonfatal")) p.state.aer_nonfatal = U(e, "aer_nonfatal");
      if (e.Find("aer_fatal")) p.state.aer_fatal = U(e, "aer_fatal");
      p.aer_correctable_rise = U(e, "aer_correctable_rise");
      p.aer_nonfatal_rise = U(e, "aer_nonfatal_rise");
      p.aer_fatal_rise = U(e, "aer_fatal_rise");
      p.start_width = e.Find("start_width") ? static_cast<uint32_t>(U(e, "start_width")) : p.state.width;
      p.start_speed_gts = e.Find("start_speed_gts") ? D(e, "start_speed_gts") : p.state.speed_gts;
      m.pcie.push_back(std::move(p));
    } else if (e.name == "pcie retrain") {
      PcieRetrain r;
      r.ts = e.ts;
      r.address = Str(e, "address");
      r.role = Str(e, "role");
      r.device = Str(e, "device");
      r.previous_width = static_cast<uint32_t>(U(e, "previous_width"));
      r.width = static_cast<uint32_t>(U(e, "width"));
      r.previous_speed_gts = D(e, "previous_speed_gts");
      r.speed_gts = D(e, "speed_gts");
      m.retrains.push_back(std::move(r));
    } else if (auto kind = model::LinkEventKindFromName(Str(e, "kind")); kind && e.Find("source")) {
      model::LinkEvent l;
      l.ts = e.ts;
      l.kind = *kind;
      l.device = Str(e, "device");
      l.ifindex = static_cast<int32_t>(U(e, "ifindex"));
      l.carrier = B(e, "carrier");
      l.operstate = Str(e, "operstate");
      l.carrier_changes = static_cast<uint32_t>(U(e, "carrier_changes"));
      l.speed_mbps = static_cast<uint32_t>(U(e, "speed_mbps"));
      l.duplex = Str(e, "duplex");
      l.autoneg = Str(e, "autoneg");
      l.previous_duplex = Str(e, "previous_duplex");
      l.previous_autoneg = Str(e, "previous_autoneg");
      l.counter = Str(e, "counter");
      l.previous = U(e, "previous");
      l.current = U(e, "current");
      l.source = Str(e, "source");
      m.link_events.push_back(std::move(l));
    }
  }
  std::stable_sort(m.link_events.begin(), m.link_events.end(),
                   [](const auto& a, const auto& b) { return a.ts < b.ts; });
  for (const NetCounter& c : net.counters) {
    // Ethtool counters' rates and NIC-driver events per second alike.
    if (c.metric != model::NetMetric::kNicCounter && c.metric != model::NetMetric::kNicEvents) continue;
    NicRateTrack r;
    r.device = c.device;
    r.counter = c.detail;
    auto drv = driver_of.find(c.device);
    model::NicCounterClass cls =
        model::ClassifyNicCounter(drv == driver_of.end() ? std::string_view() : drv->second, r.counter);
    r.kind = cls.kind;
    r.queue = cls.queue;
    r.samples = c.samples;
    m.rates.push_back(std::move(r));
  }
  return m;
}

}  // namespace gpunoise::analyze
