#include "monitor/cpu_placement.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

namespace gpunoise::monitor {
namespace {

// A stand-in sysfs with the kernel's isolation files.
std::string FakeSysfs(const std::string& isolated, const std::string& nohz_full) {
  char tmpl[] = "/tmp/gpunoise-sysfs-XXXXXX";
  std::string root = mkdtemp(tmpl);
  std::filesystem::create_directories(root + "/devices/system/cpu");
  std::ofstream(root + "/devices/system/cpu/isolated") << isolated << "\n";
  std::ofstream(root + "/devices/system/cpu/nohz_full") << nohz_full << "\n";
  return root;
}

TEST(CpuPlacement, ReadsIsolcpusAndNohzFullFromSysfs) {
  std::string root = FakeSysfs("2-3", "3,5");
  CpuIsolation iso = ReadCpuIsolation(root);
  EXPECT_EQ(iso.isolated, (std::vector<int>{2, 3}));
  EXPECT_EQ(iso.nohz_full, (std::vector<int>{3, 5}));
  EXPECT_EQ(iso.All(), (std::vector<int>{2, 3, 5}));
  std::filesystem::remove_all(root);
}

TEST(CpuPlacement, NothingIsolatedWhenTheFilesAreEmptyOrMissing) {
  std::string root = FakeSysfs("", "");
  EXPECT_TRUE(ReadCpuIsolation(root).All().empty());
  EXPECT_TRUE(ReadCpuIsolation(root + "/nowhere").All().empty());
  std::filesystem::remove_all(root);
}

TEST(CpuPlacement, TheSamplerStaysOffIsolatedCpusUnlessAsked) {
  CpuIsolation iso{{2, 3}, {5}};
  std::vector<int> wanted = {0, 1, 2, 3, 4, 5};
  EXPECT_EQ(SamplerCpus(wanted, iso, false), (std::vector<int>{0, 1, 4}));
  EXPECT_EQ(SamplerCpus(wanted, iso, true), wanted);
}

TEST(CpuPlacement, TheMonitorsThreadsRunOffIsolatedAndFocusCpus) {
  CpuIsolation iso{{2, 3}, {}};
  EXPECT_EQ(HousekeepingCpus({0, 1, 2, 3, 4, 5}, iso, {4, 5}), (std::vector<int>{0, 1}));
  // Nothing left: the caller keeps the affinity it has.
  EXPECT_TRUE(HousekeepingCpus({2, 3}, iso, {}).empty());
}

}  // namespace
}  // namespace gpunoise::monitor
