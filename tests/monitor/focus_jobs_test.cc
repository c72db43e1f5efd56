// The focus processes' jobs, from a fake /proc: SLURM jobs from cgroup
// paths slurmstepd makes (v2 and v1), the environment where the cgroup
// names none, and the series bound.
#include "monitor/focus_jobs.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "integration/support/workloads.h"

namespace gpunoise::monitor {
namespace {

namespace fs = std::filesystem;

class FocusJobsTest : public ::testing::Test {
 protected:
  void SetUp() override { proc_ = testing::MakeTempDir(); }
  void TearDown() override { fs::remove_all(proc_); }
  void AddProcess(int pid, const std::string& cgroup, const std::string& environ = "") {
    std::string dir = proc_ + "/" + std::to_string(pid);
    fs::create_directories(dir);
    std::ofstream(dir + "/cgroup") << cgroup;
    if (!environ.empty()) std::ofstream(dir + "/environ") << environ;
  }
  std::string proc_;
};

TEST_F(FocusJobsTest, SlurmJobsComeFromTheCgroupPathAndOthersFromTheEnvironment) {
  // cgroup v2 (slurmstepd.scope), two tasks of job 4242.
  AddProcess(10, "0::/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0\n");
  AddProcess(11, "0::/system.slice/slurmstepd.scope/job_4242/step_0/user/task_1\n");
  // cgroup v1 (hierarchies per controller), job 77, whose environment
  // names another id: the cgroup wins (it is what slurmstepd enforces).
  AddProcess(12, "12:memory:/slurm/uid_1000/job_77/step_batch/task_0\n3:cpuset:/slurm/uid_1000/job_77/step_batch\n",
             std::string("SLURM_JOB_ID=99\0", 16));
  // No job in the cgroup: torchrun's run id from the environment.
  AddProcess(13, "0::/user.slice/user-1000.slice/session-3.scope\n",
             std::string("HOME=/root\0TORCHELASTIC_RUN_ID=run-5\0", 37));
  // Neither.
  AddProcess(14, "0::/user.slice\n");
  FocusJobs jobs = ReadFocusJobs({10, 11, 12, 13, 14, 15 /* exited */}, proc_);
  EXPECT_EQ(jobs.slurm, (std::map<std::string, uint64_t>{{"4242", 2}, {"77", 1}}));
  EXPECT_EQ(jobs.ids, (std::set<std::string>{"4242", "77", "run-5"}));
}

TEST(FocusJobSeries, AtMostTheLimitWithTheRestUnderOther) {
  std::map<std::string, uint64_t> jobs;
  for (int i = 0; i < 20; ++i) jobs[std::to_string(1000 + i)] = i == 7 ? 50 : 1;
  auto series = BoundedJobSeries(jobs, 4);
  ASSERT_EQ(series.size(), 4u);
  EXPECT_EQ(series[0], (std::pair<std::string, uint64_t>{"1000", 1}));
  EXPECT_EQ(series[1], (std::pair<std::string, uint64_t>{"1001", 1}));
  EXPECT_EQ(series[2], (std::pair<std::string, uint64_t>{"1007", 50})) << "the busiest job keeps its own series";
  EXPECT_EQ(series[3], (std::pair<std::string, uint64_t>{"other", 17}));
  EXPECT_EQ(BoundedJobSeries({{"1", 2}}, kMaxJobSeries).size(), 1u);
}

}  // namespace
}  // namespace gpunoise::monitor
