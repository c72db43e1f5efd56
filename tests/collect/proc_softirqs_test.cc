#include "collect/proc_softirqs.h"

#include <gtest/gtest.h>

namespace gpunoise::collect {
namespace {

// As a 6.18 kernel prints it with CPU 2 offline: columns name online CPUs.
constexpr std::string_view kThreeCpus =
    "                    CPU0       CPU1       CPU3\n"
    "          HI:          5          0          1\n"
    "       TIMER:     412345     398765     400001\n"
    "      NET_TX:         12          3          0\n"
    "      NET_RX:     101010    4294967295          7\n"
    "       BLOCK:          0          0          0\n"
    "    IRQ_POLL:          0          0          0\n"
    "     TASKLET:         42          1          0\n"
    "       SCHED:     222222     111111     100000\n"
    "     HRTIMER:          0          0          0\n"
    "         RCU:     333333     444444     300000\n";

TEST(ProcSoftirqs, ReadsEachVectorOfEachOnlineCpuByItsColumnName) {
  Result<KernelSoftirqCounts> counts = ParseProcSoftirqs(kThreeCpus);
  ASSERT_TRUE(counts.ok()) << counts.error().message;
  ASSERT_EQ(counts->size(), 3u);
  EXPECT_FALSE(counts->contains(2)) << "offline CPUs have no column";
  const auto net_rx = static_cast<size_t>(model::SoftirqVec::kNetRx);
  EXPECT_EQ(counts->at(0)[net_rx], 101010u);
  EXPECT_EQ(counts->at(1)[net_rx], 4294967295u);
  EXPECT_EQ(counts->at(3)[net_rx], 7u);
  EXPECT_EQ(counts->at(3)[static_cast<size_t>(model::SoftirqVec::kRcu)], 300000u);
  EXPECT_EQ(counts->at(0)[static_cast<size_t>(model::SoftirqVec::kHi)], 5u);
}

TEST(ProcSoftirqs, SkipsRowsOfVectorsItDoesNotKnow) {
  std::string text(kThreeCpus);
  text += "     NEW_VEC:          1          2          3\n";
  Result<KernelSoftirqCounts> counts = ParseProcSoftirqs(text);
  ASSERT_TRUE(counts.ok()) << counts.error().message;
  EXPECT_EQ(counts->at(1)[static_cast<size_t>(model::SoftirqVec::kTimer)], 398765u);
}

TEST(ProcSoftirqs, RejectsARowShortOfItsColumns) {
  Result<KernelSoftirqCounts> counts = ParseProcSoftirqs("    CPU0  CPU1\n  NET_RX:  5\n");
  ASSERT_FALSE(counts.ok());
  EXPECT_NE(counts.error().message.find("NET_RX"), std::string::npos) << counts.error().message;
}

TEST(ProcSoftirqs, RejectsAHeaderThatNamesNoCpu) {
  EXPECT_FALSE(ParseProcSoftirqs("").ok());
  EXPECT_FALSE(ParseProcSoftirqs("\n  NET_RX:  5\n").ok());
  EXPECT_FALSE(ParseProcSoftirqs("    CPU0  GPU1\n").ok());
}

TEST(ProcSoftirqs, RejectsACountThatIsNotANumber) {
  EXPECT_FALSE(ParseProcSoftirqs("    CPU0\n  NET_RX:  12x\n").ok());
}

TEST(ProcSoftirqs, ReadsThisKernelsFile) {
  Result<KernelSoftirqCounts> counts = ReadProcSoftirqs();
  ASSERT_TRUE(counts.ok()) << counts.error().message;
  EXPECT_FALSE(counts->empty());
}

}  // namespace
}  // namespace gpunoise::collect
