#include "monitor/focus_resolver.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "integration/support/workloads.h"

namespace gpunoise::monitor {
namespace {

namespace fs = std::filesystem;

// A fake /proc and cgroup tree: init(1) -> launcher(100) -> worker(101),
// 102 "python" (threads 102, 103), 200 "other" in cgroup /train.
class FocusResolverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::MakeTempDir();
    proc_ = root_ + "/proc";
    cg_ = root_ + "/cgroup";
    AddProcess(1, 0, "init", {1});
    AddProcess(100, 1, "launcher", {100});
    AddProcess(101, 100, "worker (x)", {101, 105});
    AddProcess(102, 1, "python", {102, 103});
    AddProcess(200, 1, "other", {200});
    fs::create_directories(cg_ + "/train/job1");
    std::ofstream(cg_ + "/cgroup.procs") << "1\n";
    std::ofstream(cg_ + "/train/cgroup.procs") << "";
    std::ofstream(cg_ + "/train/job1/cgroup.procs") << "200\n";
  }
  void TearDown() override { fs::remove_all(root_); }
  void AddProcess(int pid, int ppid, const std::string& comm, std::vector<int> tids) {
    std::string dir = proc_ + "/" + std::to_string(pid);
    fs::create_directories(dir + "/task");
    std::ofstream(dir + "/stat") << pid << " (" << comm << ") S " << ppid << " 1 1 0 -1\n";
    for (int t : tids) fs::create_directories(dir + "/task/" + std::to_string(t));
  }
  FocusResolution Resolve(std::vector<std::string> specs) { return ResolveFocus(specs, proc_, cg_); }

  std::string root_, proc_, cg_;
};

TEST_F(FocusResolverTest, PidIncludesDescendantsAndTheirThreads) {
  FocusResolution r = Resolve({"100"});
  EXPECT_EQ(r.processes, (std::set<int>{100, 101}));
  EXPECT_EQ(r.ids, (std::set<uint32_t>{100, 101, 105}));
}

TEST_F(FocusResolverTest, CommMatchesTheWholeName) {
  FocusResolution r = Resolve({"comm:python"});
  EXPECT_EQ(r.processes, (std::set<int>{102}));
  EXPECT_EQ(r.ids, (std::set<uint32_t>{102, 103}));
  EXPECT_TRUE(Resolve({"comm:pyth"}).processes.empty());
  // A comm with spaces and parentheses is read whole.
  EXPECT_EQ(Resolve({"comm:worker (x)"}).processes, (std::set<int>{101}));
}

TEST_F(FocusResolverTest, CgroupIncludesChildCgroups) {
  EXPECT_EQ(Resolve({"cgroup:/train"}).processes, (std::set<int>{200}));
  EXPECT_EQ(Resolve({"cgroup:train/job1"}).processes, (std::set<int>{200}));
}

TEST_F(FocusResolverTest, SpecsAddUpAndMissingOnesAddNothing) {
  FocusResolution r = Resolve({"comm:python", "4242", "cgroup:/nope", "cgroup:/train"});
  EXPECT_EQ(r.processes, (std::set<int>{102, 200}));
  EXPECT_TRUE(Resolve({}).ids.empty());
}

}  // namespace
}  // namespace gpunoise::monitor
