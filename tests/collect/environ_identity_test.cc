#include "collect/environ_identity.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace gpunoise::collect {
namespace {

std::string Env(std::initializer_list<const char*> entries) {
  std::string out;
  for (const char* e : entries) {
    out += e;
    out.push_back('\0');
  }
  return out;
}

TEST(EnvironIdentity, TorchrunRanksAndSlurmJob) {
  auto job = ParseJobEnviron(Env({"PATH=/usr/bin", "RANK=13", "LOCAL_RANK=5", "WORLD_SIZE=64",
                                  "SLURM_PROCID=1", "SLURM_JOB_ID=4242"}));
  ASSERT_TRUE(job.rank);
  EXPECT_EQ(*job.rank, 13);
  EXPECT_EQ(*job.local_rank, 5);
  EXPECT_EQ(*job.world_size, 64);
  EXPECT_EQ(job.job_id, "4242");
}

TEST(EnvironIdentity, SrunAloneGivesSlurmRanks) {
  auto job = ParseJobEnviron(Env({"SLURM_PROCID=7", "SLURM_LOCALID=3", "SLURM_NTASKS=16", "SLURM_JOB_ID=9"}));
  EXPECT_EQ(job.rank.value_or(-1), 7);
  EXPECT_EQ(job.local_rank.value_or(-1), 3);
  EXPECT_EQ(job.world_size.value_or(-1), 16);
}

TEST(EnvironIdentity, NoRankVariablesOrBadValuesGiveNothing) {
  EXPECT_TRUE(ParseJobEnviron(Env({"HOME=/root", "TERM=xterm"})).empty());
  auto job = ParseJobEnviron(Env({"RANK=zero", "LOCAL_RANK=-1", "=x", "RANK"}));
  EXPECT_FALSE(job.rank);
  EXPECT_FALSE(job.local_rank);
  // A truncated last entry (the read limit) is no problem.
  EXPECT_EQ(ParseJobEnviron("RANK=2").rank.value_or(-1), 2);
}

TEST(EnvironIdentity, ReadsThisProcessFromProc) {
  setenv("LOCAL_RANK", "3", 1);  // not in /proc/self/environ: that is the start's
  model::ProcessIdentity id;
  ReadProcessIdentity("/proc/self", &id);
  EXPECT_FALSE(id.cgroups.empty());
  EXPECT_FALSE(id.job.local_rank);
  unsetenv("LOCAL_RANK");
}

}  // namespace
}  // namespace gpunoise::collect
