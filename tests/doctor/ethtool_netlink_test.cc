// ethtool over generic netlink: reply parsing on hand-built messages (link
// modes in the verbose bitset form this machine's NICs cannot produce), and
// the kernel's answers for interfaces every machine has.
#include "doctor/ethtool_netlink.h"

#include <gtest/gtest.h>
#include <libmnl/libmnl.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <unistd.h>

#include <vector>

namespace gpunoise::doctor {
namespace {

class ReplyBuilder {
 public:
  ReplyBuilder() : buf_(8192) {
    nlh_ = mnl_nlmsg_put_header(buf_.data());
    mnl_nlmsg_put_extra_header(nlh_, sizeof(genlmsghdr));
  }
  nlmsghdr* nlh() { return nlh_; }

 private:
  std::vector<char> buf_;
  nlmsghdr* nlh_;
};

void PutMode(nlmsghdr* nlh, uint32_t index, const char* name, bool advertised) {
  nlattr* bit = mnl_attr_nest_start(nlh, ETHTOOL_A_BITSET_BITS_BIT);
  mnl_attr_put_u32(nlh, ETHTOOL_A_BITSET_BIT_INDEX, index);
  mnl_attr_put_strz(nlh, ETHTOOL_A_BITSET_BIT_NAME, name);
  if (advertised) mnl_attr_put(nlh, ETHTOOL_A_BITSET_BIT_VALUE, 0, nullptr);
  mnl_attr_nest_end(nlh, bit);
}

TEST(EthtoolReplies, LinkModesFromAVerboseBitset) {
  ReplyBuilder b;
  mnl_attr_put_u8(b.nlh(), ETHTOOL_A_LINKMODES_AUTONEG, AUTONEG_ENABLE);
  nlattr* ours = mnl_attr_nest_start(b.nlh(), ETHTOOL_A_LINKMODES_OURS);
  mnl_attr_put_u32(b.nlh(), ETHTOOL_A_BITSET_SIZE, 100);
  nlattr* bits = mnl_attr_nest_start(b.nlh(), ETHTOOL_A_BITSET_BITS);
  PutMode(b.nlh(), 6, "Autoneg", true);
  PutMode(b.nlh(), 31, "25000baseCR/Full", true);
  PutMode(b.nlh(), 38, "100000baseCR4/Full", false);
  mnl_attr_nest_end(b.nlh(), bits);
  mnl_attr_nest_end(b.nlh(), ours);
  mnl_attr_put_u32(b.nlh(), ETHTOOL_A_LINKMODES_SPEED, 25000);
  mnl_attr_put_u8(b.nlh(), ETHTOOL_A_LINKMODES_DUPLEX, DUPLEX_FULL);
  auto m = EthtoolNetlink::ParseLinkModesReply(b.nlh());
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->supported.size(), 2u);  // "Autoneg" carries no speed
  EXPECT_EQ(m->supported[0].name, "25000baseCR/Full");
  EXPECT_EQ(m->MaxSupportedSpeed(), 100000u);
  EXPECT_EQ(m->speed_mbps, 25000u);
  EXPECT_EQ(m->full_duplex, true);
  EXPECT_EQ(m->autoneg, true);
}

TEST(EthtoolReplies, UnknownSpeedAndDuplexStayUnset) {
  ReplyBuilder b;
  mnl_attr_put_u32(b.nlh(), ETHTOOL_A_LINKMODES_SPEED, static_cast<uint32_t>(SPEED_UNKNOWN));
  mnl_attr_put_u8(b.nlh(), ETHTOOL_A_LINKMODES_DUPLEX, DUPLEX_UNKNOWN);
  auto m = EthtoolNetlink::ParseLinkModesReply(b.nlh());
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE(m->speed_mbps);
  EXPECT_FALSE(m->full_duplex);
  EXPECT_TRUE(m->supported.empty());
}

TEST(EthtoolReplies, RingsAndCoalescing) {
  ReplyBuilder rings;
  mnl_attr_put_u32(rings.nlh(), ETHTOOL_A_RINGS_RX_MAX, 8192);
  mnl_attr_put_u32(rings.nlh(), ETHTOOL_A_RINGS_TX_MAX, 8192);
  mnl_attr_put_u32(rings.nlh(), ETHTOOL_A_RINGS_RX, 1024);
  mnl_attr_put_u32(rings.nlh(), ETHTOOL_A_RINGS_TX, 2048);
  auto r = EthtoolNetlink::ParseRingsReply(rings.nlh());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->rx, 1024u);
  EXPECT_EQ(r->rx_max, 8192u);
  EXPECT_EQ(r->tx, 2048u);
  ReplyBuilder empty;
  EXPECT_FALSE(EthtoolNetlink::ParseRingsReply(empty.nlh()).ok());

  ReplyBuilder co;
  mnl_attr_put_u32(co.nlh(), ETHTOOL_A_COALESCE_RX_USECS, 8);
  mnl_attr_put_u8(co.nlh(), ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX, 1);
  auto c = EthtoolNetlink::ParseCoalesceReply(co.nlh());
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->rx_usecs, 8u);
  EXPECT_FALSE(c->rx_max_frames);  // absent: the driver does not support it
  EXPECT_EQ(c->adaptive_rx, true);
}

TEST(EthtoolNetlinkKernel, LoopbackHasNoRingsAndMissingInterfacesAreNamed) {
  auto nl = EthtoolNetlink::Open();
  ASSERT_TRUE(nl.ok()) << nl.error().message;
  auto rings = (*nl)->Rings("lo");
  ASSERT_FALSE(rings.ok());
  EXPECT_EQ(rings.error().message, "the driver does not report it");
  std::string missing = "gnnx" + std::to_string(getpid() % 100000);
  EthtoolInfo info = (*nl)->Query(missing);
  ASSERT_FALSE(info.rings.ok());
  EXPECT_EQ(info.rings.error().message, "no such interface in this network namespace");
  EXPECT_EQ(info.link_modes.error().message, "no such interface in this network namespace");
}

}  // namespace
}  // namespace gpunoise::doctor
