#include "collect/link_stats.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
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

// NLMSG_DONE, or NLMSG_ERROR, with `code` as its first int (negative: an
// errno), and `flags` such as NLM_F_DUMP_INTR.
void AddEnd(std::vector<uint8_t>& buf, uint16_t type, int32_t code, uint16_t flags = NLM_F_MULTI) {
  nlmsghdr h{};
  h.nlmsg_len = NLMSG_LENGTH(type == NLMSG_ERROR ? sizeof(nlmsgerr) : sizeof(int32_t));
  h.nlmsg_type = type;
  h.nlmsg_flags = flags;
  size_t off = buf.size();
  buf.resize(off + NLMSG_ALIGN(h.nlmsg_len), 0);
  std::memcpy(buf.data() + off, &h, sizeof(h));
  std::memcpy(buf.data() + off + NLMSG_HDRLEN, &code, sizeof(code));
}

void AddDone(std::vector<uint8_t>& buf) { AddEnd(buf, NLMSG_DONE, 0); }

// Hands out `replies` in turn, then an empty one (the stream's end).
std::function<Result<std::vector<uint8_t>>()> Replies(std::vector<std::vector<uint8_t>> replies) {
  auto next = std::make_shared<size_t>(0);
  return [replies = std::move(replies), next]() -> Result<std::vector<uint8_t>> {
    if (*next == replies.size()) return std::vector<uint8_t>{};
    return replies[(*next)++];
  };
}

TEST(LinkStats, ParsesNamesAndStatistics64OfEachLink) {
  std::vector<uint8_t> buf;
  AddLink(buf, 1, "lo", 10, 10);
  AddLink(buf, 7, "eth0", 123456789012ull, 42);
  LinkDumpEnd end;
  auto links = ParseLinkDump(buf, &end);
  EXPECT_FALSE(end.done);
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
  LinkDumpEnd end;
  EXPECT_EQ(ParseLinkDump(buf, &end).size(), 1u);
  EXPECT_TRUE(end.done);
  EXPECT_EQ(end.error, 0);
  std::vector<uint8_t> cut;
  AddLink(cut, 3, "cut", 1, 1);
  cut.resize(cut.size() - 20);
  LinkDumpEnd cut_end;
  EXPECT_TRUE(ParseLinkDump(cut, &cut_end).empty());
}

TEST(LinkStats, ADumpReadOverSeveralRepliesListsEveryLink) {
  std::vector<uint8_t> first, second;
  AddLink(first, 1, "lo", 1, 1);
  AddLink(first, 2, "eth0", 2, 2);
  AddLink(second, 3, "eth1", 3, 3);
  AddDone(second);
  auto dump = CollectLinkDump(Replies({first, second}));
  ASSERT_TRUE(dump.ok()) << dump.error().message;
  ASSERT_EQ(dump->links.size(), 3u);
  EXPECT_EQ(dump->links[2].name, "eth1");
  EXPECT_FALSE(dump->interrupted);
}

TEST(LinkStats, ADumpTheKernelEndsWithAnErrorIsAnErrorNotAShortList) {
  for (uint16_t type : {uint16_t{NLMSG_DONE}, uint16_t{NLMSG_ERROR}}) {
    std::vector<uint8_t> reply;
    AddLink(reply, 1, "lo", 1, 1);
    AddEnd(reply, type, -EMSGSIZE);
    LinkDumpEnd end;
    EXPECT_EQ(ParseLinkDump(reply, &end).size(), 1u);
    EXPECT_TRUE(end.done);
    EXPECT_EQ(end.error, EMSGSIZE);
    auto dump = CollectLinkDump(Replies({reply}));
    ASSERT_FALSE(dump.ok()) << "type " << type;
    EXPECT_NE(dump.error().message.find(std::strerror(EMSGSIZE)), std::string::npos) << dump.error().message;
  }
}

TEST(LinkStats, ADumpWhoseRepliesStopBeforeItsEndIsAnError) {
  std::vector<uint8_t> reply;
  AddLink(reply, 1, "lo", 1, 1);
  auto dump = CollectLinkDump(Replies({reply}));
  ASSERT_FALSE(dump.ok());
  EXPECT_NE(dump.error().message.find("before its end"), std::string::npos) << dump.error().message;
  auto failed_read = CollectLinkDump([]() -> Result<std::vector<uint8_t>> { return MakeError("a read failed"); });
  ASSERT_FALSE(failed_read.ok());
  EXPECT_EQ(failed_read.error().message, "a read failed");
}

TEST(LinkStats, ADumpTheLinksChangedDuringIsFlaggedInterrupted) {
  std::vector<uint8_t> reply;
  AddLink(reply, 1, "lo", 1, 1);
  AddEnd(reply, NLMSG_DONE, 0, NLM_F_MULTI | NLM_F_DUMP_INTR);
  auto dump = CollectLinkDump(Replies({reply}));
  ASSERT_TRUE(dump.ok()) << dump.error().message;
  EXPECT_TRUE(dump->interrupted);
  EXPECT_EQ(dump->links.size(), 1u);
}

TEST(LinkStats, BridgePortNotificationsAreNotLinks) {
  // What a bridge sends when a port changes STP state: RTM_NEWLINK,
  // AF_BRIDGE, no IFLA_CARRIER. Taken as a link it would read "carrier down".
  std::vector<uint8_t> buf;
  AddLink(buf, 5, "veth0", 0, 0, AF_BRIDGE);
  AddLink(buf, 6, "eth0", 1, 1);
  LinkDumpEnd end;
  auto links = ParseLinkDump(buf, &end);
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
  auto links = LinkStatsReader().Read();
  ASSERT_TRUE(links.ok()) << links.error().message;
  bool lo = false;
  for (const auto& l : *links) lo = lo || (l.name == "lo" && l.ifindex == 1);
  EXPECT_TRUE(lo);
}

size_t OpenFds() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

uint64_t LoopbackRxPackets(const std::vector<LinkStats>& links) {
  for (const auto& l : links)
    if (l.name == "lo") return l.rx_packets;
  return 0;
}

// A datagram to ourselves over loopback: lo's RX count grows by one.
void SendToSelfOverLoopback() {
  UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(fd.valid());
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const char byte = 'x';
  ASSERT_EQ(::sendto(fd.get(), &byte, 1, 0, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 1);
}

TEST(LinkStatsReader, ReadsFreshCountsAgainAndAgainOnOneSocket) {
  LinkStatsReader reader;
  const size_t fds_before = OpenFds();
  auto first = reader.Read();
  ASSERT_TRUE(first.ok()) << first.error().message;
  const size_t fds_after_first = OpenFds();
  EXPECT_EQ(fds_after_first, fds_before + 1) << "the reader keeps its socket open between readings";
  SendToSelfOverLoopback();
  auto second = reader.Read();
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(OpenFds(), fds_after_first) << "the second reading opened a socket of its own";
  // A reply left over from the first dump would repeat its counts.
  EXPECT_GT(LoopbackRxPackets(*second), LoopbackRxPackets(*first));
}

}  // namespace
}  // namespace gpunoise::collect
