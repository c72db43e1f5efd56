#include "report/report_session.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <filesystem>
#include <fstream>

#include "import/test_trace.h"

namespace gpunoise::report {
namespace {

TEST(ReportSession, CgroupThreadsAreReadFromTheCgroupAndItsDescendants) {
  testing::ScopedTempDir mount;
  namespace fs = std::filesystem;
  fs::create_directories(mount.path() + "/train.slice/job/worker");
  std::ofstream(mount.path() + "/train.slice/cgroup.threads") << "";
  std::ofstream(mount.path() + "/train.slice/job/cgroup.threads") << "100\n101\n";
  std::ofstream(mount.path() + "/train.slice/job/worker/cgroup.threads") << "205\n";
  auto tids = CgroupThreadsIn(mount.path(), "train.slice");
  ASSERT_TRUE(tids.ok()) << tids.error().message;
  std::sort(tids->begin(), tids->end());
  EXPECT_EQ(*tids, (std::vector<int32_t>{100, 101, 205}));
  auto absolute = CgroupThreadsIn(mount.path(), mount.path() + "/train.slice/job/worker");
  ASSERT_TRUE(absolute.ok());
  EXPECT_EQ(*absolute, std::vector<int32_t>{205});
  auto missing = CgroupThreadsIn(mount.path(), "no/such.slice");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("resolved live"), std::string::npos);
}

TEST(ReportSession, WindowsAreOffsetsFromTheFirstEvent) {
  analyze::AnalysisOptions o;
  ASSERT_TRUE(ParseWindow("2.5:7", &o).ok());
  EXPECT_EQ(*o.window_start, 2'500'000'000u);
  EXPECT_EQ(*o.window_end, 7'000'000'000u);
  analyze::AnalysisOptions open_end;
  ASSERT_TRUE(ParseWindow("500ms:", &open_end).ok());
  EXPECT_EQ(*open_end.window_start, 500'000'000u);
  EXPECT_FALSE(open_end.window_end.has_value());
  analyze::AnalysisOptions bad;
  EXPECT_FALSE(ParseWindow("5", &bad).ok());
  EXPECT_FALSE(ParseWindow("3:1", &bad).ok());
  EXPECT_FALSE(ParseWindow("x:1", &bad).ok());
}

}  // namespace
}  // namespace gpunoise::report
