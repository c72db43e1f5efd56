#include "doctor/nic_checks.h"

#include "doctor/check_test_util.h"

namespace gpunoise::doctor::testing {
namespace {

constexpr const char* kNicDir = "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:04:00.0";

TEST(LinkModes, NamesCarryTheSpeed) {
  auto m = ParseLinkModeName("100000baseCR4/Full");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->speed_mbps, 100000u);
  EXPECT_TRUE(m->full_duplex);
  EXPECT_FALSE(ParseLinkModeName("Autoneg"));
  EXPECT_FALSE(ParseLinkModeName("Pause"));
  EXPECT_FALSE(ParseLinkModeName("10baseT/Half")->full_duplex);
}

TEST(NicLink, OkAtTheDevicesMaximumSpeed) {
  FixtureTree tree;
  BuildGoodNode(tree);
  CheckResult r = Check(tree, "nic.link");
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_SAW(r, "gnfix0 at 100000 Mb/s full duplex (its maximum)");
}

TEST(NicLink, WarnsBelowTheDevicesMaximumOrAtHalfDuplex) {
  FixtureTree tree;
  BuildGoodNode(tree);
  tree.Write(std::string(kNicDir) + "/net/gnfix0/speed", "25000\n");
  CheckResult r = Check(tree, "nic.link");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "gnfix0 at 25000 Mb/s, the device supports 100000 Mb/s");
  EXPECT_EQ(ExitFor(r), 1);

  tree.Write(std::string(kNicDir) + "/net/gnfix0/speed", "100000\n");
  tree.Write(std::string(kNicDir) + "/net/gnfix0/duplex", "half\n");
  r = Check(tree, "nic.link");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "gnfix0 runs half duplex at 100000 Mb/s");
}

TEST(NicLink, UnknownWithoutSpeedOrSupportedModes) {
  FixtureTree tree;
  BuildGoodNode(tree);
  FakeSources fakes;
  fakes.ethtool[kNic].link_modes = Error{"the driver does not report it"};
  CheckResult r = Check(tree, "nic.link", fakes);
  EXPECT_EQ(r.verdict, Verdict::kUnknown);
  EXPECT_SAW(r, "gnfix0 at 100000 Mb/s; supported modes unknown (the driver does not report it)");

  tree.Write(std::string(kNicDir) + "/net/gnfix0/speed", "-1\n");
  fakes.ethtool[kNic] = GoodEthtool();
  LinkModes no_speed;
  fakes.ethtool[kNic].link_modes = no_speed;
  r = Check(tree, "nic.link", fakes);
  EXPECT_EQ(r.verdict, Verdict::kUnknown);
  EXPECT_SAW(r, "gnfix0 (mlx5_core) reports no link speed");
}

TEST(PcieLink, WarnsForANicTrainedNarrowOrSlow) {
  FixtureTree tree;
  BuildGoodNode(tree);
  EXPECT_EQ(Check(tree, "pcie.link").verdict, Verdict::kOk);
  tree.Write(std::string(kNicDir) + "/current_link_width", "8\n");
  CheckResult r = Check(tree, "pcie.link");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "NIC gnfix0: x8 at 16.0 GT/s PCIe (max x16 at 16.0 GT/s PCIe): narrower than its maximum");
  EXPECT_EQ(ExitFor(r), 1);
  tree.Write(std::string(kNicDir) + "/current_link_width", "16\n");
  tree.Write(std::string(kNicDir) + "/current_link_speed", "8.0 GT/s PCIe\n");
  r = Check(tree, "pcie.link");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "slower than its maximum");
}

TEST(PcieLink, AnIdleGpuAtLowerSpeedIsNotAFinding) {
  FixtureTree tree;
  BuildGoodNode(tree);
  tree.Write("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0/current_link_speed",
             "2.5 GT/s PCIe\n");
  CheckResult r = Check(tree, "pcie.link");
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_SAW(r, "GPUs slow their link when idle");
}

TEST(PcieLink, UnknownWithoutLinkAttributes) {
  FixtureTree tree;
  std::string dir = tree.AddPci({.bdf = "0000:00:03.0", .class_code = 0x020000, .vendor = 0x1af4});
  tree.AddNic({.name = "eth9", .ifindex = 9999, .device_path = dir, .driver = "virtio-pci"});
  CheckResult r = Check(tree, "pcie.link");
  EXPECT_EQ(r.verdict, Verdict::kUnknown);
  EXPECT_SAW(r, "NIC eth9: no current_link_*/max_link_* in sysfs");
}

TEST(TxTimeouts, WarnsForTimeoutsSinceBootAndFailsWhenTheyGrow) {
  FixtureTree tree;
  BuildGoodNode(tree);
  EXPECT_EQ(Check(tree, "nic.tx_timeout").verdict, Verdict::kOk);
  tree.Write("/sys/class/net/gnfix0/queues/tx-1/tx_timeout", "2\n");
  CheckResult r = Check(tree, "nic.tx_timeout");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "gnfix0: 2 TX timeout(s) since boot (tx-1 2)");
  EXPECT_EQ(ExitFor(r), 1);

  FakeSources fakes;
  fakes.between_samples = [&] { tree.Write("/sys/class/net/gnfix0/queues/tx-1/tx_timeout", "3\n"); };
  r = Check(tree, "nic.tx_timeout", fakes);
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_SAW(r, "gnfix0: 3 TX timeout(s) since boot (tx-1 3), 1 during sampling");
  EXPECT_EQ(ExitFor(r), 2);
}

TEST(NicErrors, WarnsWhenACounterGrowsBetweenSamples) {
  FixtureTree tree;
  BuildGoodNode(tree);
  tree.SetNicCounter(kNic, "rx_crc_errors", 12);  // old errors alone are not a finding
  CheckResult r = Check(tree, "nic.errors");
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_SAW(r, "gnfix0: nothing grew in 1.0 s (totals rx_crc_errors 12)");

  FakeSources fakes;
  fakes.between_samples = [&] { tree.SetNicCounter(kNic, "rx_missed_errors", 40); };
  tree.SetNicCounter(kNic, "rx_missed_errors", 0);
  r = Check(tree, "nic.errors", fakes);
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "gnfix0: rx_missed_errors +40 in 1.0 s");
  EXPECT_EQ(ExitFor(r), 1);
}

TEST(Mtu, WarnsForDifferentMtusOnOneKindOfNic) {
  FixtureTree tree;
  BuildGoodNode(tree);
  EXPECT_EQ(Check(tree, "nic.mtu").verdict, Verdict::kOk);
  std::string dir = tree.AddPci({.bdf = "0000:04:00.1",
                                 .parent = "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0",
                                 .class_code = 0x020000, .vendor = 0x15b3, .numa_node = 0, .driver = "mlx5_core"});
  tree.AddNic({.name = "gnfix1", .ifindex = 4243, .device_path = dir, .speed = 100000, .mtu = 1500,
               .driver = "mlx5_core"});
  CheckResult r = Check(tree, "nic.mtu");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "different MTUs on one kind of NIC: gnfix1 1500, gnfix0 9000 (mlx5_core)");
  EXPECT_EQ(r.fix, "ip link set dev gnfix1 mtu 9000");
  EXPECT_EQ(ExitFor(r), 1);
}

TEST(Mtu, WarnsForAnUpperDeviceAboveItsLowerDevice) {
  FixtureTree tree;
  BuildGoodNode(tree);
  tree.AddNic({.name = "bond0", .ifindex = 4250, .mtu = 9216});
  tree.Symlink("/sys/devices/virtual/net/bond0/lower_gnfix0", "../../../pci0000:00");
  CheckResult r = Check(tree, "nic.mtu");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "bond0 has MTU 9216 above its lower device gnfix0 (9000)");
}

TEST(Rings, WarnsForASmallRxRing) {
  FixtureTree tree;
  BuildGoodNode(tree);
  EXPECT_EQ(Check(tree, "nic.rings").verdict, Verdict::kOk);
  FakeSources fakes;
  fakes.ethtool[kNic].rings = RingSizes{512, 8192, 1024, 8192};
  CheckResult r = Check(tree, "nic.rings", fakes);
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "gnfix0: rx 512/8192 tx 1024/8192 (rx below 1024)");
  EXPECT_EQ(r.fix, "ethtool -G gnfix0 rx 4096");
  EXPECT_EQ(ExitFor(r), 1);
  fakes.ethtool[kNic].rings = RingSizes{256, 256, 256, 256};  // at the device's maximum
  EXPECT_EQ(Check(tree, "nic.rings", fakes).verdict, Verdict::kOk);
}

TEST(Rings, UnknownWhenTheDriverDoesNotReportThem) {
  FixtureTree tree;
  BuildGoodNode(tree);
  FakeSources fakes;
  fakes.ethtool[kNic].rings = Error{"the driver does not report it"};
  CheckResult r = Check(tree, "nic.rings", fakes);
  EXPECT_EQ(r.verdict, Verdict::kUnknown);
  EXPECT_SAW(r, "gnfix0: ring sizes: the driver does not report it");
}

TEST(Coalesce, UnknownWithTheReasonWhenTheDriverDoesNotReportIt) {
  FixtureTree tree;
  BuildGoodNode(tree);
  FakeSources fakes;
  fakes.ethtool[kNic].coalesce = Error{"Operation not supported"};
  CheckResult r = Check(tree, "nic.coalesce", fakes);
  EXPECT_EQ(r.verdict, Verdict::kUnknown);
  EXPECT_SAW(r, "gnfix0: coalescing: Operation not supported");
  // The rings of the same NIC are still judged: each check asks for its own answer.
  EXPECT_EQ(Check(tree, "nic.rings", fakes).verdict, Verdict::kOk);
}

TEST(Coalesce, WarnsForAnInterruptPerPacketOrAVeryLongDelay) {
  FixtureTree tree;
  BuildGoodNode(tree);
  EXPECT_EQ(Check(tree, "nic.coalesce").verdict, Verdict::kOk);
  FakeSources fakes;
  Coalesce none;
  none.rx_usecs = 0;
  none.rx_max_frames = 1;
  none.adaptive_rx = false;
  fakes.ethtool[kNic].coalesce = none;
  CheckResult r = Check(tree, "nic.coalesce", fakes);
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "gnfix0: rx-usecs 0 rx-frames 1 (an interrupt per packet)");
  EXPECT_EQ(ExitFor(r), 1);
  Coalesce slow;
  slow.rx_usecs = 512;
  fakes.ethtool[kNic].coalesce = slow;
  r = Check(tree, "nic.coalesce", fakes);
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "rx-usecs 512 rx-frames n/a (delays each packet up to 512 us)");
}

TEST(Coalesce, VirtioWithoutNotificationCoalescingIsUnknown) {
  FixtureTree tree;
  std::string dir = tree.AddPci({.bdf = "0000:00:03.0", .class_code = 0x020000, .vendor = 0x1af4});
  // virtio NICs hang below a virtio device under the PCI function.
  tree.Write(dir + "/virtio2/features", std::string(53, '1') + "0" + std::string(10, '0') + "\n");
  tree.Symlink(dir + "/virtio2/driver", "../../../../bus/virtio/drivers/virtio_net");
  tree.Write(dir + "/virtio2/net/eth9/ifindex", "9999\n");
  tree.Write(dir + "/virtio2/net/eth9/operstate", "up\n");
  tree.Write(dir + "/virtio2/net/eth9/flags", "0x1003\n");
  tree.Symlink(dir + "/virtio2/net/eth9/device", "../../../virtio2");
  tree.Symlink("/sys/class/net/eth9", "../../devices/pci0000:00/0000:00:03.0/virtio2/net/eth9");
  FakeSources fakes;
  Coalesce fixed;
  fixed.rx_usecs = 0;
  fixed.rx_max_frames = 1;
  fakes.ethtool["eth9"].coalesce = fixed;
  CheckResult r = Check(tree, "nic.coalesce", fakes);
  EXPECT_EQ(r.verdict, Verdict::kUnknown);
  EXPECT_SAW(r, "eth9 (virtio_net): the device offers no notification coalescing");
}

}  // namespace
}  // namespace gpunoise::doctor::testing
