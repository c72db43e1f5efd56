#include "collect/kallsyms.h"

#include <gtest/gtest.h>
#include <stdio.h>
#include <unistd.h>

#include <cstring>

namespace gpunoise::collect {
namespace {

// /proc/kallsyms lines, unsorted, with data symbols and a module.
constexpr const char* kText =
    "ffffffff81200000 T udp_queue_rcv_one_skb\n"
    "ffffffff81100000 t __netif_receive_skb_core\n"
    "ffffffff82000000 D some_data\n"
    "ffffffffc0100000 t mlx5e_poll_rx_cq\t[mlx5_core]\n"
    "0000000000000000 T hidden_without_root\n";

TEST(KernelSymbols, SymbolizesToFunctionPlusOffset) {
  auto s = KernelSymbols::FromTextForTesting(kText);
  EXPECT_EQ(s.Symbolize(0xffffffff8120003cull), "udp_queue_rcv_one_skb+0x3c");
  EXPECT_EQ(s.Symbolize(0xffffffff81100000ull), "__netif_receive_skb_core");
  EXPECT_EQ(s.Symbolize(0xffffffffc0100010ull), "mlx5e_poll_rx_cq+0x10");
}

// The recorder opens /proc/kallsyms before dropping its capabilities and
// reads it at the end, from the fd.
TEST(KernelSymbols, LoadFromFdReadsWhatWasOpenedBefore) {
  FILE* f = tmpfile();
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(fwrite(kText, 1, strlen(kText), f), strlen(kText));
  fflush(f);
  KernelSymbols symbols = KernelSymbols::LoadFromFd(fileno(f));
  fclose(f);
  EXPECT_EQ(symbols.Symbolize(0xffffffff8120003c), "udp_queue_rcv_one_skb+0x3c");
  EXPECT_TRUE(KernelSymbols::LoadFromFd(-1).empty());
}

TEST(KernelSymbols, UnknownAddressesStayHex) {
  auto s = KernelSymbols::FromTextForTesting(kText);
  EXPECT_EQ(s.Symbolize(0x1000), "0x1000");
  EXPECT_EQ(s.Symbolize(0xffffffff90000000ull), "0xffffffff90000000");  // > 1 MiB past
  EXPECT_TRUE(KernelSymbols::FromTextForTesting("").empty());
}

}  // namespace
}  // namespace gpunoise::collect
