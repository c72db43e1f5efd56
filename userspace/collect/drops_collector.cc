#include "collect/drops_collector.h"

#include "common/log.h"
#include "drops.skel.h"

namespace gpunoise::collect {

DropsCollector::DropsCollector(NetOptions options)
    : NetCollector("drops"), options_(std::move(options)) {}

// Stop() only detaches: the counters stay readable until destruction.
DropsCollector::~DropsCollector() {
  Stop();
  if (skel_) drops_bpf__destroy(skel_);
}

void DropsCollector::Start(const CollectorContext& context) {
  reasons_ = DropReasonNames::FromBtf(context.catalog->vmlinux_btf());
  skel_ = drops_bpf__open();
  if (!skel_) {
    Disable(fmt::format("failed to open the eBPF object: {}", std::strerror(errno)));
    return;
  }
  ApplyCommonConfig(skel_, context);
  ApplyNetConfig(skel_, options_);
  cache_.Size(skel_->maps.gn_drop_cache, name());
  int arity = context.catalog->BtfTracepointArity("kfree_skb");
  skel_->rodata->gn_kfree_has_reason = arity >= 3;
  skel_->rodata->gn_kfree_has_rx_sk = arity >= 4;
  if (!ShareTransport(skel_, context)) {
    Disable(fmt::format("failed to share the ring buffers and gate: {}", std::strerror(errno)));
    return;
  }
  static constexpr std::string_view kRequired[] = {"kfree_skb"};
  Status st = SelectLoadAttach(skel_->obj, context, kRequired, [&] {
    return cache_.MapAfterLoad(drops_bpf__load(skel_), skel_->maps.gn_drop_cache, sizeof(gn_drop_cache_slot));
  });
  if (!st.ok()) {
    log::Warning("{}", st.error().message);
    return;
  }
  if (reasons_.size() == 0)
    log::Info("drops: this kernel's BTF has no enum skb_drop_reason; drops are counted without reasons");
}

void DropsCollector::AddMapLosses(std::vector<model::MapLoss>& out) const { AddNetMapFull(skel_, name(), out); }

void DropsCollector::ReadCounters(model::NetSnapshot* out) const {
  if (!skel_ || report_.state == model::CollectorState::kDisabled) return;
  ForEachCount<gn_drop_cache_slot>(
      skel_->maps.gn_drop_stats, cache_, [&](const gn_drop_key& k, uint32_t cpu, const gn_drop_val& v) {
        if (!v.packets) return;
        model::DropCount c;
        c.dev = {k.dev.netns, k.dev.ifindex};
        c.reason = k.reason;
        c.location = k.location;
        c.cpu = cpu;
        c.packets = v.packets;
        c.bytes = v.bytes;
        out->drops.push_back(c);
      });
}

void DropsCollector::ReadDeviceNames(std::map<model::NetDeviceKey, std::string>* out) const {
  if (skel_) ReadNetNames(skel_->maps.gn_net_names, out);
}

size_t DropsCollector::ForgetDevices(const std::set<model::NetDeviceKey>& gone) {
  if (!skel_) return 0;
  return cache_.Forget<gn_drop_cache_slot>(gone) + DeleteDeviceKeys<gn_drop_key>(skel_->maps.gn_drop_stats, gone) +
         DeleteNetNames(skel_->maps.gn_net_names, gone);
}

}  // namespace gpunoise::collect
