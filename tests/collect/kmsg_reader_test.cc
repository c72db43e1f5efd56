#include "collect/kmsg_reader.h"

#include <gtest/gtest.h>

namespace gpunoise::collect {
namespace {

TEST(KmsgReader, ParsesTheRecordWithItsDeviceAndSubsystem) {
  // A netdev message of a PCI NIC, as one read(2) of /dev/kmsg returns it.
  auto e = ParseKmsgEntry(
      "4,1093,12123666050,-;mlx5_core 0000:3b:00.0 eth0: Link down\n SUBSYSTEM=pci\n DEVICE=+pci:0000:3b:00.0\n");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->level, 4);
  EXPECT_EQ(e->facility, 0);
  EXPECT_EQ(e->seq, 1093u);
  EXPECT_EQ(e->usec, 12123666050u);
  EXPECT_EQ(e->text, "mlx5_core 0000:3b:00.0 eth0: Link down");
  EXPECT_EQ(e->subsystem, "pci");
  EXPECT_EQ(e->device, "+pci:0000:3b:00.0");
  EXPECT_EQ(e->cls, model::KernelLogClass::kLinkDown);
  EXPECT_EQ(e->about, "+pci:0000:3b:00.0");  // the kernel's own device field wins
}

TEST(KmsgReader, ADeviceWithoutAParentIsNamedByItsText) {
  // veth and bridge have no parent device: no DEVICE= line (seen on 6.18).
  auto e = ParseKmsgEntry("6,487,12123666050,-;gnbr0: port 1(gnbv0) entered disabled state\n");
  ASSERT_TRUE(e.has_value());
  EXPECT_TRUE(e->device.empty());
  EXPECT_EQ(e->about, "gnbv0");
  // User writes to /dev/kmsg carry facility 1 (LOG_USER).
  auto u = ParseKmsgEntry("14,9,5,-;hello");
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->facility, 1);
  EXPECT_EQ(u->level, 6);
}

TEST(KmsgReader, UnescapesTheKernelsHexEscapes) {
  auto e = ParseKmsgEntry("6,89,225604,-;rcu: \\x09RCU restricting CPUs\n");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->text, "rcu: \tRCU restricting CPUs");
  EXPECT_EQ(UnescapeKmsg("a\\x5cb\\xzz"), "a\\b\\xzz");
  EXPECT_FALSE(ParseKmsgEntry("garbage").has_value());
  EXPECT_FALSE(ParseKmsgEntry("x,1,2,-;t").has_value());
}

TEST(KmsgReader, SequenceGapsAreCountedAsLoss) {
  auto r = KmsgReader::Open("/dev/null", /*anchor=*/false);
  ASSERT_TRUE(r.ok()) << r.error().message;
  r->AccountForTesting(100);
  r->AccountForTesting(101);
  r->AccountForTesting(105);  // 102..104 were overwritten before we read them
  r->AccountForTesting(106);
  EXPECT_EQ(r->lost(), 3u);
}

}  // namespace
}  // namespace gpunoise::collect
