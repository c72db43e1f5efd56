// libgpunoise_cupti.so loaded the way the CUDA driver loads it: dlopen, then
// InitializeInjection, in a child process per case (the entry point runs
// once per process). Without a GPU, with the real libcupti, it must return
// cleanly with one line on stderr; with a stand-in libcupti (fake_cupti.cc)
// the whole capture runs: periodic fragments, the final flush at exit and
// on a fatal signal, and the program's own signal handling left intact.
#include <dirent.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "export/perfetto/trace_view.h"
#include "cupti/nvtx_abi.h"
#include "fake_nvtx_host.h"
#include "model/gpu_capture.h"

namespace gpunoise::cupti {
namespace {

using testing::TraceView;

std::string TempDir() {
  char tmpl[] = "/tmp/gpunoise-injection-test-XXXXXX";
  return mkdtemp(tmpl);
}

std::vector<std::string> Fragments(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (model::ParseFragmentFileName(e->d_name)) out.push_back(dir + "/" + e->d_name);
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void RemoveAll(const std::string& dir) {
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != "..") unlink((dir + "/" + name).c_str());
    }
    closedir(d);
  }
  rmdir(dir.c_str());
}

// Removes a test's directory when the test ends, failed or not.
struct RemoveWhenDone {
  std::string dir;
  ~RemoveWhenDone() { RemoveAll(dir); }
};

struct ChildResult {
  int status = 0;
  std::string stderr_text;
};

// Runs `body` in a child whose stderr is captured; `body` returns the exit code.
ChildResult RunChild(const std::function<int()>& body) {
  int pipe_fds[2];
  EXPECT_EQ(pipe(pipe_fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipe_fds[1], STDERR_FILENO);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    std::exit(body());  // exit, not _exit: atexit handlers are under test
  }
  close(pipe_fds[1]);
  ChildResult r;
  char buf[4096];
  ssize_t n;
  while ((n = read(pipe_fds[0], buf, sizeof(buf))) > 0) r.stderr_text.append(buf, static_cast<size_t>(n));
  close(pipe_fds[0]);
  waitpid(pid, &r.status, 0);
  return r;
}

int LoadAndInitialize() {
  void* lib = dlopen(GPUNOISE_CUPTI_LIB, RTLD_NOW | RTLD_LOCAL);
  if (!lib) return 90;
  auto init = reinterpret_cast<int (*)()>(dlsym(lib, "InitializeInjection"));
  if (!init) return 91;
  return init() == 1 ? 0 : 92;
}

int Lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

bool SigtermIsDefault() {
  struct sigaction sa;
  sigaction(SIGTERM, nullptr, &sa);
  return !(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_DFL;
}

TEST(Injection, WithoutAGpuReturnsCleanlyWithOneLine) {
  std::string dir = TempDir();
  RemoveWhenDone cleanup{dir};
  ChildResult r = RunChild([&] {
    setenv(model::kGpuDirEnv, dir.c_str(), 1);
    unsetenv(model::kCuptiPathEnv);
    int rc = LoadAndInitialize();
    if (rc) return rc;
    // Nothing was left behind that changes how the program handles signals.
    return SigtermIsDefault() ? 0 : 93;
  });
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 0) << r.stderr_text;
  EXPECT_EQ(Lines(r.stderr_text), 1) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("GPU capture off:"), std::string::npos) << r.stderr_text;
  EXPECT_TRUE(Fragments(dir).empty());
}

TEST(Injection, WithoutTheFragmentDirectoryReturnsCleanlyWithOneLine) {
  ChildResult r = RunChild([&] {
    unsetenv(model::kGpuDirEnv);
    return LoadAndInitialize();
  });
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 0) << r.stderr_text;
  EXPECT_EQ(Lines(r.stderr_text), 1) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find(model::kGpuDirEnv), std::string::npos) << r.stderr_text;
}

TEST(Injection, MissingOrOldCuptiReturnsCleanlyWithOneLine) {
  std::string dir = TempDir();
  RemoveWhenDone cleanup{dir};
  ChildResult r = RunChild([&] {
    setenv(model::kGpuDirEnv, dir.c_str(), 1);
    setenv(model::kCuptiPathEnv, "/nonexistent/libcupti.so.13", 1);
    return LoadAndInitialize();
  });
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 0) << r.stderr_text;
  EXPECT_EQ(Lines(r.stderr_text), 1) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("failed to load libcupti"), std::string::npos) << r.stderr_text;
}

void SetFakeCaptureEnv(const std::string& dir) {
  setenv(model::kGpuDirEnv, dir.c_str(), 1);
  setenv(model::kCuptiPathEnv, FAKE_CUPTI_LIB, 1);
  setenv(model::kGpuFlushMsEnv, "50", 1);
}

// All fragments of a run, concatenated: together they are one trace.
TraceView ReadFragments(const std::string& dir, size_t* count) {
  std::string all;
  auto files = Fragments(dir);
  *count = files.size();
  for (const auto& f : files) all += ReadAll(f);
  return TraceView(all);
}

void ExpectCapturedKernelsWithFlows(const TraceView& v, pid_t child) {
  ASSERT_TRUE(v.parsed());
  const auto* stream = v.TrackNamed("GPU 0 (Fake) stream 7");
  ASSERT_NE(stream, nullptr);
  auto kernels = v.SlicesOn(stream->uuid());
  ASSERT_GE(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].name, "busy()");
  // The launch calls sit on the child's main thread (tid == pid), each with
  // a flow to its kernel.
  const perfetto::TrackDescriptor* thread = nullptr;
  for (const auto& [uuid, d] : v.tracks())
    if (d->has_thread() && d->thread().tid() == child) thread = d;
  ASSERT_NE(thread, nullptr);
  EXPECT_EQ(thread->thread().pid(), child);
  auto calls = v.SlicesOn(thread->uuid());
  ASSERT_EQ(calls.size(), kernels.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].name, "cudaLaunchKernel");
    ASSERT_EQ(calls[i].flows.size(), 1u);
    ASSERT_EQ(kernels[i].terminating_flows.size(), 1u);
    EXPECT_EQ(calls[i].flows[0], kernels[i].terminating_flows[0]);
  }
}

TEST(Injection, FlushesPeriodicallyAndAtExit) {
  std::string dir = TempDir();
  RemoveWhenDone cleanup{dir};
  pid_t child = 0;
  ChildResult r = RunChild([&] {
    SetFakeCaptureEnv(dir);
    int rc = LoadAndInitialize();
    if (rc) return rc;
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    return 0;
  });
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 0) << r.stderr_text;
  EXPECT_EQ(r.stderr_text, "");
  size_t count = 0;
  TraceView v = ReadFragments(dir, &count);
  EXPECT_GE(count, 3u);  // several 50 ms flushes, then the final one
  auto files = Fragments(dir);
  ASSERT_FALSE(files.empty());
  child = model::ParseFragmentFileName(files[0].substr(dir.size() + 1))->pid;
  ExpectCapturedKernelsWithFlows(v, child);
  // Each fragment reads on its own.
  for (const auto& f : files) EXPECT_TRUE(TraceView(ReadAll(f)).parsed()) << f;
  // The last one carries the summary, with CUPTI's dropped records.
  TraceView last(ReadAll(files.back()));
  auto summary = last.InstantNamed("gpunoise GPU capture");
  ASSERT_TRUE(summary);
  ASSERT_NE(summary->Arg("dropped_records"), nullptr);
  EXPECT_EQ(summary->Arg("dropped_records")->uint_value(), 5u);
  EXPECT_GE(summary->Arg("kernels")->uint_value(), 2u);
}

TEST(Injection, FatalSignalFlushesThenTheProgramStillDiesOfIt) {
  std::string dir = TempDir();
  RemoveWhenDone cleanup{dir};
  ChildResult r = RunChild([&] {
    SetFakeCaptureEnv(dir);
    setenv(model::kGpuFlushMsEnv, "60000", 1);  // only the signal flushes
    int rc = LoadAndInitialize();
    if (rc) return rc;
    raise(SIGTERM);
    return 50;  // not reached: SIGTERM's default action kills
  });
  ASSERT_TRUE(WIFSIGNALED(r.status)) << r.status << " " << r.stderr_text;
  EXPECT_EQ(WTERMSIG(r.status), SIGTERM);
  auto files = Fragments(dir);
  ASSERT_EQ(files.size(), 1u);
  TraceView v(ReadAll(files[0]));
  EXPECT_TRUE(v.InstantNamed("gpunoise GPU capture"));
  EXPECT_TRUE(v.SliceNamed("busy()"));
}

std::atomic<int> g_handled{0};
void CountingHandler(int) { ++g_handled; }

TEST(Injection, ProgramsOwnSignalHandlerStillRunsAndDecides) {
  std::string dir = TempDir();
  RemoveWhenDone cleanup{dir};
  ChildResult r = RunChild([&] {
    signal(SIGTERM, CountingHandler);
    SetFakeCaptureEnv(dir);
    int rc = LoadAndInitialize();
    if (rc) return rc;
    raise(SIGTERM);
    raise(SIGTERM);
    return g_handled.load() == 2 ? 42 : 43;  // the program carries on
  });
  ASSERT_TRUE(WIFEXITED(r.status)) << r.stderr_text;
  EXPECT_EQ(WEXITSTATUS(r.status), 42);
  auto files = Fragments(dir);
  ASSERT_FALSE(files.empty());
  EXPECT_TRUE(TraceView(ReadAll(files.back())).InstantNamed("gpunoise GPU capture"));
}

TEST(Injection, ForkedChildDiesOfItsSignalAtOnce) {
  std::string dir = TempDir();
  RemoveWhenDone cleanup{dir};
  ChildResult r = RunChild([&] {
    SetFakeCaptureEnv(dir);
    int rc = LoadAndInitialize();
    if (rc) return rc;
    // A worker forked after CUDA started (a data loader): it has the
    // handler but no flusher, and must not wait for one.
    pid_t worker = fork();
    if (worker == 0) {
      raise(SIGTERM);
      _exit(70);
    }
    auto start = std::chrono::steady_clock::now();
    int status = 0;
    waitpid(worker, &status, 0);
    auto waited = std::chrono::steady_clock::now() - start;
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGTERM) return 71;
    return waited < std::chrono::milliseconds(1000) ? 0 : 72;
  });
  ASSERT_TRUE(WIFEXITED(r.status)) << r.stderr_text;
  EXPECT_EQ(WEXITSTATUS(r.status), 0) << r.stderr_text;
}

TEST(Injection, IgnoredSignalStaysIgnored) {
  std::string dir = TempDir();
  RemoveWhenDone cleanup{dir};
  ChildResult r = RunChild([&] {
    signal(SIGINT, SIG_IGN);
    SetFakeCaptureEnv(dir);
    int rc = LoadAndInitialize();
    if (rc) return rc;
    raise(SIGINT);
    struct sigaction sa;
    sigaction(SIGINT, nullptr, &sa);
    return sa.sa_handler == SIG_IGN ? 0 : 44;
  });
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 0);
}

TEST(Injection, NvtxIsHandedToCupti) {
  ChildResult r = RunChild([&] {
    setenv(model::kCuptiPathEnv, FAKE_CUPTI_LIB, 1);
    void* lib = dlopen(GPUNOISE_CUPTI_LIB, RTLD_NOW | RTLD_LOCAL);
    auto init = reinterpret_cast<int (*)(gpunoise::cupti::NvtxGetExportTable)>(dlsym(lib, "InitializeInjectionNvtx2"));
    if (!init || init(nullptr) != 1) return 60;
    void* fake = dlopen(FAKE_CUPTI_LIB, RTLD_NOW | RTLD_NOLOAD);
    auto* calls = fake ? static_cast<std::atomic<int>*>(dlsym(fake, "fake_cupti_nvtx_calls")) : nullptr;
    return calls && calls->load() == 1 ? 0 : 61;
  });
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 0) << r.stderr_text;
}

// A process playing NCCL 2.19+ under NVTX with the library injected (the
// stand-in CUPTI records the ranges as markers): its collectives' ranges
// reach the fragments with the typed fields decoded from their extended
// payloads, and the capture summary counts them.
TEST(Injection, NcclExtendedPayloadsReachTheTraceAsTypedArgs) {
  std::string dir = TempDir();
  RemoveWhenDone cleanup{dir};
  ChildResult r = RunChild([&] {
    SetFakeCaptureEnv(dir);
    int rc = LoadAndInitialize();
    if (rc) return rc;
    void* lib = dlopen(GPUNOISE_CUPTI_LIB, RTLD_NOW | RTLD_NOLOAD);
    if (!lib || !testing::StartFakeNvtx(lib)) return 70;
    void* fake = dlopen(FAKE_CUPTI_LIB, RTLD_NOW | RTLD_NOLOAD);
    static void (*launch)() = fake ? reinterpret_cast<void (*)()>(dlsym(fake, "fake_cupti_launch")) : nullptr;
    if (!launch) return 71;
    for (int i = 0; i < 3; ++i) {
      testing::FakeNcclAllReduce(0x5eed00000000c0deull, (size_t{1} << 20) * (i + 1), 0, [] { launch(); });
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
    }
    return 0;
  });
  ASSERT_TRUE(WIFEXITED(r.status));
  ASSERT_EQ(WEXITSTATUS(r.status), 0) << r.stderr_text;
  size_t count = 0;
  TraceView v = ReadFragments(dir, &count);
  ASSERT_TRUE(v.parsed());
  std::vector<testing::Slice> ranges;
  for (const auto& [uuid, d] : v.tracks())
    for (const auto& s : v.SlicesOn(uuid))
      if (s.name == "ncclAllReduce") ranges.push_back(s);
  std::sort(ranges.begin(), ranges.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
  ASSERT_EQ(ranges.size(), 3u);
  for (size_t i = 0; i < ranges.size(); ++i) {
    ASSERT_NE(ranges[i].Arg("nccl_comm"), nullptr) << i;
    EXPECT_EQ(ranges[i].Arg("nccl_comm")->uint_value(), 0x5eed00000000c0deull);
    EXPECT_EQ(ranges[i].Arg("nccl_bytes")->uint_value(), (uint64_t{1} << 20) * (i + 1));
    EXPECT_EQ(ranges[i].Arg("nccl_op")->int_value(), 0);
    EXPECT_EQ(ranges[i].Arg("nccl_schema")->string_value(), "AllReduce");
  }
  auto summary = v.InstantNamed("gpunoise GPU capture");
  ASSERT_TRUE(summary);
  ASSERT_NE(summary->Arg("nccl_payloads"), nullptr);
  EXPECT_EQ(summary->Arg("nccl_payloads")->uint_value(), 3u);
  EXPECT_EQ(summary->Arg("nccl_payloads_unmatched")->uint_value(), 0u);
}

TEST(Injection, OnlyTheEntryPointsAreExported) {
  void* lib = dlopen(GPUNOISE_CUPTI_LIB, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  EXPECT_NE(dlsym(lib, "InitializeInjection"), nullptr);
  EXPECT_NE(dlsym(lib, "InitializeInjectionNvtx2"), nullptr);
  EXPECT_NE(dlsym(lib, "InitializeInjectionNvtxExtension"), nullptr);  // NVTX payload schemas
  // Internal symbols stay inside, so they cannot clash with the program's.
  EXPECT_EQ(dlsym(lib, "_ZN8gpunoise11ProtoWriter11BeginNestedEj"), nullptr);
  dlclose(lib);
}

}  // namespace
}  // namespace gpunoise::cupti
