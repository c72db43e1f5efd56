#include "collect/netdev_collector.h"

#include "common/log.h"
#include "common/strings.h"
#include "netdev.skel.h"

namespace gpunoise::collect {

NetdevCollector::NetdevCollector(NetOptions options)
    : NetCollector("netdev"), options_(std::move(options)) {}

// Stop() only detaches: the counters stay readable until destruction.
NetdevCollector::~NetdevCollector() {
  Stop();
  if (skel_) netdev_bpf__destroy(skel_);
}

void NetdevCollector::Start(const CollectorContext& context) {
  skel_ = netdev_bpf__open();
  if (!skel_) {
    Disable(fmt::format("failed to open the eBPF object: {}", std::strerror(errno)));
    return;
  }
  ApplyCommonConfig(skel_, context);
  ApplyNetConfig(skel_, options_);
  cache_.Size(skel_->maps.gn_dev_cache, name());
  skel_->rodata->gn_retransmit_has_err = context.catalog->BtfTracepointArity("tcp_retransmit_skb") >= 3;
  // Where TX is counted (bpf/netdev.bpf.c says why): at net_dev_queue, once
  // per GSO skb, unless packets are recorded anyway; then at
  // net_dev_start_xmit, corrected at net_dev_xmit; at net_dev_xmit alone
  // where the kernel has neither.
  auto has = [&](std::string_view event) {
    return (context.attach_mode == AttachMode::kPreferBtf && context.catalog->HasBtfTracepoint(event)) ||
           context.catalog->HasTracefsEvent("net", event);
  };
  uint32_t tx_at = GN_TX_AT_XMIT;
  if (!options_.packets && has("net_dev_queue"))
    tx_at = GN_TX_AT_QUEUE;
  else if (has("net_dev_start_xmit"))
    tx_at = GN_TX_AT_START;
  if (!options_.device_counters) tx_at = GN_TX_AT_XMIT;  // only the TX watchdog is attached
  skel_->rodata->gn_tx_counted_at = tx_at;
  if (!ShareTransport(skel_, context)) {
    Disable(fmt::format("failed to share the ring buffers and gate: {}", std::strerror(errno)));
    return;
  }
  // Packets through devices are what this collector is for; the rest is
  // welcome where the kernel has it.
  static constexpr std::string_view kRequired[] = {"netif_receive_skb"};
  // GRO entry/exit are only wanted as per-packet records; each TX
  // tracepoint only where it counts or makes records.
  auto wanted = [this, tx_at](std::string_view event) {
    if (event == "tcp_retransmit_skb") return options_.retransmits;
    if (!options_.device_counters && event != "net_dev_xmit_timeout") return false;
    if (event == "net_dev_queue") return options_.packets || tx_at == GN_TX_AT_QUEUE;
    if (event == "net_dev_start_xmit") return options_.packets || tx_at == GN_TX_AT_START;
    if (event == "net_dev_xmit") return options_.packets || tx_at == GN_TX_AT_XMIT;
    return options_.packets || !StartsWith(event, "napi_gro_receive_");
  };
  auto load = [&] {
    return cache_.MapAfterLoad(netdev_bpf__load(skel_), skel_->maps.gn_dev_cache, sizeof(gn_dev_cache_slot));
  };
  Status st = SelectLoadAttach(skel_->obj, context, kRequired, load, wanted);
  if (!st.ok()) log::Warning("{}", st.error().message);
}

void NetdevCollector::AddMapLosses(std::vector<model::MapLoss>& out) const { AddNetMapFull(skel_, name(), out); }

void NetdevCollector::ReadCounters(model::NetSnapshot* out) const {
  if (!skel_ || report_.state == model::CollectorState::kDisabled) return;
  ForEachCount<gn_dev_cache_slot>(
      skel_->maps.gn_dev_stats, cache_, [&](const gn_dev_key& k, uint32_t cpu, const gn_dev_val& v) {
        if (!v.packets && !v.bytes && !v.errors) return;
        if (k.dir >= model::kNumNetDirections) return;
        model::DeviceQueueCount c;
        c.dev = {k.dev.netns, k.dev.ifindex};
        c.queue = k.queue;
        c.dir = static_cast<model::NetDirection>(k.dir);
        c.cpu = cpu;
        c.packets = v.packets;
        c.bytes = v.bytes;
        c.errors = v.errors;
        out->devices.push_back(c);
      });
}

void NetdevCollector::ReadDeviceNames(std::map<model::NetDeviceKey, std::string>* out) const {
  if (skel_) ReadNetNames(skel_->maps.gn_net_names, out);
}

size_t NetdevCollector::ForgetDevices(const std::set<model::NetDeviceKey>& gone) {
  if (!skel_) return 0;
  return cache_.Forget<gn_dev_cache_slot>(gone) + DeleteDeviceKeys<gn_dev_key>(skel_->maps.gn_dev_stats, gone) +
         DeleteNetNames(skel_->maps.gn_net_names, gone);
}

}  // namespace gpunoise::collect
