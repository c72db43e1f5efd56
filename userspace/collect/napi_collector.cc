#include "collect/napi_collector.h"

#include "common/log.h"
#include "napi.skel.h"

namespace gpunoise::collect {

NapiCollector::NapiCollector(NetOptions options) : NetCollector("napi"), options_(std::move(options)) {}

// Stop() only detaches: the counters stay readable until destruction.
NapiCollector::~NapiCollector() {
  Stop();
  if (skel_) napi_bpf__destroy(skel_);
}

void NapiCollector::Start(const CollectorContext& context) {
  skel_ = napi_bpf__open();
  if (!skel_) {
    Disable(fmt::format("failed to open the eBPF object: {}", std::strerror(errno)));
    return;
  }
  ApplyCommonConfig(skel_, context);
  ApplyNetConfig(skel_, options_);
  cache_.Size(skel_->maps.gn_napi_cache, name());
  if (!ShareTransport(skel_, context)) {
    Disable(fmt::format("failed to share the ring buffers and gate: {}", std::strerror(errno)));
    return;
  }
  static constexpr std::string_view kRequired[] = {"napi_poll"};
  Status st = SelectLoadAttach(skel_->obj, context, kRequired, [&] {
    return cache_.MapAfterLoad(napi_bpf__load(skel_), skel_->maps.gn_napi_cache, sizeof(gn_napi_cache_slot));
  });
  if (!st.ok()) log::Warning("{}", st.error().message);
}

void NapiCollector::AddMapLosses(std::vector<model::MapLoss>& out) const { AddNetMapFull(skel_, name(), out); }

void NapiCollector::ReadCounters(model::NetSnapshot* out) const {
  if (!skel_ || report_.state == model::CollectorState::kDisabled) return;
  ForEachCount<gn_napi_cache_slot>(
      skel_->maps.gn_napi_stats, cache_, [&](const gn_napi_key& k, uint32_t cpu, const gn_napi_val& v) {
        if (!v.polls) return;
        model::NapiCount c;
        c.dev = {k.dev.netns, k.dev.ifindex};
        c.napi_id = k.napi_id;
        c.queue = k.queue;
        c.irq = k.irq;
        c.cpu = cpu;
        c.polls = v.polls;
        c.full_budget = v.full_budget;
        c.work = v.work;
        out->napi.push_back(c);
      });
}

void NapiCollector::ReadDeviceNames(std::map<model::NetDeviceKey, std::string>* out) const {
  if (skel_) ReadNetNames(skel_->maps.gn_net_names, out);
}

size_t NapiCollector::ForgetDevices(const std::set<model::NetDeviceKey>& gone) {
  if (!skel_) return 0;
  return cache_.Forget<gn_napi_cache_slot>(gone) + DeleteDeviceKeys<gn_napi_key>(skel_->maps.gn_napi_stats, gone) +
         DeleteNetNames(skel_->maps.gn_net_names, gone);
}

}  // namespace gpunoise::collect
