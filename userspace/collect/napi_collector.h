// bpf/napi.bpf.c: NAPI polls per device, queue, IRQ and CPU (full-budget
// polls are the RX-storm signal), and DQL stalls.
#pragma once

#include "collect/net_collector.h"

struct napi_bpf;

namespace gpunoise::collect {

class NapiCollector : public NetCollector {
 public:
  explicit NapiCollector(NetOptions options);
  ~NapiCollector() override;

  std::string_view name() const override { return "napi"; }
  void Start(const CollectorContext& context) override;
  void AddMapLosses(std::vector<model::MapLoss>& out) const override;
  void ReadCounters(model::NetSnapshot* out) const override;
  void ReadDeviceNames(std::map<model::NetDeviceKey, std::string>* out) const override;
  size_t ForgetDevices(const std::set<model::NetDeviceKey>& gone) override;

 private:
  NetOptions options_;
  napi_bpf* skel_ = nullptr;
  AggCache cache_;  // in front of gn_napi_stats (bpf/agg_cache.bpf.h)
};

}  // namespace gpunoise::collect
