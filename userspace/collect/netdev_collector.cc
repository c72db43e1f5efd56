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
  skel_->rodata->gn_retransmit_has_err = context.catalog->BtfTracepointArity("tcp_retransmit_skb") >= 3;
  // TX is counted at net_dev_start_xmit, one program per packet; net_dev_xmit
  // (the driver's return code) runs only for per-packet records, or to count
  // where the kernel lacks net_dev_start_xmit (bpf/netdev.bpf.c says why).
  const bool start_xmit = options_.device_counters &&
                          ((context.attach_mode == AttachMode::kPreferBtf &&
                            context.catalog->HasBtfTracepoint("net_dev_start_xmit")) ||
                           context.catalog->HasTracefsEvent("net", "net_dev_start_xmit"));
  skel_->rodata->gn_tx_counted_at_start = start_xmit;
  if (!ShareTransport(skel_, context)) {
    Disable(fmt::format("failed to share the ring buffers and gate: {}", std::strerror(errno)));
    return;
  }
  // Packets through devices are what this collector is for; the rest is
  // welcome where the kernel has it.
  static constexpr std::string_view kRequired[] = {"netif_receive_skb"};
  // GRO entry/exit are only wanted as per-packet records. net_dev_queue
  // would add a fourth program to every transmitted packet for a count that
  // net_dev_xmit and the qdisc drop reasons already give (bench/net: ~85 ns
  // per packet), so it is counted only when packets are recorded anyway.
  auto wanted = [this, start_xmit](std::string_view event) {
    if (event == "tcp_retransmit_skb") return options_.retransmits;
    if (!options_.device_counters && event != "net_dev_xmit_timeout") return false;
    if (event == "net_dev_xmit") return options_.packets || !start_xmit;
    return options_.packets || !(StartsWith(event, "napi_gro_receive_") || event == "net_dev_queue");
  };
  Status st = SelectLoadAttach(skel_->obj, context, kRequired,
                               [&] { return netdev_bpf__load(skel_); }, wanted);
  if (!st.ok()) log::Warning("{}", st.error().message);
}

void NetdevCollector::AddMapLosses(std::vector<model::MapLoss>& out) const { AddNetMapFull(skel_, name(), out); }

void NetdevCollector::ReadCounters(model::NetSnapshot* out) const {
  if (!skel_ || report_.state == model::CollectorState::kDisabled) return;
  ForEachPerCpuValue<gn_dev_key, gn_dev_val>(
      skel_->maps.gn_dev_stats, [&](const gn_dev_key& k, uint32_t cpu, const gn_dev_val& v) {
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
  return DeleteDeviceKeys<gn_dev_key>(skel_->maps.gn_dev_stats, gone) + DeleteNetNames(skel_->maps.gn_net_names, gone);
}

}  // namespace gpunoise::collect
