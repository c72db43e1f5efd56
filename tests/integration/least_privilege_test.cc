// What `record` and `monitor` hold once attached, read from the kernel's
// own view (/proc/PID/task/TID/status: CapEff, CapBnd, NoNewPrivs) of the
// running binaries, and that both still do their work with only that: the
// recorder writes a valid trace, the monitor serves metrics and reloads.
// `record -- CMD` under sudo gives the command the invoking user's rights
// only.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "common/capabilities.h"
#include "common/files.h"
#include "common/strings.h"
#include "model/gpu_capture.h"
#include "integration/support/metrics_scrape.h"
#include "integration/support/privileges.h"
#include "integration/support/trace_reader.h"
#include "integration/support/workloads.h"

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;

struct ThreadPrivileges {
  std::string comm;
  CapMask effective = 0, permitted = 0, bounding = 0;
  bool no_new_privs = false;
};

uint64_t HexField(const std::string& status, const std::string& key) {
  size_t at = status.find("\n" + key + ":\t");
  if (at == std::string::npos) return ~0ull;
  return std::stoull(status.substr(at + key.size() + 3, 16), nullptr, 16);
}

// Every thread of `pid`.
std::map<int, ThreadPrivileges> Threads(pid_t pid) {
  std::map<int, ThreadPrivileges> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    auto status = ReadFileToString(e.path().string() + "/status");
    if (!status.ok()) continue;
    std::string s = "\n" + *status;
    ThreadPrivileges t;
    t.effective = HexField(s, "CapEff");
    t.permitted = HexField(s, "CapPrm");
    t.bounding = HexField(s, "CapBnd");
    t.no_new_privs = HexField(s, "NoNewPrivs") == 1;
    if (auto comm = ReadFileToString(e.path().string() + "/comm"); comm.ok()) t.comm = std::string(Trim(*comm));
    out[std::stoi(e.path().filename().string())] = t;
  }
  return out;
}

// The soft "Max nice priority" of /proc/PID/limits (RLIMIT_NICE); -1: unread.
int MaxNicePriority(pid_t pid) {
  auto limits = ReadFileToString("/proc/" + std::to_string(pid) + "/limits");
  if (!limits.ok()) return -1;
  size_t at = limits->find("Max nice priority");
  if (at == std::string::npos) return -1;
  return std::atoi(limits->c_str() + at + std::strlen("Max nice priority"));
}

// What a thread of `record` may hold beyond the main thread: the drain's
// guard (record/drain_priority.h) keeps CAP_SYS_NICE, and only where
// RLIMIT_NICE could not be raised (a root without CAP_SYS_RESOURCE).
CapMask GuardMayKeep(pid_t pid, const std::string& comm) {
  return comm == "gn-drain-guard" && MaxNicePriority(pid) < 20 ? CapBit(kCapSysNice) : 0;
}

// Waits until the main thread's effective set is no longer full (the drop
// comes right after the "attached" log lines).
bool WaitForDrop(pid_t pid) {
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    auto t = Threads(pid);
    if (t.count(pid) && t[pid].no_new_privs) return true;
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

bool KernelKnowsBpfCap() {
  auto last = ReadFileToString("/proc/sys/kernel/cap_last_cap");
  return last.ok() && std::stoi(*last) >= kCapBpf;
}

TEST(LeastPrivilege, MonitorKeepsOnlyBpfAndPerfmonAfterAttachAndStillServesAndReloads) {
  GN_REQUIRE_REAL_EBPF();
  ASSERT_TRUE(KernelKnowsBpfCap()) << "this test expects a kernel with CAP_BPF (5.8+)";
  std::string dir = MakeTempDir();
  std::ofstream(dir + "/monitor.conf") << "interval = 500ms\n";
  ChildProcess m({GpunoiseBinary(), "monitor", "--listen", "127.0.0.1:0", "--config", dir + "/monitor.conf"});
  ASSERT_TRUE(m.WaitForStderr("listening", 60s)) << m.stderr_text();
  ASSERT_TRUE(WaitForDrop(m.pid())) << m.stderr_text();
  const CapMask keep = CapBit(kCapBpf) | CapBit(kCapPerfmon);
  auto threads = Threads(m.pid());
  ASSERT_GE(threads.size(), 2u) << "the main thread and the HTTP thread";
  for (const auto& [tid, t] : threads) {
    EXPECT_TRUE(t.no_new_privs) << tid;
    if (tid == m.pid()) {
      EXPECT_EQ(t.effective, keep) << CapabilityNames(t.effective);
      EXPECT_EQ(t.permitted, keep) << CapabilityNames(t.permitted);
      EXPECT_EQ(t.bounding, keep) << CapabilityNames(t.bounding);
    } else {
      // The HTTP thread (and any connection thread) holds nothing at all.
      EXPECT_EQ(t.effective & ~keep, 0u) << tid << " " << t.comm << " " << CapabilityNames(t.effective);
    }
  }
  auto address = ListeningAddress(m.stderr_text());
  ASSERT_TRUE(address);
  // Still serving, and a reload that starts the flight recorder (new
  // programs and rings) works with what was kept.
  Series s = ParseExposition(HttpGet(*address, "/metrics").body);
  EXPECT_GT(SumOf(s, "gpunoise_softirqs_total"), 0);
  std::ofstream(dir + "/monitor.conf") << "interval = 500ms\nflight-recorder = 5s\ndump-dir = " << dir << "/dumps\n";
  m.Signal(SIGHUP);
  ASSERT_TRUE(m.WaitForStderr("reloaded", 20s)) << m.stderr_text();
  std::this_thread::sleep_for(1500ms);
  std::string log = m.stderr_text();
  EXPECT_EQ(log.find("failed to start the flight recorder"), std::string::npos) << log;
  Series after = ParseExposition(HttpGet(*address, "/metrics").body);
  EXPECT_EQ(SumOf(after, "gpunoise_flight_recorder_enabled"), 1) << log;
  EXPECT_GT(SumOf(after, "gpunoise_flight_recorder_events"), 0) << "its programs run after the reload\n" << log;
  for (const auto& [tid, t] : Threads(m.pid()))
    EXPECT_EQ(t.effective & ~keep, 0u) << "after the reload: " << tid << " " << CapabilityNames(t.effective);
  m.Signal(SIGTERM);
  EXPECT_EQ(m.Wait(30s), 0) << m.stderr_text();
  std::filesystem::remove_all(dir);
}

TEST(LeastPrivilege, RecordKeepsNothingWritingIntoRootsDirectoryAndTheTraceIsValid) {
  GN_REQUIRE_REAL_EBPF();
  std::string dir = MakeTempDir();  // root's, 0700
  ChildProcess r({GpunoiseBinary(), "record", "-d", "3", "-o", dir + "/t.pftrace"});
  ASSERT_TRUE(r.WaitForStderr("until it ends", 60s)) << r.stderr_text();
  ASSERT_TRUE(WaitForDrop(r.pid())) << r.stderr_text();
  // The drain's guard (record/drain_priority.h) may keep CAP_SYS_NICE,
  // and only where RLIMIT_NICE could not be raised (a root without
  // CAP_SYS_RESOURCE): every other thread holds nothing.
  bool guard_seen = false;
  for (const auto& [tid, t] : Threads(r.pid())) {
    const CapMask allowed = GuardMayKeep(r.pid(), t.comm);
    guard_seen |= t.comm == "gn-drain-guard";
    EXPECT_EQ(t.effective & ~allowed, 0u) << tid << " " << t.comm << " " << CapabilityNames(t.effective);
    EXPECT_EQ(t.bounding & ~allowed, 0u) << t.comm << " " << CapabilityNames(t.bounding);
    EXPECT_TRUE(t.no_new_privs);
  }
  EXPECT_TRUE(guard_seen) << "the drain did not yield: " << r.stderr_text();
  EXPECT_EQ(r.Wait(60s), 0) << r.stderr_text();
  std::string error;
  auto trace = ReadTrace(dir + "/t.pftrace", &error);
  ASSERT_TRUE(trace) << error;
  EXPECT_GT(FtraceEvents(*trace).size() + CompactSwitches(*trace).size(), 100u);
  std::filesystem::remove_all(dir);
}

// The drain's lanes and its deflate thread (record --drain-threads,
// --deflate-thread): the deflate thread starts before the drop, the lanes
// after it; both hold nothing from their first block or turn on.
TEST(LeastPrivilege, RecordsDrainLanesAndDeflateThreadHoldNothing) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs for two lanes";
  std::string dir = MakeTempDir();
  ChildProcess r({GpunoiseBinary(), "record", "-d", "3", "-o", dir + "/t.pftrace", "--drain-threads", "2",
                  "--deflate-thread", "on"});
  ASSERT_TRUE(r.WaitForStderr("until it ends", 60s)) << r.stderr_text();
  ASSERT_TRUE(WaitForDrop(r.pid())) << r.stderr_text();
  int lanes = 0, deflate = 0;
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (lanes == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
    lanes = deflate = 0;
    for (const auto& [tid, t] : Threads(r.pid())) {
      if (t.comm != "gn-drain-lane" && t.comm != "gn-deflate") continue;
      ++(t.comm == "gn-deflate" ? deflate : lanes);
      EXPECT_EQ(t.effective, 0u) << tid << " " << t.comm << " " << CapabilityNames(t.effective);
      EXPECT_EQ(t.bounding, 0u) << t.comm << " " << CapabilityNames(t.bounding);
      EXPECT_TRUE(t.no_new_privs) << t.comm;
    }
  }
  EXPECT_EQ(lanes, 1) << r.stderr_text();
  EXPECT_EQ(deflate, 1) << r.stderr_text();
  EXPECT_EQ(r.Wait(60s), 0) << r.stderr_text();
  std::string error;
  EXPECT_TRUE(ReadTrace(dir + "/t.pftrace", &error)) << error;
  std::filesystem::remove_all(dir);
}

TEST(LeastPrivilege, RecordUnderSudoKeepsOnlyDacOverrideForTheUsersDirectoryAndTheCommandRunsAsTheUser) {
  GN_REQUIRE_REAL_EBPF();
  std::string dir = MakeTempDir();
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
  ASSERT_EQ(::chown(dir.c_str(), 65534, 65534), 0);  // the invoking user's directory
  ChildProcess r(std::vector<std::string>{
      "env", "SUDO_UID=65534", "SUDO_GID=65534", "SUDO_USER=nobody", GpunoiseBinary(), "record", "-d", "10", "-o",
      dir + "/t.pftrace", "--", "sh", "-c", "grep -E '^(Uid|Gid|CapInh|CapPrm|CapEff|CapAmb):' /proc/self/status; sleep 2"});
  ASSERT_TRUE(r.WaitForStderr("until it ends", 60s)) << r.stderr_text();
  ASSERT_TRUE(WaitForDrop(r.pid())) << r.stderr_text();
  // The main thread keeps cap_dac_override; background tasks (the symbol
  // read, the node scans) hold nothing, the drain's guard at most
  // cap_sys_nice.
  for (const auto& [tid, t] : Threads(r.pid()))
    EXPECT_EQ(t.effective & ~GuardMayKeep(r.pid(), t.comm),
              tid == r.pid() ? CapBit(kCapDacOverride) : t.effective & CapBit(kCapDacOverride))
        << tid << " " << CapabilityNames(t.effective);
  EXPECT_EQ(r.Wait(60s), 0) << r.stderr_text();
  std::string out = r.stdout_text();
  EXPECT_NE(out.find("Uid:\t65534\t65534\t65534\t65534"), std::string::npos) << out;
  EXPECT_NE(out.find("Gid:\t65534\t65534\t65534\t65534"), std::string::npos) << out;
  for (const char* set : {"CapInh", "CapPrm", "CapEff", "CapAmb"})
    EXPECT_NE(out.find(std::string(set) + ":\t0000000000000000"), std::string::npos) << set << "\n" << out;
  std::string error;
  EXPECT_TRUE(ReadTrace(dir + "/t.pftrace", &error)) << error << "\n" << r.stderr_text();
  std::filesystem::remove_all(dir);
}

// The GPU side's long-lived threads (here the pod directories' watcher;
// on a GPU node also the NVML sampler, which runs the vendor's library)
// start after the drop and hold no more than the main thread kept.
TEST(LeastPrivilege, RecordStartsItsGpuThreadsAfterTheDropWithNoMoreThanTheMainThreadKept) {
  GN_REQUIRE_REAL_EBPF();
  std::string dir = MakeTempDir();
  std::string root = dir + "/gpu";
  ASSERT_EQ(::mkdir(root.c_str(), 0711), 0);
  ChildProcess r({GpunoiseBinary(), "record", "-d", "3", "--gpu-pod-dirs", root, "-o", dir + "/t.pftrace"});
  ASSERT_TRUE(r.WaitForStderr("until it ends", 60s)) << r.stderr_text();
  ASSERT_TRUE(WaitForDrop(r.pid())) << r.stderr_text();
  // The watcher starts right after the drop: give it a moment to appear.
  auto threads = Threads(r.pid());
  for (int i = 0; i < 100 && threads.size() < 2; ++i) {
    std::this_thread::sleep_for(20ms);
    threads = Threads(r.pid());
  }
  ASSERT_TRUE(threads.count(r.pid()));
  const ThreadPrivileges main_thread = threads[r.pid()];
  EXPECT_GE(threads.size(), 2u) << "the pod directories' watcher runs for the whole recording";
  for (const auto& [tid, t] : threads) {
    const CapMask guard = GuardMayKeep(r.pid(), t.comm);
    EXPECT_EQ(t.effective & ~main_thread.effective & ~guard, 0u) << tid << " " << t.comm << " " << CapabilityNames(t.effective);
    EXPECT_EQ(t.bounding & ~main_thread.bounding & ~guard, 0u) << tid << " " << t.comm << " " << CapabilityNames(t.bounding);
    EXPECT_TRUE(t.no_new_privs) << tid << " " << t.comm;
  }
  EXPECT_EQ(r.Wait(60s), 0) << r.stderr_text();
  std::filesystem::remove_all(dir);
}

#ifdef FAKE_CUDA_APP
// The GPU path after the drop: fake_cuda_app (with fake_cupti standing in
// for libcupti) runs as the sudo user and writes its fragments into a
// directory that is that user's (0700); the recorder, holding only
// cap_dac_override, reads them into the trace and removes them.
TEST(LeastPrivilege, RecordUnderSudoCollectsTheUsersGpuFragmentsWithOnlyDacOverride) {
  GN_REQUIRE_REAL_EBPF();
  std::string dir = MakeTempDir();
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
  ASSERT_EQ(::chown(dir.c_str(), 65534, 65534), 0);
  ChildProcess r(std::vector<std::string>{
      // TMPDIR: the fragment directory is made inside `dir`, so the check
      // below sees that it was removed.
      "env", "SUDO_UID=65534", "SUDO_GID=65534", "SUDO_USER=nobody", "TMPDIR=" + dir,
      std::string(model::kCuptiPathEnv) + "=" + FAKE_CUPTI_LIB,
      std::string(model::kGpuFlushMsEnv) + "=100", GpunoiseBinary(), "record", "-d", "20", "-o", dir + "/gpu.pftrace",
      "--", FAKE_CUDA_APP, "--seconds", "1.5"});
  ASSERT_TRUE(r.WaitForStderr("until it ends", 60s)) << r.stderr_text();
  ASSERT_TRUE(WaitForDrop(r.pid())) << r.stderr_text();
  for (const auto& [tid, t] : Threads(r.pid()))
    EXPECT_EQ(t.effective & ~GuardMayKeep(r.pid(), t.comm),
              tid == r.pid() ? CapBit(kCapDacOverride) : t.effective & CapBit(kCapDacOverride))
        << tid << " " << t.comm << " " << CapabilityNames(t.effective);
  ASSERT_EQ(r.Wait(60s), 0) << r.stderr_text() << r.stdout_text();
  EXPECT_NE(r.stdout_text().find("GPU: 1 processes"), std::string::npos) << r.stdout_text() << r.stderr_text();
  std::string error;
  auto trace = ReadTrace(dir + "/gpu.pftrace", &error);
  ASSERT_TRUE(trace) << error;
  size_t gpu_slices = 0;
  for (const auto& p : trace->packet())
    if (p.has_track_event() && p.track_event().type() == perfetto::TrackEvent::TYPE_SLICE_BEGIN) ++gpu_slices;
  EXPECT_GT(gpu_slices, 5u) << "the fragments' kernels and launches are in the trace";
  // Only the trace is left: the fragments and their directory are gone
  // (removing them is what needs cap_dac_override rather than
  // cap_dac_read_search: with the latter they stay behind).
  size_t entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1u);
  std::filesystem::remove_all(dir);
}
#endif

}  // namespace
}  // namespace gpunoise::testing
