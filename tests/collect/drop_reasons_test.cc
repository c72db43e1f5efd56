#include "collect/drop_reasons.h"

#include <bpf/btf.h>
#include <gtest/gtest.h>
#include <unistd.h>

namespace gpunoise::collect {
namespace {

TEST(DropReasons, NamesComeFromTheRunningKernelsBtf) {
  if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) GTEST_SKIP() << "no kernel BTF";
  struct btf* btf = btf__load_vmlinux_btf();
  ASSERT_NE(btf, nullptr);
  DropReasonNames names = DropReasonNames::FromBtf(btf);
  btf__free(btf);
  if (names.size() == 0) GTEST_SKIP() << "kernel older than 5.17: no enum skb_drop_reason";
  // Value 2 has been NOT_SPECIFIED since the enum appeared (5.17).
  EXPECT_EQ(names.Name(2), "NOT_SPECIFIED");
  // SOCKET_RCVBUFF exists on every kernel with the enum; its number varies,
  // which is the reason for reading BTF.
  bool found = false;
  for (uint32_t v = 0; v < 512 && !found; ++v) found = names.Name(v) == "SOCKET_RCVBUFF";
  EXPECT_TRUE(found);
}

TEST(DropReasons, UnknownAndSubsystemReasonsAreNamedByNumber) {
  DropReasonNames names = DropReasonNames::FromMapForTesting({{6, "SOCKET_RCVBUFF"}});
  EXPECT_EQ(names.Name(6), "SOCKET_RCVBUFF");
  EXPECT_EQ(names.Name(999), "REASON_999");
  EXPECT_EQ(names.Name((3u << 16) | 5), "SUBSYS_3_5");
}

TEST(DropReasons, NoBtfMeansNoNames) {
  EXPECT_EQ(DropReasonNames::FromBtf(nullptr).size(), 0u);
}

}  // namespace
}  // namespace gpunoise::collect
