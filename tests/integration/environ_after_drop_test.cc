// Rank and job after the capability drop. `record` reads every process's
// environment (RANK, SLURM_PROCID, ...) at its start scan, with root's
// capabilities, and again at its end scan, after it dropped them: then
// /proc/PID/environ of another user's process cannot be opened (it needs
// CAP_SYS_PTRACE). What the start scan read must survive the end scan. The
// process here belongs to nobody (65534), has RANK in its environment and a
// pid namespace of its own (so the end scan, which can still read its
// status, finds it worth recording and would replace what it had).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <regex>
#include <thread>

#include "integration/support/privileges.h"
#include "integration/support/trace_reader.h"
#include "integration/support/workloads.h"
#include "common/files.h"

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;

struct RemoveDir {
  std::string d;
  ~RemoveDir() { std::system(("rm -rf '" + d + "'").c_str()); }
};

TEST(EnvironAfterDrop, AnotherUsersProcessKeepsTheRankTheStartScanRead) {
  GN_REQUIRE_REAL_EBPF();
  if (std::system("unshare --pid --fork --mount-proc true >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "unshare --pid does not work here";
  if (std::system("setpriv --reuid=65534 --regid=65534 --clear-groups true >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "setpriv cannot switch to uid 65534 here";
  std::string dir = MakeTempDir();  // root's: the recorder keeps no capability at all
  RemoveDir remove_dir{dir};
  std::string out = dir + "/env.pftrace";
  ChildProcess job({"unshare", "--pid", "--fork", "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                    "env", "RANK=7", "LOCAL_RANK=3", "SLURM_JOB_ID=4242", "sh", "-c",
                    "echo pid $$; exec sleep 8"});
  std::this_thread::sleep_for(300ms);
  ChildProcess rec({GpunoiseBinary(), "record", "-d", "2", "-o", out});
  ASSERT_EQ(rec.Wait(60s), 0) << rec.stderr_text();

  // The job's host pid: the sleep whose uid is 65534 and whose parent is
  // the job's unshare.
  std::string error;
  auto trace = ReadTrace(out, &error);
  ASSERT_TRUE(trace) << error;
  std::map<std::string, std::string> id;
  for (const auto& args : TrackEventArgs(*trace, "gpunoise process identity")) {
    if (!args.count("nspid") || !args.count("pid") || !std::regex_match(args.at("nspid"), std::regex(R"(\d+/1)")))
      continue;
    auto status = ReadFileToString("/proc/" + args.at("pid") + "/status");
    if (status.ok() && status->find("Uid:\t65534") != std::string::npos) id = args;
  }
  job.Signal(SIGKILL);
  job.Wait(10s);
  ASSERT_FALSE(id.empty()) << "no identity for the other user's process in its pid namespace";
  EXPECT_EQ(id["rank"], "7");
  EXPECT_EQ(id["local_rank"], "3");
  EXPECT_EQ(id["job.id"], "4242");
}

}  // namespace
}  // namespace gpunoise::testing
