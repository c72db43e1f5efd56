#include "model/net_counters.h"

#include <gtest/gtest.h>

namespace gpunoise::model {
namespace {

constexpr NetDeviceKey kEth0{100, 2};
constexpr NetDeviceKey kVeth{200, 5};

NetSnapshot At(uint64_t ts) {
  NetSnapshot s;
  s.ts = ts;
  return s;
}

DeviceQueueCount Count(NetDeviceKey dev, NetDirection dir, int32_t queue, uint32_t cpu,
                       uint64_t packets, uint64_t bytes, uint64_t errors = 0) {
  DeviceQueueCount c;
  c.dev = dev;
  c.dir = dir;
  c.queue = queue;
  c.cpu = cpu;
  c.packets = packets;
  c.bytes = bytes;
  c.errors = errors;
  return c;
}

TEST(NetCounters, DeviceStatisticsCountTheDeviceButNoCpu) {
  NetSnapshot a = At(1'000'000'000), b = At(2'000'000'000);
  a.devices.push_back(Count(kEth0, NetDirection::kRx, -1, kDeviceWideCpu, 1000, 100'000));
  b.devices.push_back(Count(kEth0, NetDirection::kRx, -1, kDeviceWideCpu, 3000, 300'000));
  b.devices.push_back(Count(kVeth, NetDirection::kRx, 0, 1, 50, 5000));
  auto totals = TotalsByDevice(Delta(a, b));
  EXPECT_EQ(totals[kEth0].rx_packets, 2000u);
  EXPECT_TRUE(totals[kEth0].from_device_statistics);
  EXPECT_TRUE(totals[kEth0].rx_packets_by_cpu.empty());
  EXPECT_FALSE(totals[kVeth].from_device_statistics);
  EXPECT_EQ(totals[kVeth].rx_packets_by_cpu[1], 50u);
  auto rates = RatesByDevice(a, b);
  EXPECT_DOUBLE_EQ(rates[kEth0].rx_packets_per_s, 2000);
  EXPECT_TRUE(rates[kEth0].rx_packets_per_s_by_cpu.empty());
}

TEST(NetCounters, DeviceLabelNamesForeignNamespacesAndUnknownDevices) {
  NetNames names;
  names.own_netns = 100;
  names.devices[kEth0] = "eth0";
  names.devices[kVeth] = "veth1";
  EXPECT_EQ(DeviceLabel(kEth0, names), "eth0");
  EXPECT_EQ(DeviceLabel(kVeth, names), "veth1@200");
  EXPECT_EQ(DeviceLabel({100, 9}, names), "if9");
  EXPECT_EQ(DeviceLabel({0, 0}, names), "(no-device)");
  EXPECT_EQ(DeviceLabel({200, 0}, names), "(no-device)@200");
}

TEST(NetCounters, TotalsSumQueuesAndCpusPerDeviceAndDirection) {
  NetSnapshot s = At(1);
  s.devices.push_back(Count(kEth0, NetDirection::kRx, 0, 0, 10, 1000));
  s.devices.push_back(Count(kEth0, NetDirection::kRx, 1, 1, 5, 500));
  s.devices.push_back(Count(kEth0, NetDirection::kTx, 0, 1, 7, 700, 2));
  s.devices.push_back(Count(kEth0, NetDirection::kTxTimeout, 3, 0, 1, 0));
  NapiCount n;
  n.dev = kEth0;
  n.cpu = 1;
  n.polls = 4;
  n.full_budget = 1;
  n.work = 100;
  s.napi.push_back(n);
  DropCount d;
  d.dev = kEth0;
  d.reason = 6;
  d.packets = 3;
  s.drops.push_back(d);
  auto totals = TotalsByDevice(s);
  ASSERT_EQ(totals.size(), 1u);
  const DeviceTotals& t = totals[kEth0];
  EXPECT_EQ(t.rx_packets, 15u);
  EXPECT_EQ(t.rx_bytes, 1500u);
  EXPECT_EQ(t.tx_packets, 7u);
  EXPECT_EQ(t.tx_errors, 2u);
  EXPECT_EQ(t.tx_timeouts, 1u);
  EXPECT_EQ(t.napi_polls, 4u);
  EXPECT_EQ(t.napi_full_budget, 1u);
  EXPECT_EQ(t.napi_work_by_cpu.at(1), 100u);
  EXPECT_EQ(t.rx_packets_by_cpu.at(0), 10u);
  EXPECT_EQ(t.drops_by_reason.at(6), 3u);
}

TEST(NetCounters, DeltaSubtractsMatchingEntriesAndKeepsNewOnes) {
  NetSnapshot a = At(1), b = At(2);
  a.devices.push_back(Count(kEth0, NetDirection::kRx, 0, 0, 10, 1000));
  b.devices.push_back(Count(kEth0, NetDirection::kRx, 0, 0, 25, 2500));
  b.devices.push_back(Count(kEth0, NetDirection::kRx, 0, 1, 4, 400));  // new CPU
  NetSnapshot d = Delta(a, b);
  ASSERT_EQ(d.devices.size(), 2u);
  EXPECT_EQ(d.devices[0].packets, 15u);
  EXPECT_EQ(d.devices[0].bytes, 1500u);
  EXPECT_EQ(d.devices[1].packets, 4u);
  EXPECT_EQ(d.ts, 2u);
}

TEST(NetCounters, DeltaOfACounterThatWentBackwardsIsItsNewValue) {
  NetSnapshot a = At(1), b = At(2);
  a.devices.push_back(Count(kEth0, NetDirection::kRx, 0, 0, 100, 0));
  b.devices.push_back(Count(kEth0, NetDirection::kRx, 0, 0, 7, 0));
  EXPECT_EQ(Delta(a, b).devices[0].packets, 7u);
}

TEST(NetCounters, RatesArePerSecondOverTheInterval) {
  NetSnapshot a = At(1'000'000'000), b = At(1'500'000'000);  // 0.5 s
  a.devices.push_back(Count(kEth0, NetDirection::kRx, 0, 0, 1000, 0));
  b.devices.push_back(Count(kEth0, NetDirection::kRx, 0, 0, 2000, 125'000'000));
  DropCount d;
  d.dev = kEth0;
  d.reason = 6;
  d.packets = 50;
  b.drops.push_back(d);
  NapiCount n;
  n.dev = kEth0;
  n.polls = 10;
  n.full_budget = 5;
  n.work = 640;
  n.cpu = 3;
  b.napi.push_back(n);
  auto rates = RatesByDevice(a, b);
  const DeviceRates& r = rates.at(kEth0);
  EXPECT_DOUBLE_EQ(r.rx_packets_per_s, 2000);
  EXPECT_DOUBLE_EQ(r.rx_gbit_per_s, 2.0);  // 125 MB in 0.5 s
  EXPECT_DOUBLE_EQ(r.drops_per_s.at(6), 100);
  EXPECT_DOUBLE_EQ(r.napi_polls_per_s, 20);
  EXPECT_DOUBLE_EQ(r.napi_full_budget_per_s, 10);
  EXPECT_DOUBLE_EQ(r.napi_packets_per_s_by_cpu.at(3), 1280);
}

TEST(NetCounters, RatesOfAnEmptyIntervalAreEmpty) {
  EXPECT_TRUE(RatesByDevice(At(5), At(5)).empty());
}

TEST(NetCounters, DropReasonLabelFallsBackToTheNumber) {
  NetNames names;
  names.drop_reasons[6] = "SOCKET_RCVBUFF";
  EXPECT_EQ(DropReasonLabel(6, names), "SOCKET_RCVBUFF");
  EXPECT_EQ(DropReasonLabel(7, names), "REASON_7");
}

}  // namespace
}  // namespace gpunoise::model
