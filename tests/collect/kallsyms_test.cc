#include "collect/kallsyms.h"
#include "collect/kallsyms_loader.h"

#include <gtest/gtest.h>
#include <stdio.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

namespace gpunoise::collect {
namespace {

// /proc/kallsyms lines, unsorted, with data symbols and a module.
constexpr const char* kText =
    "ffffffff81200000 T udp_queue_rcv_one_skb\n"
    "ffffffff81100000 t __netif_receive_skb_core\n"
    "ffffffff82000000 D some_data\n"
    "ffffffffc0100000 t mlx5e_poll_rx_cq\t[mlx5_core]\n"
    "0000000000000000 T hidden_without_root\n";

// A descriptor of a file holding `text`, read as /proc/kallsyms is.
UniqueFd FileHolding(const char* text) {
  FILE* f = tmpfile();
  if (!f) return UniqueFd();
  UniqueFd fd(::dup(fileno(f)));
  bool written = fwrite(text, 1, strlen(text), f) == strlen(text);
  fclose(f);
  return written ? std::move(fd) : UniqueFd();
}

TEST(KernelSymbols, SymbolizesToFunctionPlusOffset) {
  auto s = KernelSymbols::FromTextForTesting(kText);
  EXPECT_EQ(s.Symbolize(0xffffffff8120003cull), "udp_queue_rcv_one_skb+0x3c");
  EXPECT_EQ(s.Symbolize(0xffffffff81100000ull), "__netif_receive_skb_core");
  EXPECT_EQ(s.Symbolize(0xffffffffc0100010ull), "mlx5e_poll_rx_cq+0x10");
}

// The recorder opens /proc/kallsyms before dropping its capabilities and
// reads it at the end, from the fd.
TEST(KernelSymbols, LoadFromFdReadsWhatWasOpenedBefore) {
  UniqueFd fd = FileHolding(kText);
  ASSERT_GE(fd.get(), 0);
  KernelSymbols symbols = KernelSymbols::LoadFromFd(fd.get());
  EXPECT_EQ(symbols.Symbolize(0xffffffff8120003c), "udp_queue_rcv_one_skb+0x3c");
  EXPECT_TRUE(KernelSymbols::LoadFromFd(-1).empty());
}

TEST(KernelSymbols, UnknownAddressesStayHex) {
  auto s = KernelSymbols::FromTextForTesting(kText);
  EXPECT_EQ(s.Symbolize(0x1000), "0x1000");
  EXPECT_EQ(s.Symbolize(0xffffffff90000000ull), "0xffffffff90000000");  // > 1 MiB past
  EXPECT_TRUE(KernelSymbols::FromTextForTesting("").empty());
}

TEST(KernelSymbols, DataSymbolsAndMalformedLinesAreSkipped) {
  auto s = KernelSymbols::FromTextForTesting(
      "not a line\n"
      "ffffffff81300000 T\n"
      "ffffffff81300000 d local_data\n"
      "zzzz T bad_address\n"
      "  ffffffff81400000 t indented_but_code\n"
      "ffffffff81500000 T last_without_newline");
  EXPECT_EQ(s.Symbolize(0xffffffff81300010ull), "0xffffffff81300010");
  EXPECT_EQ(s.Symbolize(0xffffffff81400008ull), "indented_but_code+0x8");
  EXPECT_EQ(s.Symbolize(0xffffffff81500000ull), "last_without_newline");
}

// The recorder reads /proc/kallsyms on a thread of its own, so that its
// drain never pauses for it.
TEST(KernelSymbolsLoader, ReadsTheTableOnAThreadOfItsOwnAndGetWaitsForIt) {
  UniqueFd fd = FileHolding(kText);
  ASSERT_GE(fd.get(), 0);
  KernelSymbolsLoader loader(std::move(fd));
  const KernelSymbols* polled = nullptr;
  for (auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
       !polled && std::chrono::steady_clock::now() < end;)
    if (!(polled = loader.TryGet())) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_NE(polled, nullptr);
  EXPECT_EQ(polled->Symbolize(0xffffffff8120003c), "udp_queue_rcv_one_skb+0x3c");
  EXPECT_EQ(&loader.Get(), polled);
}

TEST(KernelSymbolsLoader, AnInvalidDescriptorGivesAnEmptyTable) {
  KernelSymbolsLoader loader{UniqueFd()};
  EXPECT_TRUE(loader.Get().empty());
}

}  // namespace
}  // namespace gpunoise::collect
