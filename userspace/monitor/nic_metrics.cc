#include "monitor/nic_metrics.h"

#include <fmt/format.h>

namespace gpunoise::monitor {
namespace {

using model::NicCounterKind;
using openmetrics::Labels;
using openmetrics::Family;
using openmetrics::MetricFamily;
using openmetrics::MetricType;

bool IsError(NicCounterKind k) {
  switch (k) {
    case NicCounterKind::kRxError:
    case NicCounterKind::kTxError:
    case NicCounterKind::kTxTimeout:
    case NicCounterKind::kLinkDown:
    case NicCounterKind::kPcieError:
    case NicCounterKind::kDmaError:
    case NicCounterKind::kRxAllocFail:
    case NicCounterKind::kReset:
      return true;
    default:
      return false;
  }
}

}  // namespace

void AddNicFamilies(const NicMetricsInput& in, std::vector<MetricFamily>& out) {
  auto drops = Family("gpunoise_nic_drops", MetricType::kCounter, "",
                      "Packets the NIC or its driver dropped (ethtool -S, standard groups), by kind: rx_missed (the "
                      "host did not drain the ring), rx_nic_discard, rx_drop, tx_drop, rate_limited.");
  auto queue_drops = Family("gpunoise_nic_queue_drops", MetricType::kCounter, "",
                            "Per-queue drop counters of the NIC's driver, by queue and kind.");
  auto pause = Family("gpunoise_nic_pause_frames", MetricType::kCounter, "",
                      "Pause frames by direction (rx: the peer asked us to stop; tx: we asked the peer) and type "
                      "(link: 802.3x, pfc: per priority).");
  auto errors = Family("gpunoise_nic_errors", MetricType::kCounter, "",
                       "NIC error and event counters by kind (tx_timeout, rx_error, tx_error, link_down, pcie_error, "
                       "dma_error, rx_alloc_fail, reset).");
  std::map<std::string, std::vector<model::NicCounterTotal>> by_device;
  for (const auto& t : in.totals) by_device[t.device].push_back(t);
  for (const auto& d : in.devices) by_device.try_emplace(d.device);
  for (const auto& [device, totals] : by_device) {
    auto sums = model::SumByKind(totals);
    for (NicCounterKind k : {NicCounterKind::kRxMissed, NicCounterKind::kRxNicDiscard, NicCounterKind::kRxDrop,
                             NicCounterKind::kTxDrop, NicCounterKind::kRateLimited})
      drops.samples.push_back({{{"device", device}, {"kind", std::string(model::NicCounterKindName(k))}},
                               static_cast<double>(sums[k])});
    for (const auto& t : totals)
      if (t.queue >= 0 && model::IsNicDropKind(t.kind))
        queue_drops.samples.push_back({{{"device", device}, {"queue", std::to_string(t.queue)},
                                        {"kind", std::string(model::NicCounterKindName(t.kind))}},
                                       static_cast<double>(t.delta)});
    // Clang before 16 (the fuzz build's clang 14) cannot capture a
    // structured binding in a lambda.
    const auto& dev = device;
    auto pause_sample = [&](const char* dir, const char* type, NicCounterKind k) {
      pause.samples.push_back({{{"device", dev}, {"direction", dir}, {"type", type}}, static_cast<double>(sums[k])});
    };
    pause_sample("rx", "link", NicCounterKind::kPauseRx);
    pause_sample("tx", "link", NicCounterKind::kPauseTx);
    pause_sample("rx", "pfc", NicCounterKind::kPfcRx);
    pause_sample("tx", "pfc", NicCounterKind::kPfcTx);
    for (const auto& [k, n] : sums)
      if (IsError(k))
        errors.samples.push_back({{{"device", device}, {"kind", std::string(model::NicCounterKindName(k))}},
                                  static_cast<double>(n)});
  }
  out.push_back(std::move(drops));
  out.push_back(std::move(queue_drops));
  out.push_back(std::move(pause));
  out.push_back(std::move(errors));

  auto carrier_changes = Family("gpunoise_nic_carrier_changes", MetricType::kCounter, "",
                                "Carrier changes of the device since the monitor started (the kernel's carrier_changes).");
  auto resets = Family("gpunoise_nic_statistics_resets", MetricType::kCounter, "",
                       "NIC counters that went down (a device or queue reset); counted from zero after each.");
  auto up = Family("gpunoise_nic_link_up", MetricType::kGauge, "",
                   "1 when the device has carrier and is operationally up.");
  auto speed_mbps = Family("gpunoise_nic_link_speed_mbps", MetricType::kGauge, "",
                           "Negotiated link speed in Mb/s (ethtool), while the link is up and the driver reports one.");
  auto duplex = Family("gpunoise_nic_link_full_duplex", MetricType::kGauge, "",
                       "1 at full duplex, 0 at half (ethtool), while the link is up and the driver reports it.");
  for (const auto& d : in.devices) {
    if (!d.present) continue;
    Labels l = {{"device", d.device}};
    carrier_changes.samples.push_back({l, static_cast<double>(d.carrier_changes)});
    resets.samples.push_back({l, static_cast<double>(d.resets)});
    auto c = in.carrier.find(d.device);
    if (c != in.carrier.end()) up.samples.push_back({l, c->second ? 1.0 : 0.0});
    if (auto s = in.speed_mbps.find(d.device); s != in.speed_mbps.end())
      speed_mbps.samples.push_back({l, static_cast<double>(s->second)});
    if (auto f = in.full_duplex.find(d.device); f != in.full_duplex.end())
      duplex.samples.push_back({l, f->second ? 1.0 : 0.0});
  }
  out.push_back(std::move(carrier_changes));
  out.push_back(std::move(resets));
  out.push_back(std::move(up));
  out.push_back(std::move(speed_mbps));
  out.push_back(std::move(duplex));

  auto aer = Family("gpunoise_pcie_aer_errors", MetricType::kCounter, "",
                    "PCIe AER errors the device reported since boot (aer_dev_*), by severity.");
  auto width = Family("gpunoise_pcie_link_width", MetricType::kGauge, "", "Current PCIe link width (lanes).");
  auto max_width = Family("gpunoise_pcie_link_max_width", MetricType::kGauge, "", "Maximum PCIe link width (lanes).");
  auto speed = Family("gpunoise_pcie_link_speed_gts", MetricType::kGauge, "", "Current PCIe link speed (GT/s).");
  auto max_speed = Family("gpunoise_pcie_link_max_speed_gts", MetricType::kGauge, "", "Maximum PCIe link speed (GT/s).");
  for (const auto& p : in.pcie) {
    Labels l = {{"address", p.address}, {"role", p.role}, {"device", p.device}};
    auto sev = [&](const char* name, const std::optional<uint64_t>& v) {
      if (!v) return;
      Labels ls = l;
      ls.push_back({"severity", name});
      aer.samples.push_back({ls, static_cast<double>(*v)});
    };
    sev("correctable", p.aer_correctable);
    sev("nonfatal", p.aer_nonfatal);
    sev("fatal", p.aer_fatal);
    if (p.max_width) {
      width.samples.push_back({l, static_cast<double>(p.width)});
      max_width.samples.push_back({l, static_cast<double>(p.max_width)});
    }
    if (p.max_speed_gts > 0) {
      speed.samples.push_back({l, p.speed_gts});
      max_speed.samples.push_back({l, p.max_speed_gts});
    }
  }
  out.push_back(std::move(aer));
  out.push_back(std::move(width));
  out.push_back(std::move(max_width));
  out.push_back(std::move(speed));
  out.push_back(std::move(max_speed));
}

}  // namespace gpunoise::monitor
