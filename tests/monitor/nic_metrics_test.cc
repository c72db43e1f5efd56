// The NIC metric families: stable names, device/queue/kind labels, no
// double counting of a driver's device-level and per-queue counters, and
// PCIe link and AER series.
#include "monitor/nic_metrics.h"

#include <gtest/gtest.h>

#include "export/openmetrics/exposition.h"
#include "integration/support/privileges.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace gpunoise::monitor {
namespace {

using openmetrics::MetricFamily;

const MetricFamily* FindFamily(const std::vector<MetricFamily>& all, std::string_view name) {
  for (const auto& f : all)
    if (f.name == name) return &f;
  return nullptr;
}

double Value(const MetricFamily& f, const openmetrics::Labels& want) {
  for (const auto& s : f.samples) {
    bool all = true;
    for (const auto& w : want) {
      bool found = false;
      for (const auto& l : s.labels) found |= l == w;
      all &= found;
    }
    if (all) return s.value;
  }
  return -1;
}

NicMetricsInput Input() {
  using K = model::NicCounterKind;
  NicMetricsInput in;
  in.totals = {{"eth2", "rx_missed_errors", K::kRxMissed, -1, 120},
               {"eth2", "rx_queue_3_drops", K::kRxDrop, 3, 7},
               {"eth2", "rx_queue_4_drops", K::kRxDrop, 4, 2},
               {"eth2", "tx_flow_control_xoff", K::kPauseTx, -1, 44},
               {"eth2", "rx_pb_2_pxoff", K::kPfcRx, 2, 5},
               {"eth2", "tx_timeout_count", K::kTxTimeout, -1, 1},
               {"eth2", "rx_unicast", K::kOther, -1, 999}};
  model::NicCounterTracker::DeviceSummary d;
  d.device = "eth2";
  d.driver = "ixgbe";
  d.carrier_changes = 2;
  d.resets = 1;
  in.devices = {d};
  in.carrier = {{"eth2", true}};
  model::PcieLinkState p;
  p.address = "0000:3b:00.0";
  p.role = "nic";
  p.device = "eth2";
  p.width = 8;
  p.max_width = 16;
  p.speed_gts = 16;
  p.max_speed_gts = 16;
  p.aer_correctable = 5;
  p.aer_nonfatal = 0;
  p.aer_fatal = 0;
  in.pcie = {p};
  return in;
}

TEST(NicMetrics, DropsPauseAndErrorsByKindWithStableNames) {
  std::vector<MetricFamily> out;
  AddNicFamilies(Input(), out);
  const auto* drops = FindFamily(out, "gpunoise_nic_drops");
  ASSERT_NE(drops, nullptr);
  EXPECT_EQ(drops->type, openmetrics::MetricType::kCounter);
  EXPECT_EQ(Value(*drops, {{"device", "eth2"}, {"kind", "rx_missed"}}), 120);
  EXPECT_EQ(Value(*drops, {{"device", "eth2"}, {"kind", "rx_drop"}}), 9);  // the queues' sum
  EXPECT_EQ(Value(*drops, {{"device", "eth2"}, {"kind", "tx_drop"}}), 0);  // present at 0: rate() works from the start
  const auto* queues = FindFamily(out, "gpunoise_nic_queue_drops");
  ASSERT_NE(queues, nullptr);
  EXPECT_EQ(Value(*queues, {{"device", "eth2"}, {"queue", "3"}, {"kind", "rx_drop"}}), 7);
  const auto* pause = FindFamily(out, "gpunoise_nic_pause_frames");
  ASSERT_NE(pause, nullptr);
  EXPECT_EQ(Value(*pause, {{"direction", "tx"}, {"type", "link"}}), 44);
  EXPECT_EQ(Value(*pause, {{"direction", "rx"}, {"type", "pfc"}}), 5);
  const auto* errors = FindFamily(out, "gpunoise_nic_errors");
  ASSERT_NE(errors, nullptr);
  EXPECT_EQ(Value(*errors, {{"kind", "tx_timeout"}}), 1);
  EXPECT_EQ(Value(*FindFamily(out, "gpunoise_nic_carrier_changes"), {{"device", "eth2"}}), 2);
  EXPECT_EQ(Value(*FindFamily(out, "gpunoise_nic_statistics_resets"), {{"device", "eth2"}}), 1);
  EXPECT_EQ(Value(*FindFamily(out, "gpunoise_nic_link_up"), {{"device", "eth2"}}), 1);
}

TEST(NicMetrics, LinkSpeedAndDuplexWhileTheDriverReportsThem) {
  NicMetricsInput in = Input();
  in.speed_mbps["eth2"] = 25000;
  in.full_duplex["eth2"] = false;
  std::vector<MetricFamily> out;
  AddNicFamilies(in, out);
  EXPECT_EQ(Value(*FindFamily(out, "gpunoise_nic_link_speed_mbps"), {{"device", "eth2"}}), 25000);
  EXPECT_EQ(Value(*FindFamily(out, "gpunoise_nic_link_full_duplex"), {{"device", "eth2"}}), 0);
  // No settings (no link, a virtual device): no sample, not a 0.
  std::vector<MetricFamily> none;
  AddNicFamilies(Input(), none);
  EXPECT_TRUE(FindFamily(none, "gpunoise_nic_link_speed_mbps")->samples.empty());
}

TEST(NicMetrics, PcieWidthSpeedAndAerBySeverity) {
  std::vector<MetricFamily> out;
  AddNicFamilies(Input(), out);
  EXPECT_EQ(Value(*FindFamily(out, "gpunoise_pcie_link_width"), {{"address", "0000:3b:00.0"}, {"role", "nic"}}), 8);
  EXPECT_EQ(Value(*FindFamily(out, "gpunoise_pcie_link_max_width"), {{"address", "0000:3b:00.0"}}), 16);
  EXPECT_EQ(Value(*FindFamily(out, "gpunoise_pcie_link_speed_gts"), {{"device", "eth2"}}), 16);
  EXPECT_EQ(Value(*FindFamily(out, "gpunoise_pcie_aer_errors"), {{"severity", "correctable"}}), 5);
  EXPECT_EQ(Value(*FindFamily(out, "gpunoise_pcie_aer_errors"), {{"severity", "fatal"}}), 0);
}

}  // namespace
}  // namespace gpunoise::monitor

namespace gpunoise::monitor {
namespace {

// Every family validates, and promtool's linter (names, types, help) accepts
// the exposition: the names stay usable in the rules of docs/deploy.
TEST(NicMetrics, FamiliesValidateAndPromtoolAcceptsThem) {
  std::vector<MetricFamily> out;
  AddNicFamilies(Input(), out);
  for (const auto& f : out) EXPECT_TRUE(openmetrics::Validate(f).ok()) << f.name;
  if (std::system("command -v promtool >/dev/null 2>&1") != 0)
    GN_SKIP_MISSING_TOOL("promtool is not installed (Debian package prometheus)");
  std::string text;
  openmetrics::Render(out, openmetrics::Format::kPrometheusText, &text);
  char path[] = "/tmp/gn_nic_metrics_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  close(fd);
  std::string cmd = std::string("promtool check metrics < ") + path + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string lint;
  char buf[512];
  while (p && fgets(buf, sizeof(buf), p)) lint += buf;
  int rc = p ? pclose(p) : -1;
  unlink(path);
  EXPECT_EQ(rc, 0) << lint;
  EXPECT_TRUE(lint.empty()) << lint;
}

}  // namespace
}  // namespace gpunoise::monitor
