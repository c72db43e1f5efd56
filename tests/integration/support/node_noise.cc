#include "integration/support/node_noise.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>

namespace gpunoise::testing {

using namespace std::chrono_literals;

pid_t Gettid() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

uint64_t RunDelayNs(pid_t tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/schedstat");
  uint64_t on_cpu = 0, run_delay = 0;
  in >> on_cpu >> run_delay;
  return run_delay;
}

void Spin(std::chrono::microseconds d) {
  auto end = std::chrono::steady_clock::now() + d;
  volatile uint64_t x = 0;
  while (std::chrono::steady_clock::now() < end) x = x + 1;
}

std::string OnDisk() {
  char tmpl[] = "/var/tmp/gpunoise-test-XXXXXX";
  const char* made = mkdtemp(tmpl);
  return made ? std::string(made) : MakeTempDir();
}

void PinProcess(pid_t pid, int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  std::error_code ec;
  for (const auto& t : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec))
    ::sched_setaffinity(static_cast<pid_t>(std::stol(t.path().filename().string())), sizeof(set), &set);
}

std::string RecordWhile(const std::string& dir, const char* name, const char* seconds,
                        const std::function<void()>& workload, int recorder_cpu) {
  std::string out = dir + "/" + name;
  ChildProcess rec({GpunoiseBinary(), "record", "-d", seconds, "-o", out});
  EXPECT_TRUE(rec.WaitForStderr("recording", 20s)) << rec.stderr_text();
  if (recorder_cpu >= 0) PinProcess(rec.pid(), recorder_cpu);
  workload();
  EXPECT_EQ(rec.Wait(60s), 0) << rec.stderr_text();
  return out;
}

const analyze::Finding* FindDetector(const analyze::Analysis& a, std::string_view detector) {
  for (const auto& f : a.findings)
    if (f.detector == detector) return &f;
  return nullptr;
}

std::string UniqueName(const char* what) { return "gn-taxo-" + std::string(what) + "-" + std::to_string(::getpid()); }

void Pin(std::initializer_list<int> cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  ::sched_setaffinity(0, sizeof(set), &set);
}

analyze::Analysis ReportOn(const std::string& trace, pid_t focus, std::string* text) {
  report::ReportOptions options;
  options.trace_path = trace;
  options.analysis.focus = {std::to_string(focus)};
  auto result = report::RunReport(options);
  EXPECT_TRUE(result.ok()) << result.error().message;
  if (!result.ok()) return {};
  *text = result->output;
  return std::move(result->analysis);
}

}  // namespace gpunoise::testing
