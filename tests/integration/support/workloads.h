// Bounded, real workloads for integration tests.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace gpunoise::testing {

struct PingPongResult {
  pid_t ping_tid = 0;
  pid_t pong_tid = 0;
  uint64_t round_trips = 0;
  // Voluntary context switches each thread made (getrusage RUSAGE_THREAD):
  // the kernel's own count to check a trace against.
  uint64_t ping_switches = 0;
  uint64_t pong_switches = 0;
};

// Two threads named `ping_name`/`pong_name`, pinned to cpu_a and cpu_b,
// bounce a byte over a pair of pipes `round_trips` times (or until
// `time_limit` passes, whichever is first).
PingPongResult RunPingPong(int cpu_a, int cpu_b, uint64_t round_trips,
                           std::chrono::milliseconds time_limit, const std::string& ping_name,
                           const std::string& pong_name);

// Runs `argv` as a child process. Its stderr is captured.
class ChildProcess {
 public:
  explicit ChildProcess(std::vector<std::string> argv);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Reads stderr until a line contains `needle` or `timeout` passes.
  bool WaitForStderr(const std::string& needle, std::chrono::milliseconds timeout);
  void Signal(int sig);
  // Waits for exit (killing the child after `timeout`); returns the exit code,
  // or 128+signal.
  int Wait(std::chrono::milliseconds timeout);
  std::string stderr_text();
  std::string stdout_text();

 private:
  void Pump(int timeout_ms);
  pid_t pid_ = -1;
  int stderr_fd_ = -1;
  int stdout_fd_ = -1;
  std::string stderr_;
  std::string stdout_;
  bool exited_ = false;
  int status_ = 0;
};

// Perfetto's trace_processor_shell where one is installed (it is built from
// Perfetto's source, not a Debian package), else "".
std::string FindTraceProcessor();
inline constexpr const char* kNoTraceProcessor =
    "trace_processor_shell is not installed (not packaged by Debian; build it from Perfetto's source)";

// The gpunoise binary under test (GPUNOISE_BIN, set by CMake).
std::string GpunoiseBinary();
// A new private directory under /tmp, removed when the test process exits.
std::string MakeTempDir();
// A directory of MakeTempDir() (or the one given), removed with everything in
// it when the test ends, also when it failed; GN_KEEP_TRACES=1 keeps it to
// look at the recordings afterwards.
class TempDir {
 public:
  TempDir() : path_(MakeTempDir()) {}
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    if (std::getenv("GN_KEEP_TRACES")) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};
// gpunoise programs (prefix gn_) still loaded that no live process holds
// (leaked or pinned), or that `owner` still holds.
std::vector<std::string> LoadedGpunoisePrograms(pid_t owner = 0);

}  // namespace gpunoise::testing
