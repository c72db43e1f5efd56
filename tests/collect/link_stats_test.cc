#include "collect/link_stats.h"

#include <gtest/gtest.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cstring>
#include <vector>

namespace gpunoise::collect {
namespace {

// Appends one RTM_NEWLINK message (ifinfomsg, IFLA_IFNAME, IFLA_STATS64) as
// the kernel lays it out.
void AddLink(std::vector<uint8_t>& buf, int ifindex, const char* name, uint64_t rx, uint64_t tx,
             unsigned char family = AF_UNSPEC) {
  size_t name_len = std::strlen(name) + 1;
  size_t len = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(ifinfomsg)) + RTA_ALIGN(RTA_LENGTH(name_len)) +
               RTA_ALIGN(RTA_LENGTH(sizeof(rtnl_link_stats64)));
  size_t off = buf.size();
  buf.resize(off + NLMSG_ALIGN(len), 0);
  nlmsghdr h{};
  h.nlmsg_len = static_cast<uint32_t>(len);
  h.nlmsg_type = RTM_NEWLINK;
  std::memcpy(buf.data() + off, &h, sizeof(h));
  ifinfomsg ifi{};
  ifi.ifi_index = ifindex;
  ifi.ifi_family = family;
  std::memcpy(buf.data() + off + NLMSG_HDRLEN, &ifi, sizeof(ifi));
  size_t a = off + NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(ifinfomsg));
  rtattr ra{};
  ra.rta_len = static_cast<unsigned short>(RTA_LENGTH(name_len));
  ra.rta_type = IFLA_IFNAME;
  std::memcpy(buf.data() + a, &ra, sizeof(ra));
  std::memcpy(buf.data() + a + RTA_LENGTH(0), name, name_len);
  a += RTA_ALIGN(ra.rta_len);
  rtnl_link_stats64 st{};
  st.rx_packets = rx;
  st.tx_packets = tx;
  st.rx_bytes = rx * 60;
  st.tx_dropped = 3;
  ra.rta_len = static_cast<unsigned short>(RTA_LENGTH(sizeof(st)));
  ra.rta_type = IFLA_STATS64;
  std::memcpy(buf.data() + a, &ra, sizeof(ra));
  std::memcpy(buf.data() + a + RTA_LENGTH(0), &st, sizeof(st));
}

void AddDone(std::vector<uint8_t>& buf) {
  nlmsghdr h{};
  h.nlmsg_len = NLMSG_LENGTH(sizeof(int));
  h.nlmsg_type = NLMSG_DONE;
  size_t off = buf.size();
  buf.resize(off + NLMSG_ALIGN(h.nlmsg_len), 0);
  std::memcpy(buf.data() + off, &h, sizeof(h));
}

TEST(LinkStats, ParsesNamesAndStatistics64OfEachLink) {
  std::vector<uint8_t> buf;
  AddLink(buf, 1, "lo", 10, 10);
  AddLink(buf, 7, "eth0", 123456789012ull, 42);
  bool done = true;
  auto links = ParseLinkDump(buf, &done);
  EXPECT_FALSE(done);
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(links[1].ifindex, 7);
  EXPECT_EQ(links[1].name, "eth0");
  EXPECT_EQ(links[1].rx_packets, 123456789012ull);
  EXPECT_EQ(links[1].tx_packets, 42u);
  EXPECT_EQ(links[1].rx_bytes, 123456789012ull * 60);
  EXPECT_EQ(links[1].tx_dropped, 3u);
}

TEST(LinkStats, StopsAtDoneAndAtTruncatedMessages) {
  std::vector<uint8_t> buf;
  AddLink(buf, 1, "lo", 1, 1);
  AddDone(buf);
  AddLink(buf, 2, "after", 1, 1);
  bool done = false;
  EXPECT_EQ(ParseLinkDump(buf, &done).size(), 1u);
  EXPECT_TRUE(done);
  std::vector<uint8_t> cut;
  AddLink(cut, 3, "cut", 1, 1);
  cut.resize(cut.size() - 20);
  EXPECT_TRUE(ParseLinkDump(cut, &done).empty());
}

TEST(LinkStats, BridgePortNotificationsAreNotLinks) {
  // What a bridge sends when a port changes STP state: RTM_NEWLINK,
  // AF_BRIDGE, no IFLA_CARRIER. Taken as a link it would read "carrier down".
  std::vector<uint8_t> buf;
  AddLink(buf, 5, "veth0", 0, 0, AF_BRIDGE);
  AddLink(buf, 6, "eth0", 1, 1);
  bool done = false;
  auto links = ParseLinkDump(buf, &done);
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links[0].name, "eth0");
}

TEST(LinkStats, DeviceStatisticsBecomeOneCountPerDeviceAndDirectionForAllCpus) {
  LinkStats eth0;
  eth0.ifindex = 2;
  eth0.name = "eth0";
  eth0.rx_packets = 10;
  eth0.rx_bytes = 1000;
  eth0.tx_packets = 20;
  eth0.tx_bytes = 2000;
  eth0.tx_errors = 1;
  LinkStats gone = eth0;
  gone.ifindex = 3;
  gone.deleted = true;
  model::NetSnapshot s;
  std::map<model::NetDeviceKey, std::string> names;
  std::vector<LinkStats> links = {eth0, gone};
  AppendDeviceStatistics(links, 77, &s, &names, DeviceNaming::kKeepFirst);
  ASSERT_EQ(s.devices.size(), 2u);
  const model::NetDeviceKey key{77, 2};
  EXPECT_EQ(names[key], "eth0");
  EXPECT_EQ(names.size(), 1u);
  for (const auto& c : s.devices) {
    EXPECT_EQ(c.dev, key);
    EXPECT_EQ(c.cpu, model::kDeviceWideCpu);
    EXPECT_EQ(c.queue, -1);
  }
  EXPECT_EQ(s.devices[0].dir, model::NetDirection::kRx);
  EXPECT_EQ(s.devices[0].packets, 10u);
  EXPECT_EQ(s.devices[1].dir, model::NetDirection::kTx);
  EXPECT_EQ(s.devices[1].bytes, 2000u);
  EXPECT_EQ(s.devices[1].errors, 1u);
}

TEST(LinkStats, ARecordingKeepsADevicesFirstNameAndTheMonitorFollowsARename) {
  LinkStats veth;
  veth.ifindex = 5;
  veth.name = "tmp1a2b";
  std::vector<LinkStats> links = {veth};
  std::map<model::NetDeviceKey, std::string> kept, followed;
  model::NetSnapshot s;
  AppendDeviceStatistics(links, 77, &s, &kept, DeviceNaming::kKeepFirst);
  AppendDeviceStatistics(links, 77, &s, &followed, DeviceNaming::kFollowRenames);
  links[0].name = "veth9f3c";  // what a CNI plugin renames it to
  AppendDeviceStatistics(links, 77, &s, &kept, DeviceNaming::kKeepFirst);
  AppendDeviceStatistics(links, 77, &s, &followed, DeviceNaming::kFollowRenames);
  const model::NetDeviceKey key{77, 5};
  EXPECT_EQ(kept[key], "tmp1a2b");
  EXPECT_EQ(followed[key], "veth9f3c");
}

TEST(LinkStats, ReadsThisNamespacesLoopback) {
  auto links = ReadLinkStats();
  ASSERT_TRUE(links.ok()) << links.error().message;
  bool lo = false;
  for (const auto& l : *links) lo = lo || (l.name == "lo" && l.ifindex == 1);
  EXPECT_TRUE(lo);
}

}  // namespace
}  // namespace gpunoise::collect
