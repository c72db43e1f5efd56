// Joining kernel log lines to link events: by the device they name (DEVICE=
// parent, the classified device, the interface name in the text) and by
// time (nearest event of that device within the window).
#include "model/link_kernel_log.h"

#include <gtest/gtest.h>

#include <vector>

namespace gpunoise::model {
namespace {

constexpr uint64_t kS = 1'000'000'000;

LinkEvent Event(uint64_t ts, std::string device, LinkEventKind kind) {
  LinkEvent e;
  e.ts = ts;
  e.device = std::move(device);
  e.kind = kind;
  e.source = "netlink";
  return e;
}

KernelLogEntry Line(uint64_t ts, std::string text, std::string device = {}) {
  KernelLogEntry e;
  e.ts = ts;
  e.text = std::move(text);
  e.device = std::move(device);
  return e;
}

TEST(TextNamesInterface, NameMustBeAWholeInterfaceName) {
  EXPECT_TRUE(TextNamesInterface("eth0: Link down", "eth0"));
  EXPECT_TRUE(TextNamesInterface("br0: port 1(veth0) entered disabled state", "veth0"));
  EXPECT_TRUE(TextNamesInterface("link down on eth0.", "eth0"));
  EXPECT_TRUE(TextNamesInterface("mlx5_core 0000:3b:00.0 ens1f0np0: Link up", "ens1f0np0"));
  EXPECT_FALSE(TextNamesInterface("veth0: entered promiscuous mode", "eth0"));
  EXPECT_FALSE(TextNamesInterface("eth0.100: link up", "eth0"));
  EXPECT_FALSE(TextNamesInterface("eth01: link up", "eth0"));
  EXPECT_FALSE(TextNamesInterface("anything", ""));
}

TEST(KernelLogNamesDevice, ByParentDeviceFieldClassifiedDeviceOrText) {
  // netdev_printk with a PCI parent: DEVICE=+pci:ADDR, the text names both.
  KernelLogEntry mlx = Line(0, "mlx5_core 0000:3b:00.0 eth0: Link down", "+pci:0000:3b:00.0");
  EXPECT_TRUE(KernelLogNamesDevice(mlx, "eth0", "0000:3b:00.0"));
  // The parent alone is enough when the text does not name the netdev.
  KernelLogEntry reset =
      Line(0, "mlx5_core 0000:3b:00.0: poll_health: device's health compromised", "+pci:0000:3b:00.0");
  EXPECT_TRUE(KernelLogNamesDevice(reset, "eth0", "0000:3b:00.0"));
  EXPECT_FALSE(KernelLogNamesDevice(reset, "eth0", ""));
  EXPECT_FALSE(KernelLogNamesDevice(reset, "eth1", "0000:3b:00.1"));
  // A classified message names its device.
  KernelLogEntry watchdog = Line(0, "NETDEV WATCHDOG: CPU: 3: transmit queue 5 timed out 5000 ms");
  watchdog.about = "eth2";
  EXPECT_TRUE(KernelLogNamesDevice(watchdog, "eth2", ""));
  // DEVICE=n<ifindex> alone is not taken: ifindexes repeat across namespaces.
  KernelLogEntry own = Line(0, "something about a device", "n3");
  EXPECT_FALSE(KernelLogNamesDevice(own, "eth0", "0000:3b:00.0"));
  // Lines written from user space never match, whatever they say.
  KernelLogEntry user = Line(0, "eth0: Link down");
  user.facility = 1;
  EXPECT_FALSE(KernelLogNamesDevice(user, "eth0", ""));
}

TEST(JoinLinkKernelLog, EachLineGoesToTheNearestEventOfItsDeviceWithinTheWindow) {
  std::vector<LinkEvent> events = {Event(10 * kS, "veth0", LinkEventKind::kCarrierDown),
                                   Event(12 * kS, "veth0", LinkEventKind::kCarrierUp),
                                   Event(11 * kS, "eth0", LinkEventKind::kCarrierDown)};
  std::vector<KernelLogEntry> log = {
      Line(10 * kS + 1'000'000, "br0: port 1(veth0) entered disabled state"),     // -> down
      Line(12 * kS + 2'000'000, "br0: port 1(veth0) entered blocking state"),     // -> up
      Line(12 * kS + 2'000'010, "br0: port 1(veth0) entered forwarding state"),   // -> up
      Line(11 * kS - 300'000'000, "mlx5_core 0000:3b:00.0 eth0: Link down", "+pci:0000:3b:00.0"),  // before it
      Line(30 * kS, "br0: port 1(veth0) entered disabled state"),  // outside every window
      Line(10 * kS, "eth1: Link down"),                            // another device
  };
  auto m = JoinLinkKernelLog(events, log, {{"eth0", "0000:3b:00.0"}}, 2 * kS);
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0].event, 0u);
  EXPECT_EQ(m[0].entry, 0u);
  EXPECT_EQ(m[1].event, 1u);
  EXPECT_EQ(m[1].entry, 1u);
  EXPECT_EQ(m[2].event, 1u);
  EXPECT_EQ(m[2].entry, 2u);
  EXPECT_EQ(m[3].event, 2u);
  EXPECT_EQ(m[3].entry, 3u);
  // A narrower window keeps only the lines close enough.
  auto narrow = JoinLinkKernelLog(events, log, {{"eth0", "0000:3b:00.0"}}, 100'000'000);
  EXPECT_EQ(narrow.size(), 3u);
}

TEST(JoinLinkKernelLog, NoEventsOrNoLinesJoinNothing) {
  std::vector<LinkEvent> events = {Event(10 * kS, "veth0", LinkEventKind::kCarrierDown)};
  std::vector<KernelLogEntry> log = {Line(10 * kS, "veth0: carrier lost")};
  EXPECT_TRUE(JoinLinkKernelLog({}, log, {}, kS).empty());
  EXPECT_TRUE(JoinLinkKernelLog(events, {}, {}, kS).empty());
  EXPECT_EQ(JoinLinkKernelLog(events, log, {}, kS).size(), 1u);
}

}  // namespace
}  // namespace gpunoise::model
