// The NIC sources on inputs built by hand: ethtool netlink replies (standard
// statistics groups, pause statistics) in the layout net/ethtool/stats.c and
// pause.c produce, link notifications against a known state, PCIe sysfs
// attributes and AER files in a synthetic tree, and the module-to-event-
// system discovery over synthetic sysfs, tracefs and kallsyms.
#include <gtest/gtest.h>
#include <libmnl/libmnl.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/if.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <fstream>
#include <string>
#include <vector>

#include "collect/driver_tracepoints.h"
#include "collect/ethtool_stats.h"
#include "collect/link_monitor.h"
#include "collect/netdev_qstats.h"
#include "collect/nic_sampler.h"
#include "collect/pcie_health.h"

namespace gpunoise::collect {
namespace {

namespace fs = std::filesystem;

class Message {
 public:
  Message() : buf_(16384) {
    nlh_ = mnl_nlmsg_put_header(buf_.data());
    mnl_nlmsg_put_extra_header(nlh_, sizeof(genlmsghdr));
  }
  nlmsghdr* nlh() { return nlh_; }

 private:
  std::vector<char> buf_;
  nlmsghdr* nlh_;
};

void PutStat(nlmsghdr* nlh, uint16_t id, uint64_t value) {
  nlattr* stat = mnl_attr_nest_start(nlh, ETHTOOL_A_STATS_GRP_STAT);
  mnl_attr_put_u64(nlh, id, value);
  mnl_attr_nest_end(nlh, stat);
}

TEST(EthtoolStandardStats, GroupsAreNamedByIeeeCounters) {
  Message m;
  nlattr* mac = mnl_attr_nest_start(m.nlh(), ETHTOOL_A_STATS_GRP);
  mnl_attr_put_u32(m.nlh(), ETHTOOL_A_STATS_GRP_ID, ETHTOOL_STATS_ETH_MAC);
  mnl_attr_put_u32(m.nlh(), ETHTOOL_A_STATS_GRP_SS_ID, ETH_SS_STATS_ETH_MAC);
  PutStat(m.nlh(), ETHTOOL_A_STATS_ETH_MAC_5_RX_PKT, 123456);
  PutStat(m.nlh(), ETHTOOL_A_STATS_ETH_MAC_15_RX_INT_ERR, 17);
  mnl_attr_nest_end(m.nlh(), mac);
  nlattr* phy = mnl_attr_nest_start(m.nlh(), ETHTOOL_A_STATS_GRP);
  mnl_attr_put_u32(m.nlh(), ETHTOOL_A_STATS_GRP_ID, ETHTOOL_STATS_ETH_PHY);
  PutStat(m.nlh(), ETHTOOL_A_STATS_ETH_PHY_5_SYM_ERR, 2);
  mnl_attr_nest_end(m.nlh(), phy);
  nlattr* rmon = mnl_attr_nest_start(m.nlh(), ETHTOOL_A_STATS_GRP);
  mnl_attr_put_u32(m.nlh(), ETHTOOL_A_STATS_GRP_ID, ETHTOOL_STATS_RMON);
  PutStat(m.nlh(), 40, 9);  // an id newer than this build
  mnl_attr_nest_end(m.nlh(), rmon);
  std::vector<model::NicCounterValue> out;
  ParseStatsReply(m.nlh(), out);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].name, "eth-mac.FramesReceivedOK");
  EXPECT_EQ(out[0].value, 123456u);
  EXPECT_EQ(out[1].name, "eth-mac.FramesLostDueToIntMACRcvError");
  EXPECT_EQ(out[1].value, 17u);
  EXPECT_EQ(out[2].name, "eth-phy.SymbolErrorDuringCarrier");
  EXPECT_EQ(out[3].name, "rmon.stat40");
}

TEST(EthtoolStandardStats, PauseFramesFromThePauseReply) {
  Message m;
  mnl_attr_put_u8(m.nlh(), ETHTOOL_A_PAUSE_RX, 1);
  nlattr* stats = mnl_attr_nest_start(m.nlh(), ETHTOOL_A_PAUSE_STATS);
  mnl_attr_put_u64(m.nlh(), ETHTOOL_A_PAUSE_STAT_TX_FRAMES, 4410);
  mnl_attr_put_u64(m.nlh(), ETHTOOL_A_PAUSE_STAT_RX_FRAMES, 12);
  mnl_attr_nest_end(m.nlh(), stats);
  std::vector<model::NicCounterValue> out;
  ParsePauseStatsReply(m.nlh(), out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].name, "pause.tx_frames");
  EXPECT_EQ(out[0].value, 4410u);
  EXPECT_EQ(out[1].name, "pause.rx_frames");
  Message none;
  out.clear();
  ParsePauseStatsReply(none.nlh(), out);
  EXPECT_TRUE(out.empty());
}

TEST(EthtoolIoctlKernel, LoopbackHasNoDriverStatisticsAndSaysSo) {
  auto io = EthtoolIoctl::Open();
  ASSERT_TRUE(io.ok()) << io.error().message;
  auto names = io->StatNames("lo");
  ASSERT_FALSE(names.ok());
  EXPECT_NE(names.error().message.find("lo"), std::string::npos) << names.error().message;
  auto missing = io->Info("gn-no-such-dev");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("no such interface"), std::string::npos) << missing.error().message;
}

// This machine's devices, read three times: every device but loopback is
// there each time with its driver, and each reason a part could not be read
// is named once, not once per read.
TEST(NicSamplerKernel, ReasonsAreNamedOncePerDeviceNotPerSample) {
  NicSampler sampler;
  size_t devices = 0;
  for (int i = 0; i < 3; ++i) {
    auto readings = sampler.Read();
    ASSERT_TRUE(readings.ok()) << readings.error().message;
    for (const auto& r : *readings) EXPECT_NE(r.device, "lo");
    if (i == 0) devices = readings->size();
    EXPECT_EQ(readings->size(), devices);
  }
  std::set<std::string> unique(sampler.problems().begin(), sampler.problems().end());
  EXPECT_EQ(unique.size(), sampler.problems().size());
  for (const auto& [device, info] : sampler.drivers()) EXPECT_FALSE(device.empty());
}

LinkStats Notice(int32_t ifindex, const char* name, bool carrier, uint32_t changes, bool deleted = false) {
  LinkStats l;
  l.ifindex = ifindex;
  l.name = name;
  l.carrier = carrier;
  l.operstate = carrier ? IF_OPER_UP : IF_OPER_LOWERLAYERDOWN;
  l.carrier_changes = changes;
  l.deleted = deleted;
  return l;
}

TEST(LinkMonitor, OnlyCarrierFlipsAndRemovalsAreEvents) {
  auto mon = LinkMonitor::Open();
  ASSERT_TRUE(mon.ok()) << mon.error().message;
  mon->Seed({Notice(2, "eth0", true, 1), Notice(3, "eth1", true, 1)});
  auto events = mon->Apply(100, {Notice(2, "eth0", true, 1),     // an MTU change: no event
                                 Notice(2, "eth0", false, 2),    // down
                                 Notice(2, "eth0", true, 3),     // up
                                 Notice(3, "eth1", true, 1, true),  // removed
                                 Notice(9, "veth9", false, 0)});    // created
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].kind, model::LinkEventKind::kCarrierDown);
  EXPECT_EQ(events[0].device, "eth0");
  EXPECT_EQ(events[0].operstate, "lowerlayerdown");
  EXPECT_EQ(events[0].carrier_changes, 2u);
  EXPECT_EQ(events[0].source, "netlink");
  EXPECT_EQ(events[1].kind, model::LinkEventKind::kCarrierUp);
  EXPECT_EQ(events[2].kind, model::LinkEventKind::kRemoved);
  EXPECT_EQ(events[2].device, "eth1");
  EXPECT_EQ(events[3].kind, model::LinkEventKind::kAppeared);
  EXPECT_EQ(events[0].ts, 100u);
}

void Write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

class SyntheticSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gn-nic-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST(PcieParsing, SpeedsAndAerTotals) {
  EXPECT_EQ(ParseLinkSpeedGts("16.0 GT/s PCIe\n"), 16.0);
  EXPECT_EQ(ParseLinkSpeedGts("8 GT/s"), 8.0);
  EXPECT_EQ(ParseLinkSpeedGts("2.5 GT/s PCIe"), 2.5);
  EXPECT_FALSE(ParseLinkSpeedGts("Unknown").has_value());
  EXPECT_EQ(ParseAerTotal("RxErr 3\nBadTLP 1\nBadDLLP 0\nRollover 0\nTimeout 2\nNonFatalErr 0\nCorrIntErr 0\n"
                          "HeaderOF 0\nTOTAL_ERR_COR 6\n"),
            6u);
  EXPECT_EQ(ParseAerTotal("Undefined 0\nDLP 1\nSDES 0\nTLP 0\nFCP 0\nCmpltTO 2\nTOTAL_ERR_NONFATAL 3\n"), 3u);
  EXPECT_EQ(ParseAerTotal("DLP 1\nCmpltTO 2\n"), 3u);  // no total line: the sum
  EXPECT_FALSE(ParseAerTotal("").has_value());
}

TEST_F(SyntheticSysfs, PcieReaderFindsNicsAndNvidiaGpusAndReadsTheirLinks) {
  auto dev = [&](const std::string& addr) { return root_ / "bus/pci/devices" / addr; };
  // A NIC trained at x8 of x16, 16 of 16 GT/s, with AER errors.
  Write(dev("0000:3b:00.0") / "vendor", "0x15b3\n");
  Write(dev("0000:3b:00.0") / "class", "0x020000\n");
  Write(dev("0000:3b:00.0") / "current_link_speed", "16.0 GT/s PCIe\n");
  Write(dev("0000:3b:00.0") / "max_link_speed", "16.0 GT/s PCIe\n");
  Write(dev("0000:3b:00.0") / "current_link_width", "8\n");
  Write(dev("0000:3b:00.0") / "max_link_width", "16\n");
  Write(dev("0000:3b:00.0") / "aer_dev_correctable", "RxErr 5\nTOTAL_ERR_COR 5\n");
  Write(dev("0000:3b:00.0") / "aer_dev_nonfatal", "TOTAL_ERR_NONFATAL 0\n");
  Write(dev("0000:3b:00.0") / "aer_dev_fatal", "TOTAL_ERR_FATAL 0\n");
  // An idle H100-like GPU (3D controller) that lowered its speed, no AER.
  Write(dev("0000:18:00.0") / "vendor", "0x10de\n");
  Write(dev("0000:18:00.0") / "class", "0x030200\n");
  Write(dev("0000:18:00.0") / "current_link_speed", "2.5 GT/s PCIe\n");
  Write(dev("0000:18:00.0") / "max_link_speed", "32.0 GT/s PCIe\n");
  Write(dev("0000:18:00.0") / "current_link_width", "16\n");
  Write(dev("0000:18:00.0") / "max_link_width", "16\n");
  // Not followed: an NVIDIA audio function and another vendor's VGA.
  Write(dev("0000:18:00.1") / "vendor", "0x10de\n");
  Write(dev("0000:18:00.1") / "class", "0x040300\n");
  Write(dev("0000:00:02.0") / "vendor", "0x8086\n");
  Write(dev("0000:00:02.0") / "class", "0x030000\n");
  // A NIC function without link attributes or AER (virtio in a VM).
  Write(dev("0000:00:03.0") / "vendor", "0x1af4\n");
  Write(dev("0000:00:03.0") / "class", "0x020000\n");
  PcieHealthReader reader(root_.string());
  reader.FindDevices({{"0000:3b:00.0", "eth2"}, {"0000:00:03.0", "eth0"}, {"virtio2", "eth1"}, {"", "veth1"}});
  ASSERT_EQ(reader.devices().size(), 2u);
  auto states = reader.Read();
  ASSERT_EQ(states.size(), 2u);
  const auto& nic = states[0];
  EXPECT_EQ(nic.role, "nic");
  EXPECT_EQ(nic.device, "eth2");
  EXPECT_EQ(nic.width, 8u);
  EXPECT_EQ(nic.max_width, 16u);
  EXPECT_TRUE(nic.degraded_width());
  EXPECT_FALSE(nic.degraded_speed());
  EXPECT_EQ(nic.aer_correctable, 5u);
  EXPECT_EQ(nic.aer_fatal, 0u);
  const auto& gpu = states[1];
  EXPECT_EQ(gpu.role, "gpu");
  EXPECT_EQ(gpu.address, "0000:18:00.0");
  EXPECT_TRUE(gpu.degraded_speed());
  EXPECT_FALSE(gpu.degraded_width());
  EXPECT_FALSE(gpu.aer_correctable.has_value());
}

TEST(DriverTracepoints, KallsymsTellsWhichModuleOwnsWhichTracepoint) {
  std::string kallsyms =
      "ffffffffc0a1b2b0 t __pfx___traceiter_mlx5_fs_add_fg\t[mlx5_core]\n"
      "ffffffffc0a1b2c0 t __traceiter_mlx5_fs_add_fg\t[mlx5_core]\n"
      "ffffffffc0a1b3c0 t __traceiter_mlx5e_rep_neigh_update\t[mlx5_core]\n"
      "ffffffffc0a1b4c0 t __probestub_mlx5e_rep_neigh_update\t[mlx5_core]\n"
      "ffffffffc0b00000 t __traceiter_ice_clean_rx_irq\t[ice]\n"
      "ffffffff81f0da60 T __traceiter_napi_poll\n"
      "ffffffffc0c00000 t trace_event_raw_event_foo\t[foo]\n";
  auto owned = TracepointsByModule(kallsyms);
  ASSERT_EQ(owned.size(), 2u);
  EXPECT_EQ(owned["mlx5_core"], (std::set<std::string>{"mlx5_fs_add_fg", "mlx5e_rep_neigh_update"}));
  EXPECT_EQ(owned["ice"], (std::set<std::string>{"ice_clean_rx_irq"}));
}

TEST_F(SyntheticSysfs, DriverModulesLeadToTheirTracefsEventSystems) {
  // sysfs: eth2 driven by mlx5_core (a module), eth0 by virtio_net (built
  // in: a driver without a module link), veth0 without a bus device.
  fs::path sys = root_ / "sys", tracefs = root_ / "tracing";
  fs::create_directories(sys / "module/mlx5_core");
  fs::create_directories(sys / "bus/pci/drivers/mlx5_core");
  fs::create_directory_symlink("../../../../module/mlx5_core", sys / "bus/pci/drivers/mlx5_core/module");
  fs::create_directories(sys / "devices/pci0000:3a/0000:3b:00.0/net/eth2");
  fs::create_directory_symlink("../../../bus/pci/drivers/mlx5_core",
                               sys / "devices/pci0000:3a/0000:3b:00.0/driver");
  fs::create_directory_symlink("../../../0000:3b:00.0", sys / "devices/pci0000:3a/0000:3b:00.0/net/eth2/device");
  fs::create_directories(sys / "class/net");
  fs::create_directory_symlink("../../devices/pci0000:3a/0000:3b:00.0/net/eth2", sys / "class/net/eth2");
  fs::create_directories(sys / "bus/virtio/drivers/virtio_net");
  fs::create_directories(sys / "devices/virtio2/net/eth0");
  fs::create_directory_symlink("../../bus/virtio/drivers/virtio_net", sys / "devices/virtio2/driver");
  fs::create_directory_symlink("../../../virtio2", sys / "devices/virtio2/net/eth0/device");
  fs::create_directory_symlink("../../devices/virtio2/net/eth0", sys / "class/net/eth0");
  fs::create_directories(sys / "devices/virtual/net/veth0");
  fs::create_directory_symlink("../../devices/virtual/net/veth0", sys / "class/net/veth0");
  // tracefs: the module's events live in systems "mlx5" and "mlx5_esw"
  // (not named after the module); "napi" is the kernel's own.
  fs::create_directories(tracefs / "events/mlx5/mlx5_fs_add_fg");
  fs::create_directories(tracefs / "events/mlx5_esw/mlx5_esw_vport_qos_create");
  fs::create_directories(tracefs / "events/napi/napi_poll");
  Write(tracefs / "events/enable", "0\n");
  std::string kallsyms =
      "ffffffffc0a1b2c0 t __traceiter_mlx5_fs_add_fg\t[mlx5_core]\n"
      "ffffffffc0a1b2d0 t __traceiter_mlx5_esw_vport_qos_create\t[mlx5_core]\n"
      "ffffffff81f0da60 T __traceiter_napi_poll\n";

  auto drivers = FindNetdevDrivers(sys.string());
  ASSERT_EQ(drivers.size(), 2u);  // veth0 has no bus device
  std::map<std::string, NetdevDriver> by_dev;
  for (auto& d : drivers) by_dev[d.device] = d;
  EXPECT_EQ(by_dev["eth2"].driver, "mlx5_core");
  EXPECT_EQ(by_dev["eth2"].module, "mlx5_core");
  EXPECT_EQ(by_dev["eth0"].driver, "virtio_net");
  EXPECT_EQ(by_dev["eth0"].module, "");

  auto found = DiscoverDriverEventSystems(sys.string(), tracefs.string(), kallsyms);
  ASSERT_EQ(found.size(), 1u);  // the built-in driver is left to the fallback list
  EXPECT_EQ(found[0].module, "mlx5_core");
  EXPECT_EQ(found[0].devices, std::vector<std::string>{"eth2"});
  EXPECT_EQ(found[0].systems, (std::set<std::string>{"mlx5", "mlx5_esw"}));
  EXPECT_EQ(found[0].events, 2u);
}

}  // namespace
}  // namespace gpunoise::collect

namespace gpunoise::collect {
namespace {

void PutUint(nlmsghdr* nlh, uint16_t type, uint64_t v, bool wide) {
  if (wide) mnl_attr_put_u64(nlh, type, v);
  else mnl_attr_put_u32(nlh, type, static_cast<uint32_t>(v));
}

// One qstats reply per queue, values as NLA_UINT (4 or 8 bytes), named so
// that the counter map finds the queue and the kind.
TEST(NetdevQstats, RepliesBecomePerQueueCountersTheMapUnderstands) {
  Message rx;
  PutUint(rx.nlh(), netdev_uapi::kQstatsIfindex, 4, false);
  PutUint(rx.nlh(), netdev_uapi::kQstatsQueueType, netdev_uapi::kQueueTypeRx, false);
  PutUint(rx.nlh(), netdev_uapi::kQstatsQueueId, 3, false);
  PutUint(rx.nlh(), 8, 123456789012ull, true);  // rx-packets
  PutUint(rx.nlh(), 14, 77, false);             // rx-hw-drop-overruns
  PutUint(rx.nlh(), 13, 80, false);             // rx-hw-drops (includes the overruns)
  PutUint(rx.nlh(), 99, 5, false);              // newer than this build: ignored
  Message tx;
  PutUint(tx.nlh(), netdev_uapi::kQstatsIfindex, 4, false);
  PutUint(tx.nlh(), netdev_uapi::kQstatsQueueType, netdev_uapi::kQueueTypeTx, false);
  PutUint(tx.nlh(), netdev_uapi::kQstatsQueueId, 0, false);
  PutUint(tx.nlh(), 33, 2, false);  // tx-stop
  std::map<int32_t, std::vector<model::NicCounterValue>> out;
  NetdevQstats::ParseQstatsMessage(rx.nlh(), out);
  NetdevQstats::ParseQstatsMessage(tx.nlh(), out);
  ASSERT_EQ(out.size(), 1u);
  const auto& v = out[4];
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0].name, "qstats.rx_queue_3_packets");
  EXPECT_EQ(v[0].value, 123456789012ull);
  EXPECT_EQ(v[1].name, "qstats.rx_queue_3_hw_drops");
  EXPECT_EQ(v[2].name, "qstats.rx_queue_3_hw_drop_overruns");
  EXPECT_EQ(v[3].name, "qstats.tx_queue_0_stop");
  auto overruns = model::ClassifyNicCounter("mlx5_core", v[2].name);
  EXPECT_EQ(overruns.kind, model::NicCounterKind::kRxMissed);
  EXPECT_EQ(overruns.queue, 3);
  EXPECT_EQ(model::ClassifyNicCounter("mlx5_core", v[0].name).kind, model::NicCounterKind::kRxPackets);
  EXPECT_EQ(model::ClassifyNicCounter("mlx5_core", v[1].name).kind, model::NicCounterKind::kOther);
}

// This kernel's own answer: where a device reports queue statistics, its rx
// packets summed over queues are what the device's statistics say (both
// read now; a few packets may arrive in between).
TEST(NetdevQstatsKernel, QueueSumsMatchTheDeviceStatistics) {
  auto q = NetdevQstats::Open();
  if (!q.ok()) GTEST_SKIP() << "no netdev netlink family: " << q.error().message;
  auto all = q->Read();
  if (!all.ok()) GTEST_SKIP() << "no queue statistics here: " << all.error().message;
  auto links = LinkStatsReader().Read();
  ASSERT_TRUE(links.ok());
  size_t checked = 0;
  for (const auto& l : *links) {
    auto it = all->find(l.ifindex);
    if (it == all->end()) continue;
    uint64_t rx = 0;
    bool any = false;
    for (const auto& v : it->second)
      if (v.name.find("qstats.rx_queue_") == 0 && v.name.size() > 8 &&
          v.name.compare(v.name.size() - 8, 8, "_packets") == 0 && v.name.find("gro") == std::string::npos) {
        rx += v.value;
        any = true;
      }
    if (!any) continue;
    EXPECT_LE(rx, l.rx_packets + 1000) << l.name;
    EXPECT_GE(rx + 1000, l.rx_packets) << l.name;
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "no device here reports per-queue rx packets";
}

}  // namespace
}  // namespace gpunoise::collect
