#include "collect/node_counters.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace gpunoise::collect {
namespace {

namespace fs = std::filesystem;

TEST(NodeCounters, StealIsTheEighthValueOfEachCpuLine) {
  // /proc/stat of a 2-CPU VM (the "cpu" sum line is not a CPU).
  const char* text =
      "cpu  100 0 50 9000 3 0 2 12 0 0\n"
      "cpu0 50 0 25 4500 1 0 1 5 0 0\n"
      "cpu1 50 0 25 4500 2 0 1 7 0 0\n"
      "intr 12345\n";
  auto steal = ParseProcStatSteal(text, 10'000'000);
  ASSERT_EQ(steal.size(), 2u);
  EXPECT_EQ(steal[0], 50'000'000u);
  EXPECT_EQ(steal[1], 70'000'000u);
  EXPECT_TRUE(ParseProcStatSteal("cpu0 1 2 3\n", 1).empty()) << "a kernel without steal has no figure";
}

TEST(NodeCounters, CpuStatReadsV1NanosecondsAndV2Microseconds) {
  auto v1 = ParseCpuStat("nr_periods 21\nnr_throttled 20\nthrottled_time 1189746323\nnr_bursts 0\nburst_time 0\n");
  ASSERT_TRUE(v1);
  EXPECT_EQ(v1->nr_periods, 21u);
  EXPECT_EQ(v1->nr_throttled, 20u);
  EXPECT_EQ(v1->throttled_ns, 1189746323u);
  auto v2 = ParseCpuStat("usage_usec 5\nuser_usec 3\nsystem_usec 2\nnr_periods 4\nnr_throttled 3\nthrottled_usec 250\n");
  ASSERT_TRUE(v2);
  EXPECT_EQ(v2->throttled_ns, 250'000u);
  // v2 without the cpu controller's bandwidth fields: nothing to report.
  EXPECT_FALSE(ParseCpuStat("usage_usec 5\nuser_usec 3\nsystem_usec 2\n"));
}

TEST(NodeCounters, CpuMaxSaysUnlimitedAsZero) {
  uint64_t q = 1, p = 0;
  ASSERT_TRUE(ParseCpuMax("max 100000\n", &q, &p));
  EXPECT_EQ(q, 0u);
  EXPECT_EQ(p, 100000u);
  ASSERT_TRUE(ParseCpuMax("20000 100000\n", &q, &p));
  EXPECT_EQ(q, 20000u);
  EXPECT_FALSE(ParseCpuMax("garbage", &q, &p));
}

TEST(NodeCounters, MountsOfAHybridHostAndOfAV2Host) {
  // This VM: v1 cpu beside a v2 mount with no controllers.
  const char* hybrid =
      "30 25 0:26 / /sys/fs/cgroup/cpu rw,relatime shared:9 - cgroup cgroup rw,cpu\n"
      "31 25 0:27 / /sys/fs/cgroup/unified rw,relatime shared:10 - cgroup2 cgroup2 rw\n";
  CpuCgroupMounts m = ParseCpuCgroupMounts(hybrid, "hugetlb\n");
  EXPECT_EQ(m.v1_cpu, "/sys/fs/cgroup/cpu");
  EXPECT_EQ(m.v2, "/sys/fs/cgroup/unified");
  EXPECT_FALSE(m.v2_has_cpu);
  const char* v2 = "25 1 0:22 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n";
  m = ParseCpuCgroupMounts(v2, "cpuset cpu io memory pids\n");
  EXPECT_TRUE(m.v1_cpu.empty());
  EXPECT_TRUE(m.v2_has_cpu);
  // "cpuacct" alone is not the cpu controller.
  m = ParseCpuCgroupMounts("30 25 0:26 / /sys/fs/cgroup/cpuacct rw - cgroup cgroup rw,cpuacct\n", "");
  EXPECT_TRUE(m.v1_cpu.empty());
}

class StandInTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("gn-node-counters-" + std::to_string(::getpid()));
    fs::create_directories(root_ / "job" / "step");
    fs::create_directories(root_ / "free");
  }
  void TearDown() override { fs::remove_all(root_); }
  void Write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }
  fs::path root_;
};

TEST_F(StandInTree, QuotaCgroupsAndTheProcessesBelowThem) {
  // v1 files: the root and "free" have no quota (-1).
  Write(root_ / "cpu.cfs_quota_us", "-1\n");
  Write(root_ / "cpu.cfs_period_us", "100000\n");
  Write(root_ / "free" / "cpu.cfs_quota_us", "-1\n");
  Write(root_ / "free" / "cpu.cfs_period_us", "100000\n");
  Write(root_ / "job" / "cpu.cfs_quota_us", "20000\n");
  Write(root_ / "job" / "cpu.cfs_period_us", "100000\n");
  Write(root_ / "job" / "cgroup.procs", "10\n");
  Write(root_ / "job" / "step" / "cpu.cfs_quota_us", "-1\n");
  Write(root_ / "job" / "step" / "cpu.cfs_period_us", "100000\n");
  Write(root_ / "job" / "step" / "cgroup.procs", "11\n12\n");
  auto found = FindQuotaCgroups(root_.string(), 1);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].path, "/job");
  EXPECT_EQ(found[0].quota_us, 20000u);
  EXPECT_EQ(found[0].period_us, 100000u);
  auto pids = CgroupProcessesBelow(found[0].dir);
  std::sort(pids.begin(), pids.end());
  EXPECT_EQ(pids, (std::vector<int32_t>{10, 11, 12})) << "a parent's quota holds its children's processes";
  // v2 spelling of the same.
  Write(root_ / "job" / "cpu.max", "20000 100000\n");
  Write(root_ / "free" / "cpu.max", "max 100000\n");
  found = FindQuotaCgroups(root_.string(), 2);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].version, 2);
  EXPECT_EQ(found[0].path, "/job");
}

}  // namespace
}  // namespace gpunoise::collect
