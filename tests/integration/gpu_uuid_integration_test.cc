// GPUs by identity, not ordinal: two processes see one physical GPU under
// different CUDA ordinals. One runs in a pid namespace of its own with
// NVIDIA_VISIBLE_DEVICES naming two GPUs (the shared one is its ordinal 1,
// physical index 5 by that variable), the other on the host with
// CUDA_VISIBLE_DEVICES=2 (an index that counts in CUDA's order, not NVML's:
// by index the two would be two GPUs). The stand-in libcupti sends each the
// device records with the UUIDs the driver would. `gpunoise record
// --gpu-dir` on the host must put both processes' kernels under one GPU
// track named by the UUID, each process's own group under it, checked with
// Perfetto's trace processor.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <regex>
#include <thread>

#include "integration/support/privileges.h"
#include "integration/support/workloads.h"
#include "model/gpu_capture.h"

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;

constexpr const char* kShared = "GPU-5f2a1c3e-0b1d-4e2f-8a9b-0c1d2e3f4a5b";
constexpr const char* kOther = "GPU-77aa0000-1111-2222-3333-444455556666";

struct RemoveWhenDone {
  std::string dir;
  ~RemoveWhenDone() { std::system(("rm -rf '" + dir + "'").c_str()); }
};

bool HaveUnshare() { return std::system("unshare --pid --fork --mount-proc true >/dev/null 2>&1") == 0; }

TEST(GpuUuidIntegration, ProcessesSeeingOneGpuUnderDifferentOrdinalsShareItsUuidTrack) {
  GN_REQUIRE_REAL_EBPF();
  if (!HaveUnshare()) GTEST_SKIP() << "unshare --pid --fork --mount-proc does not work here";
  std::string tp = FindTraceProcessor();
  if (tp.empty()) GTEST_SKIP() << kNoTraceProcessor;
  std::string dir = MakeTempDir();
  RemoveWhenDone cleanup{dir};
  std::string frag_dir = dir + "/fragments", out = dir + "/uuid.pftrace";
  ChildProcess env_cmd({GpunoiseBinary(), "env", frag_dir, "--flush-ms", "100"});
  ASSERT_EQ(env_cmd.Wait(10s), 0) << env_cmd.stderr_text();
  std::vector<std::string> job_env = {"env", std::string(model::kCuptiPathEnv) + "=" + FAKE_CUPTI_LIB};
  std::string exports = env_cmd.stdout_text();
  std::regex line(R"(export (\w+)='([^']*)')");
  for (std::sregex_iterator it(exports.begin(), exports.end(), line), e; it != e; ++it)
    job_env.push_back(std::string((*it)[1]) + "=" + std::string((*it)[2]));

  ChildProcess rec({GpunoiseBinary(), "record", "-d", "4", "--gpu-dir", frag_dir, "-o", out});
  ASSERT_TRUE(rec.WaitForStderr("recording", 30s)) << rec.stderr_text();
  std::vector<std::string> in_ns = job_env;
  in_ns.insert(in_ns.end(), {std::string("FAKE_CUPTI_DEVICES=") + kOther + "," + kShared,
                             "FAKE_CUPTI_KERNEL_DEVICE=1", "NVIDIA_VISIBLE_DEVICES=3,5", "unshare",
                             "--pid", "--fork", "--mount-proc", FAKE_CUDA_APP, "--seconds", "1"});
  std::vector<std::string> on_host = job_env;
  on_host.insert(on_host.end(), {std::string("FAKE_CUPTI_DEVICES=") + kShared, "CUDA_VISIBLE_DEVICES=2",
                                 FAKE_CUDA_APP, "--seconds", "1"});
  ChildProcess a(in_ns), b(on_host);
  EXPECT_EQ(a.Wait(30s), 0) << a.stderr_text();
  EXPECT_EQ(b.Wait(30s), 0) << b.stderr_text();
  int rc = rec.Wait(60s);
  ASSERT_EQ(rc, 0) << rec.stderr_text();

  auto run = [&](const std::string& sql) {
    std::string query = dir + "/q.sql";
    std::ofstream(query) << sql;
    ChildProcess shell({tp, "-q", query, out});
    EXPECT_EQ(shell.Wait(120s), 0) << shell.stderr_text();
    return shell.stdout_text();
  };
  // Every kernel's GPU (the stream track's grandparent), how many processes'
  // groups under it hold kernels, how many kernels.
  std::string gpus = run(
      "select g.name as gpu, count(distinct p.id) as processes, count(*) as kernels "
      "from slice s join track t on s.track_id = t.id join track p on t.parent_id = p.id "
      "join track g on p.parent_id = g.id where s.name = 'busy()' group by g.id order by g.name;\n");
  std::printf("%s", gpus.c_str());  // the docs' example (docs/containers.md)
  std::smatch m;
  ASSERT_TRUE(std::regex_search(gpus, m, std::regex("\"gpu\",\"processes\",\"kernels\"\n\"([^\"]*)\",(\\d+),(\\d+)\n$")))
      << gpus;
  EXPECT_EQ(m[1].str(), "GPU-5f2a1c3e (Fake)") << gpus;
  EXPECT_EQ(m[2].str(), "2") << gpus;  // both processes, one GPU track
  EXPECT_GE(std::stoi(m[3].str()), 2) << gpus;
  // No track by an ordinal or an index guess, and the full UUID in its description.
  std::string names = run("select count(*) as n from track where name like 'GPU 1%' or name like 'GPU 2%' "
                          "or name like 'GPU 5%' or name like 'GPU 0%';\n");
  EXPECT_NE(names.find("\"n\"\n0\n"), std::string::npos) << names;
  std::string described = run(std::string("select count(*) as n from track where name = 'GPU-5f2a1c3e (Fake)' "
                                          "and extract_arg(source_arg_set_id, 'description') like '%") +
                          kShared + "%';\n");
  EXPECT_NE(described.find("\"n\"\n1\n"), std::string::npos) << described;
  // Each process's ordinal stays a label on its own streams.
  std::string labels = run(
      "select group_concat(distinct extract_arg(t.source_arg_set_id, 'description')) as d from slice s "
      "join track t on s.track_id = t.id "
      "where s.name = 'busy()';\n");
  EXPECT_NE(labels.find("on CUDA device 1 in process"), std::string::npos) << labels;
  EXPECT_NE(labels.find("on CUDA device 0 in process"), std::string::npos) << labels;
  // Two processes' fragments, flushed in turn: their clock snapshots reach
  // the trace in time order (gpu_fragments.cc), so none is invalid.
  std::string errors = run("select count(*) as errors from stats where severity in ('error', 'data_loss') "
                           "and value > 0 and name not like 'ftrace%' and name not like '%sched%';\n");
  EXPECT_NE(errors.find("\"errors\"\n0\n"), std::string::npos) << errors;
  // (clock_sync_cache_miss, an info stat, may count: a lookup, not an error.)
  std::string clocks = run("select count(*) as n from stats where name like '%clock%' and value > 0 "
                           "and severity != 'info';\n");
  EXPECT_NE(clocks.find("\"n\"\n0\n"), std::string::npos)
      << clocks << run("select name, value from stats where name like '%clock%' and value > 0;\n");
}

}  // namespace
}  // namespace gpunoise::testing
