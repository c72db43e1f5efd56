#include "collect/nic_sampler.h"

#include <set>

#include "common/log.h"

namespace gpunoise::collect {

NicSampler::NicSampler() {
  auto io = EthtoolIoctl::Open();
  if (io.ok()) ioctl_.emplace(std::move(io).value());
  else Problem("(all)", io.error().message);
  auto genl = EthtoolGenl::Open();
  if (genl.ok()) genl_ = std::move(genl).value();
  else Problem("(all)", "standard statistics groups: " + genl.error().message);
  auto qstats = NetdevQstats::Open();
  if (qstats.ok()) qstats_.emplace(std::move(qstats).value());
  else Problem("(all)", "per-queue statistics (netdev qstats): " + qstats.error().message);
}

void NicSampler::Problem(const std::string& device, const std::string& what) {
  if (!named_.insert(device + "\n" + what).second) return;
  std::string line = device + ": " + what;
  log::Info("nic counters: {}", line);
  problems_.push_back(std::move(line));
}

Result<std::vector<model::NicReading>> NicSampler::Read(std::vector<LinkStats>* links_out) {
  GN_ASSIGN_OR_RETURN(std::vector<LinkStats> links, link_stats_.Read());
  std::map<int32_t, std::vector<model::NicCounterValue>> queues;
  if (qstats_) {
    auto q = qstats_->Read();
    if (q.ok()) {
      queues = std::move(q).value();
    } else {
      Problem("(all)", "per-queue statistics (netdev qstats): " + q.error().message);
      qstats_.reset();  // a kernel or driver without them: not asked again
    }
  }
  std::vector<model::NicReading> out;
  for (const LinkStats& l : links) {
    if (l.name == "lo") continue;  // loopback has no NIC behind it
    model::NicReading r;
    r.ifindex = l.ifindex;
    r.device = l.name;
    r.carrier = l.carrier;
    r.operstate = std::string(OperstateName(l.operstate));
    r.carrier_changes = l.carrier_changes;
    if (l.carrier && ioctl_) {
      // One GSET: speed, duplex and autonegotiation (known only with a link).
      EthtoolIoctl::LinkSettings s = ioctl_->Settings(l.name);
      r.speed_mbps = s.speed_mbps;
      r.duplex = std::move(s.duplex);
      r.autoneg = std::move(s.autoneg);
    }
    if (ioctl_) {
      auto drv = drivers_.find(l.name);
      if (drv == drivers_.end()) {
        auto info = ioctl_->Info(l.name);
        if (!info.ok()) Problem(l.name, info.error().message);
        drv = drivers_.emplace(l.name, info.ok() ? *info : DriverInfo{}).first;
      }
      r.driver = drv->second.driver;
      Names& n = names_[l.name];
      if (n.names.empty() && !n.unavailable) {
        auto names = ioctl_->StatNames(l.name);
        if (names.ok()) {
          n.names = std::move(names).value();
        } else {
          n.unavailable = true;  // asked once: a driver without statistics stays without
          Problem(l.name, names.error().message);
        }
      }
      if (!n.names.empty()) {
        auto values = ioctl_->StatValues(l.name, n.names.size());
        if (!values.ok()) {
          // The set changed (channels reconfigured): read the names again next time.
          Problem(l.name, values.error().message);
          n.names.clear();
        } else {
          for (size_t i = 0; i < values->size(); ++i)
            if (!model::IsNicGaugeName(n.names[i])) r.counters.push_back({n.names[i], (*values)[i]});
        }
      }
    }
    if (genl_ && !no_standard_.count(l.name)) {
      auto standard = ReadStandardStats(*genl_, l.name);
      if (!standard.ok() || standard->empty()) {
        no_standard_.insert(l.name);
        Problem(l.name, "no standard statistics groups (" +
                            (standard.ok() ? std::string("the driver reports none") : standard.error().message) + ")");
      } else {
        for (auto& v : *standard) r.counters.push_back(std::move(v));
      }
    }
    if (auto q = queues.find(l.ifindex); q != queues.end())
      for (auto& v : q->second) r.counters.push_back(std::move(v));
    out.push_back(std::move(r));
  }
  // A device that went away forgets what was learned about it: one that
  // comes back under the same name may be another device (or driver).
  std::set<std::string> present;
  for (const auto& l : links) present.insert(l.name);
  auto forget = [&](auto& m) {
    for (auto it = m.begin(); it != m.end();) it = present.count(it->first) ? std::next(it) : m.erase(it);
  };
  forget(drivers_);
  forget(names_);
  for (auto it = no_standard_.begin(); it != no_standard_.end();)
    it = present.count(*it) ? std::next(it) : no_standard_.erase(it);
  if (links_out) *links_out = std::move(links);
  return out;
}

}  // namespace gpunoise::collect
