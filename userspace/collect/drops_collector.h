// bpf/drops.bpf.c: kfree_skb per device, drop reason, code location and CPU.
// Reason names come from the running kernel's BTF (collect/drop_reasons.h).
#pragma once

#include "collect/drop_reasons.h"
#include "collect/net_collector.h"

struct drops_bpf;

namespace gpunoise::collect {

class DropsCollector : public NetCollector {
 public:
  explicit DropsCollector(NetOptions options);
  ~DropsCollector() override;

  std::string_view name() const override { return "drops"; }
  void Start(const CollectorContext& context) override;
  void AddMapLosses(std::vector<model::MapLoss>& out) const override;
  void ReadCounters(model::NetSnapshot* out) const override;
  void ReadDeviceNames(std::map<model::NetDeviceKey, std::string>* out) const override;
  size_t ForgetDevices(const std::set<model::NetDeviceKey>& gone) override;

  // Valid after Start().
  const DropReasonNames& reason_names() const { return reasons_; }

 private:
  NetOptions options_;
  DropReasonNames reasons_;
  drops_bpf* skel_ = nullptr;
  AggCache cache_;  // in front of gn_drop_stats (bpf/agg_cache.bpf.h)
};

}  // namespace gpunoise::collect
