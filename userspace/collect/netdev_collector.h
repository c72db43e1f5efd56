// bpf/netdev.bpf.c: packets and bytes per device, queue, direction and CPU;
// TX watchdog timeouts and TCP retransmissions as events; GRO per packet.
#pragma once

#include "collect/net_collector.h"

struct netdev_bpf;

namespace gpunoise::collect {

class NetdevCollector : public NetCollector {
 public:
  explicit NetdevCollector(NetOptions options);
  ~NetdevCollector() override;

  std::string_view name() const override { return "netdev"; }
  void Start(const CollectorContext& context) override;
  void AddMapLosses(std::vector<model::MapLoss>& out) const override;
  void ReadCounters(model::NetSnapshot* out) const override;
  void ReadDeviceNames(std::map<model::NetDeviceKey, std::string>* out) const override;
  size_t ForgetDevices(const std::set<model::NetDeviceKey>& gone) override;

 private:
  NetOptions options_;
  netdev_bpf* skel_ = nullptr;
  AggCache cache_;  // in front of gn_dev_stats (bpf/agg_cache.bpf.h)
};

}  // namespace gpunoise::collect
