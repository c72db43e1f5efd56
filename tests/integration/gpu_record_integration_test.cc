// `gpunoise record` with GPU capture, end to end, as root with real eBPF.
// There is no GPU here: a real CUDA program shows that a failing CUDA start
// costs nothing; fake_cuda_app with fake_cupti (a stand-in libcupti) runs
// the whole GPU path and shows both sides land in one timeline.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <set>
#include <thread>

#include "export/perfetto/trace_view.h"
#include "integration/support/privileges.h"
#include "integration/support/trace_reader.h"
#include "integration/support/workloads.h"
#include "model/gpu_capture.h"

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;

// "NAME (pid N)" in the recorder's output.
int PidOf(const std::string& text, const std::string& name) {
  std::smatch m;
  std::regex re(name + R"( \(pid (\d+)\))");
  return std::regex_search(text, m, re) ? std::stoi(m[1]) : -1;
}

std::set<int32_t> SwitchedIn(const perfetto::Trace& trace) {
  std::set<int32_t> pids;
  for (const auto& s : CompactSwitches(trace)) pids.insert(s.next_pid);
  return pids;
}

std::string SessionArg(const TraceView& v, const std::string& name) {
  auto summary = v.InstantNamed("gpunoise recording");
  if (!summary) return "<no summary>";
  const auto* a = summary->Arg(name);
  if (!a) return "<no " + name + ">";
  return a->has_string_value() ? a->string_value() : std::to_string(a->uint_value());
}

// Removes a test's directory when the test ends, failed or not.
struct RemoveWhenDone {
  std::string dir;
  ~RemoveWhenDone() { std::system(("rm -rf '" + dir + "'").c_str()); }
};

// Sets environment variables for the lifetime of a test, for the processes
// it starts.
class ScopedEnv {
 public:
  void Set(const std::string& key, const std::string& value) {
    keys_.push_back(key);
    setenv(key.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    for (const auto& k : keys_) unsetenv(k.c_str());
  }

 private:
  std::vector<std::string> keys_;
};

#ifdef GPU_WORKLOAD_BIN
TEST(GpuRecordIntegration, CudaProgramWithoutAGpuStillGetsItsKernelSideTrace) {
  GN_REQUIRE_REAL_EBPF();
  std::string dir = MakeTempDir();
  RemoveWhenDone cleanup{dir};
  std::string out = dir + "/nogpu.pftrace";
  ChildProcess rec({GpunoiseBinary(), "record", "-d", "20", "-o", out, "--", GPU_WORKLOAD_BIN});
  int rc = rec.Wait(60s);
  std::string stdout_text = rec.stdout_text(), stderr_text = rec.stderr_text();
  // gpunoise passes on the program's own verdict: no device, status 3.
  EXPECT_EQ(rc, 3) << stderr_text << stdout_text;
  EXPECT_NE(stderr_text.find("gpu_workload: no CUDA device"), std::string::npos) << stderr_text;
  int pid = PidOf(stdout_text, "gpu_workload");
  ASSERT_GT(pid, 0) << stdout_text;

  std::string error;
  auto trace = ReadTrace(out, &error);
  ASSERT_TRUE(trace) << error;
  TraceView v(*trace);
  EXPECT_EQ(SessionArg(v, "end_reason"), "command exited with status 3");
  // The recording ended with the program, long before -d.
  uint64_t start = std::stoull(SessionArg(v, "start_ts")), end = std::stoull(SessionArg(v, "end_ts"));
  EXPECT_LT(end - start, 15'000'000'000ull);
  EXPECT_TRUE(SwitchedIn(*trace).count(pid)) << "the program never appears in the scheduling data";
  EXPECT_NE(stdout_text.find("GPU: 0 processes"), std::string::npos) << stdout_text;
  // The private fragment directory is gone.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(stderr_text, m, std::regex("GPU fragments go to (\\S+)"))) << stderr_text;
  EXPECT_NE(access(m[1].str().c_str(), F_OK), 0) << m[1];
}
#endif

TEST(GpuRecordIntegration, GpuActivityAndKernelSideShareOneTimeline) {
  GN_REQUIRE_REAL_EBPF();
  std::string dir = MakeTempDir();
  RemoveWhenDone cleanup{dir};
  std::string out = dir + "/gpu.pftrace";
  ScopedEnv env;
  env.Set(model::kCuptiPathEnv, FAKE_CUPTI_LIB);
  env.Set(model::kGpuFlushMsEnv, "100");
  ChildProcess rec({GpunoiseBinary(), "record", "-d", "20", "-o", out, "--", FAKE_CUDA_APP, "--seconds", "1.5"});
  int rc = rec.Wait(60s);
  std::string stdout_text = rec.stdout_text();
  ASSERT_EQ(rc, 0) << rec.stderr_text() << stdout_text;
  int pid = PidOf(stdout_text, "fake_cuda_app");
  ASSERT_GT(pid, 0) << stdout_text;
  EXPECT_NE(stdout_text.find("GPU: 1 processes"), std::string::npos) << stdout_text;

  std::string error;
  auto trace = ReadTrace(out, &error);
  ASSERT_TRUE(trace) << error;
  TraceView v(*trace);
  ASSERT_TRUE(v.parsed());
  uint64_t start = std::stoull(SessionArg(v, "start_ts")), end = std::stoull(SessionArg(v, "end_ts"));

  const auto* stream = v.TrackNamed("GPU 0 (Fake) stream 7");
  ASSERT_NE(stream, nullptr);
  auto kernels = v.SlicesOn(stream->uuid());
  ASSERT_GE(kernels.size(), 5u);  // a flush every 100 ms for 1.5 s
  // Launch calls on the program's main thread (tid == pid), a flow from
  // each to its kernel, all inside the recording window.
  // The thread may have other tracks too (the kwork collector's IPI sends):
  // the launches are on the one with slices.
  uint64_t thread_track = 0;
  size_t most = 0;
  for (const auto& [uuid, d] : v.tracks())
    if (d->has_thread() && d->thread().tid() == pid && (thread_track == 0 || v.SlicesOn(uuid).size() > most)) {
      thread_track = uuid;
      most = v.SlicesOn(uuid).size();
    }
  ASSERT_NE(thread_track, 0u);
  auto launches = v.SlicesOn(thread_track);
  ASSERT_EQ(launches.size(), kernels.size());
  std::set<uint64_t> flows;
  for (const auto& l : launches) {
    ASSERT_EQ(l.flows.size(), 1u);
    flows.insert(l.flows[0]);
    EXPECT_GE(l.start, start);
  }
  for (const auto& k : kernels) {
    ASSERT_EQ(k.terminating_flows.size(), 1u);
    EXPECT_TRUE(flows.count(k.terminating_flows[0]));
    EXPECT_GE(k.start, start);
    EXPECT_LE(k.end, end);
  }
  // The same thread in the kernel-side scheduling data.
  EXPECT_TRUE(SwitchedIn(*trace).count(pid));
  // Sequences: the recorder's and the fragments' never collide.
  std::set<uint32_t> seq_of_gpu, seq_of_recorder;
  for (const auto& p : trace->packet()) {
    if (!p.has_trusted_packet_sequence_id()) continue;
    if (p.has_track_event() && p.track_event().name() == "gpunoise recording")
      seq_of_recorder.insert(p.trusted_packet_sequence_id());
    if (p.has_track_event() && p.track_event().track_uuid() == stream->uuid())
      seq_of_gpu.insert(p.trusted_packet_sequence_id());
  }
  ASSERT_EQ(seq_of_recorder.size(), 1u);
  EXPECT_FALSE(seq_of_gpu.count(*seq_of_recorder.begin()));
  EXPECT_TRUE(v.InstantNamed("gpunoise GPU capture"));
  EXPECT_TRUE(v.InstantNamed("NVML unavailable"));

  // Perfetto's own importer, where installed, must see the same: a flow
  // from each launch on the program's thread (the thread its scheduling
  // data belongs to) to a kernel, and no import errors.
  const char* tp = "/usr/local/bin/trace_processor_shell";
  if (access(tp, X_OK) != 0) return;
  // One statement per run: the shell refuses rows from several.
  auto run = [&](const std::string& sql) {
    std::string query = dir + "/q.sql";
    std::ofstream(query) << sql;
    ChildProcess shell({tp, "-q", query, out});
    EXPECT_EQ(shell.Wait(120s), 0) << shell.stderr_text();
    return shell.stdout_text();
  };
  std::string flow_rows = run("select count(*) as n from flow f join slice s on f.slice_out = s.id "
                          "join thread_track tt on s.track_id = tt.id join thread t using(utid) "
                          "where t.tid = " + std::to_string(pid) +
                          " and exists (select 1 from sched where sched.utid = t.utid);\n");
  EXPECT_NE(flow_rows.find("\"n\"\n" + std::to_string(kernels.size()) + "\n"), std::string::npos) << flow_rows;
  std::string errors = run("select count(*) as errors from stats where severity in ('error', 'data_loss') "
                           "and value > 0 and name not like 'ftrace%' and name not like '%sched%';\n");
  EXPECT_NE(errors.find("\"errors\"\n0\n"), std::string::npos) << errors;
}

TEST(GpuRecordIntegration, GpuDirCollectsProcessesStartedElsewhere) {
  GN_REQUIRE_REAL_EBPF();
  std::string dir = MakeTempDir();
  RemoveWhenDone cleanup{dir};
  std::string frag_dir = dir + "/fragments";
  std::string out = dir + "/dir.pftrace";
  // What `gpunoise env` prints is what the job gets.
  ChildProcess env_cmd({GpunoiseBinary(), "env", frag_dir, "--flush-ms", "100"});
  ASSERT_EQ(env_cmd.Wait(10s), 0) << env_cmd.stderr_text();
  std::string exports = env_cmd.stdout_text();
  ScopedEnv env;
  std::regex line(R"(export (\w+)='([^']*)')");
  for (std::sregex_iterator it(exports.begin(), exports.end(), line), e; it != e; ++it)
    env.Set((*it)[1], (*it)[2]);
  ASSERT_NE(getenv(model::kCudaInjectionEnv), nullptr) << exports;
  env.Set(model::kCuptiPathEnv, FAKE_CUPTI_LIB);
  // A fragment from long before the recording must stay out of it.
  std::ofstream(frag_dir + "/" + model::FragmentFileName(1, 1)) << std::string("\x0a\x00", 2);

  ChildProcess rec({GpunoiseBinary(), "record", "-d", "3", "--gpu-dir", frag_dir, "-o", out});
  ASSERT_TRUE(rec.WaitForStderr("recording", 20s)) << rec.stderr_text();
  ChildProcess app({FAKE_CUDA_APP, "--seconds", "1"});
  EXPECT_EQ(app.Wait(20s), 0) << app.stderr_text();
  int rc = rec.Wait(60s);
  ASSERT_EQ(rc, 0) << rec.stderr_text();
  EXPECT_NE(rec.stdout_text().find("GPU: 1 processes"), std::string::npos) << rec.stdout_text();
  std::string error;
  auto trace = ReadTrace(out, &error);
  ASSERT_TRUE(trace) << error;
  TraceView v(*trace);
  ASSERT_TRUE(v.parsed());
  EXPECT_TRUE(v.SliceNamed("busy()"));
  uint64_t thread_track = 0;
  for (const auto& [uuid, d] : v.tracks())
    if (d->has_thread() && d->thread().tid() == app.pid()) thread_track = uuid;
  EXPECT_NE(thread_track, 0u);
  // The directory belongs to the jobs: nothing is removed from it.
  EXPECT_EQ(access((frag_dir + "/" + model::FragmentFileName(1, 1)).c_str(), F_OK), 0);
}

TEST(GpuRecordIntegration, CtrlCReachesBothAndTheCommandsLastDataIsKept) {
  GN_REQUIRE_REAL_EBPF();
  std::string dir = MakeTempDir();
  RemoveWhenDone cleanup{dir};
  std::string out = dir + "/int.pftrace";
  ScopedEnv env;
  env.Set(model::kCuptiPathEnv, FAKE_CUPTI_LIB);
  env.Set(model::kGpuFlushMsEnv, "60000");  // only the signal flushes
  ChildProcess rec({GpunoiseBinary(), "record", "-d", "30", "-o", out, "--", FAKE_CUDA_APP, "--seconds", "30"});
  ASSERT_TRUE(rec.WaitForStderr("started", 20s)) << rec.stderr_text();
  int pid = PidOf(rec.stderr_text(), "fake_cuda_app");
  ASSERT_GT(pid, 0) << rec.stderr_text();
  std::this_thread::sleep_for(500ms);
  // What a terminal's Ctrl-C does: SIGINT to the recorder and the command.
  kill(pid, SIGINT);
  rec.Signal(SIGINT);
  int rc = rec.Wait(30s);
  EXPECT_EQ(rc, 128 + SIGINT) << rec.stderr_text() << rec.stdout_text();
  std::string error;
  auto trace = ReadTrace(out, &error);
  ASSERT_TRUE(trace) << error;
  TraceView v(*trace);
  ASSERT_TRUE(v.parsed());
  // The flush the library did on SIGINT made it into the trace.
  EXPECT_TRUE(v.InstantNamed("gpunoise GPU capture"));
  EXPECT_TRUE(v.SliceNamed("busy()"));
}

}  // namespace
}  // namespace gpunoise::testing
