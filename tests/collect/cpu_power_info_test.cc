#include "collect/cpu_power_info.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>

namespace gpunoise::collect {
namespace {

namespace fs = std::filesystem;

class Root {
 public:
  Root() {
    char tmpl[] = "/tmp/gn-cpupower-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~Root() { fs::remove_all(path_); }
  void Write(const std::string& rel, const std::string& text) {
    fs::create_directories(fs::path(path_ + "/" + rel).parent_path());
    std::ofstream(path_ + "/" + rel) << text;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(CpuPowerInfo, IdleStatesAreReadInOrderWithNameAndLatency) {
  Root r;
  r.Write("cpu0/cpuidle/state0/name", "POLL\n");
  r.Write("cpu0/cpuidle/state0/latency", "0\n");
  r.Write("cpu0/cpuidle/state1/name", "C6\n");
  r.Write("cpu0/cpuidle/state1/latency", "85\n");
  r.Write("cpu0/cpuidle/state3/name", "gap: never read\n");
  auto states = ReadIdleStates(r.path(), {0, 1});
  ASSERT_EQ(states.size(), 2u);
  EXPECT_EQ(states[1].name, "C6");
  EXPECT_EQ(states[1].index, 1u);
  EXPECT_EQ(states[1].exit_latency_us, 85u);
}

TEST(CpuPowerInfo, FrequencyLimitsOfCpusWithCpufreqOnly) {
  Root r;
  r.Write("cpu1/cpufreq/cpuinfo_max_freq", "3500000\n");
  r.Write("cpu1/cpufreq/cpuinfo_min_freq", "800000\n");
  r.Write("cpu1/cpufreq/scaling_cur_freq", "2100000\n");
  auto f = ReadFrequencyInfo(r.path(), {0, 1});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].cpu, 1u);
  EXPECT_EQ(f[0].max_khz, 3500000u);
  EXPECT_EQ(f[0].min_khz, 800000u);
  EXPECT_EQ(f[0].cur_khz, 2100000u);
}

TEST(CpuPowerInfo, NumaNodesAreTheNodeDirectories) {
  Root r;
  r.Write("node0/cpulist", "0-3");
  r.Write("node1/cpulist", "4-7");
  r.Write("possible", "0-1");
  EXPECT_EQ(CountNumaNodes(r.path()), 2);
  EXPECT_EQ(CountNumaNodes(r.path() + "/absent"), 0);
}

TEST(SmiCounters, TheCounterIsReadAtTheRegistersOffset) {
  Root r;
  // A stand-in for /dev/cpu/0/msr: 8 bytes at offset 0x34 hold the count.
  std::string bytes(0x40, '\0');
  uint64_t count = 4242;
  std::memcpy(&bytes[SmiCounters::kMsrSmiCount], &count, sizeof(count));
  r.Write("0/msr", bytes);
  SmiCounters s = SmiCounters::Open(r.path(), {0, 1});
  ASSERT_TRUE(s.available()) << s.why_not();
  auto now = s.Read();
  ASSERT_EQ(now.size(), 1u);
  EXPECT_EQ(now[0], 4242u);
}

TEST(SmiCounters, WithoutTheMsrDeviceItSaysWhy) {
  Root r;
  SmiCounters s = SmiCounters::Open(r.path(), {0});
  EXPECT_FALSE(s.available());
  EXPECT_NE(s.why_not().find("msr"), std::string::npos) << s.why_not();
  EXPECT_TRUE(s.Read().empty());
}

TEST(SmiCounters, AShortRegisterFileIsAReadFailure) {
  Root r;
  r.Write("0/msr", "short");
  SmiCounters s = SmiCounters::Open(r.path(), {0});
  EXPECT_FALSE(s.available());
  EXPECT_NE(s.why_not().find("MSR_SMI_COUNT"), std::string::npos) << s.why_not();
}

}  // namespace
}  // namespace gpunoise::collect
