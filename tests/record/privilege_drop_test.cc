#include "common/privilege_drop.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

namespace gpunoise::record {
namespace {

TEST(PrivilegeDrop, RecordKeepsNothingForItsOwnDirectory) {
  std::string dir = std::filesystem::temp_directory_path() / ("gn-pd-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::vector<std::string> reasons;
  EXPECT_EQ(RecordKeeps({dir + "/t.pftrace", ""}, &reasons), 0u);
  EXPECT_TRUE(reasons.empty());
  std::filesystem::remove_all(dir);
}

TEST(PrivilegeDrop, RecordKeepsDacOverrideForAnotherUsersDirectoryAndForGpuFragments) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (chown to uid 65534)";
  std::string dir = std::filesystem::temp_directory_path() / ("gn-pd-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  ASSERT_EQ(::chown(dir.c_str(), 65534, 65534), 0);
  std::vector<std::string> reasons;
  EXPECT_EQ(RecordKeeps({dir + "/t.pftrace", ""}, &reasons), CapBit(kCapDacOverride));
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_NE(reasons[0].find("owned by uid 65534"), std::string::npos) << reasons[0];
  reasons.clear();
  EXPECT_EQ(RecordKeeps({"/tmp/t.pftrace", "/tmp/gpu"}, &reasons), CapBit(kCapDacOverride));
  EXPECT_NE(reasons.at(0).find("GPU fragments"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(PrivilegeDrop, MonitorKeepsBpfAndPerfmon) {
  std::vector<std::string> reasons;
  CapMask keep = MonitorKeeps(&reasons);
  EXPECT_TRUE(keep == (CapBit(kCapBpf) | CapBit(kCapPerfmon)) || keep == CapBit(kCapSysAdmin));
  EXPECT_FALSE(reasons.empty());
}

}  // namespace
}  // namespace gpunoise::record
