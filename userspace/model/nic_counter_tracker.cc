#include "model/nic_counter_tracker.h"

#include <set>

namespace gpunoise::model {

bool NicCounterTracker::Notice(const LinkEvent& e) {
  auto it = devices_.find(e.device);
  if (it == devices_.end()) return true;
  if (e.kind != LinkEventKind::kCarrierDown && e.kind != LinkEventKind::kCarrierUp) return true;
  Device& d = it->second;
  // carrier_changes as the notification carries it (IFLA_CARRIER_CHANGES);
  // 0 from a kernel that does not send it: no way to tell, keep it.
  if (e.carrier_changes != 0) {
    if (static_cast<int32_t>(e.carrier_changes - d.accounted) <= 0) return false;  // already reported
    d.accounted = e.carrier_changes;
  }
  if (e.kind == LinkEventKind::kCarrierDown) ++d.downs;
  d.carrier = e.kind == LinkEventKind::kCarrierUp;
  return true;
}

NicTrackerUpdate NicCounterTracker::Observe(uint64_t ts, const std::vector<NicReading>& readings) {
  NicTrackerUpdate u;
  u.from = last_ts_ ? last_ts_ : ts;
  u.to = ts;
  last_ts_ = ts;
  std::set<std::string> seen;
  for (const NicReading& r : readings) {
    seen.insert(r.device);
    auto [it, fresh] = devices_.try_emplace(r.device);
    Device& d = it->second;
    auto event = [&](LinkEventKind kind) {
      LinkEvent e;
      e.ts = ts;
      e.device = r.device;
      e.ifindex = r.ifindex;
      e.kind = kind;
      e.carrier = r.carrier;
      e.operstate = r.operstate;
      e.carrier_changes = r.carrier_changes;
      e.speed_mbps = r.speed_mbps;
      e.duplex = r.duplex;
      e.autoneg = r.autoneg;
      e.source = "sample";
      return e;
    };
    if (fresh || !d.present) {
      // A baseline: a device seen for the first time, or back after it was
      // gone (its counters may have restarted; nothing is counted across).
      if (!fresh) u.events.push_back(event(LinkEventKind::kAppeared));
      d.present = true;
      d.driver = r.driver;
      d.carrier = r.carrier;
      d.carrier_changes = d.carrier_changes_base = d.accounted = r.carrier_changes;
      d.speed_mbps = r.speed_mbps;
      d.duplex = r.duplex;
      d.autoneg = r.autoneg;
      for (const auto& c : r.counters) d.last[c.name] = c.value;
      continue;
    }
    // Carrier: the kernel's count says how many changes there were; the
    // notifications already reported some of them at their own time.
    uint32_t changes = r.carrier_changes - d.carrier_changes;  // u32 arithmetic wraps as the kernel's does
    int32_t unreported = static_cast<int32_t>(r.carrier_changes - d.accounted);
    uint32_t missed = unreported > 0 ? static_cast<uint32_t>(unreported) : 0;
    if (missed > 0) {
      // Replay the missed changes so the link ends in the state read now:
      // an odd count flips the state, an even count is down+up (or up+down).
      bool state = (missed % 2 == 1) ? !r.carrier : r.carrier;
      for (uint32_t i = 0; i < missed && i < 64; ++i) {
        state = !state;
        LinkEvent e = event(state ? LinkEventKind::kCarrierUp : LinkEventKind::kCarrierDown);
        e.carrier = state;
        if (!state) ++d.downs;
        u.events.push_back(std::move(e));
      }
    } else if (r.carrier != d.carrier && changes == 0) {
      // A carrier flip the kernel's count did not see (should not happen).
      if (!r.carrier) ++d.downs;
      u.events.push_back(event(r.carrier ? LinkEventKind::kCarrierUp : LinkEventKind::kCarrierDown));
    }
    d.carrier = r.carrier;
    d.carrier_changes = r.carrier_changes;
    if (unreported > 0) d.accounted = r.carrier_changes;
    if (r.speed_mbps && d.speed_mbps && r.speed_mbps != d.speed_mbps) {
      LinkEvent e = event(LinkEventKind::kSpeedChange);
      e.previous = d.speed_mbps;
      e.current = r.speed_mbps;
      u.events.push_back(std::move(e));
    }
    if (r.speed_mbps) d.speed_mbps = r.speed_mbps;
    // Duplex and autonegotiation are known only while the link is up (like
    // the speed): a change is between two known settings, with the old and
    // new one on the event.
    if (!r.duplex.empty() && !d.duplex.empty() && r.duplex != d.duplex) {
      LinkEvent e = event(LinkEventKind::kDuplexChange);
      e.previous_duplex = d.duplex;
      u.events.push_back(std::move(e));
    }
    if (!r.duplex.empty()) d.duplex = r.duplex;
    if (!r.autoneg.empty() && !d.autoneg.empty() && r.autoneg != d.autoneg) {
      LinkEvent e = event(LinkEventKind::kAutonegChange);
      e.previous_autoneg = d.autoneg;
      u.events.push_back(std::move(e));
    }
    if (!r.autoneg.empty()) d.autoneg = r.autoneg;
    for (const auto& c : r.counters) {
      auto last = d.last.find(c.name);
      if (last == d.last.end()) {
        d.last.emplace(c.name, c.value);  // a counter new since the baseline
        continue;
      }
      CounterStep step = StepCounter(last->second, c.value);
      if (step.reset) {
        ++d.resets;
        LinkEvent e = event(LinkEventKind::kCounterReset);
        e.counter = c.name;
        e.previous = last->second;
        e.current = c.value;
        u.events.push_back(std::move(e));
      }
      last->second = c.value;
      if (step.delta) {
        d.total[c.name] += step.delta;
        u.steps.push_back({r.device, c.name, step.delta});
      }
    }
  }
  for (auto& [name, d] : devices_) {
    if (!d.present || seen.count(name)) continue;
    d.present = false;
    LinkEvent e;
    e.ts = ts;
    e.device = name;
    e.kind = LinkEventKind::kRemoved;
    e.source = "sample";
    u.events.push_back(std::move(e));
  }
  return u;
}

std::vector<NicCounterTotal> NicCounterTracker::Totals() const {
  std::vector<NicCounterTotal> out;
  for (const auto& [name, d] : devices_)
    for (const auto& [counter, delta] : d.total) {
      NicCounterClass c = ClassifyNicCounter(d.driver, counter);
      out.push_back({name, counter, c.kind, c.queue, delta});
    }
  return out;
}

std::vector<NicCounterTracker::DeviceSummary> NicCounterTracker::Devices() const {
  std::vector<DeviceSummary> out;
  for (const auto& [name, d] : devices_)
    out.push_back({name, d.driver, d.resets, d.carrier_changes - d.carrier_changes_base, d.downs, d.present});
  return out;
}

}  // namespace gpunoise::model
