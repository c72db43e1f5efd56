// numa_locality on a real recording as root (issue 19). This VM has one NUMA
// node and its devices report numa_node -1, so the finding cannot be made
// here: a quiet recording gives none and the report says the kind is not
// measurable, from the topology the recorder wrote into the trace (a trace
// without it would say so instead). The two-node case is covered by the
// synthetic tests (tests/analyze/numa_locality_detector_test.cc) and the
// sysfs parser's fake tree (tests/collect/numa_topology_test.cc).
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "common/strings.h"
#include "integration/support/privileges.h"
#include "integration/support/workloads.h"
#include "report/report_session.h"

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;

class NumaLocalityRecording : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (::geteuid() != 0) return;
    dir_ = MakeTempDir();
    trace_ = dir_ + "/numa.pftrace";
    ChildProcess rec({GpunoiseBinary(), "record", "-d", "2", "-o", trace_});
    if (!rec.WaitForStderr("recording", 20s)) return;
    // A busy focus thread for 800 ms, bounded.
    std::thread t([] {
      pthread_setname_np(pthread_self(), "gn-numa-focus");
      tid_ = static_cast<pid_t>(::syscall(SYS_gettid));
      auto end = std::chrono::steady_clock::now() + 800ms;
      volatile uint64_t x = 0;
      while (std::chrono::steady_clock::now() < end) x = x + 1;
    });
    t.join();
    recorded_ = rec.Wait(60s) == 0;
    if (!recorded_) stderr_ = rec.stderr_text();
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }

  static inline std::string dir_, trace_, stderr_;
  static inline pid_t tid_ = 0;
  static inline bool recorded_ = false;
};

bool OneNodeHere() {
  size_t nodes = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/sys/devices/system/node", ec))
    if (e.path().filename().string().rfind("node", 0) == 0 &&
        std::isdigit(static_cast<unsigned char>(e.path().filename().string()[4])))
      ++nodes;
  return nodes == 1;
}

TEST_F(NumaLocalityRecording, AQuietRecordingOnOneNodeHasNoFindingAndSaysNotMeasurable) {
  GN_REQUIRE_REAL_EBPF();
  if (!OneNodeHere()) GTEST_SKIP() << "written for a one-node machine (this VM)";
  ASSERT_TRUE(recorded_) << stderr_;
  report::ReportOptions options;
  options.trace_path = trace_;
  options.analysis.focus = {std::to_string(tid_)};
  auto result = report::RunReport(options);
  ASSERT_TRUE(result.ok()) << result.error().message;
  for (const auto& f : result->analysis.findings) EXPECT_NE(f.detector, "numa_locality") << f.title;
  // The cpustate kinds may be listed too; numa_locality once.
  std::vector<std::string> numa_reasons;
  for (const auto& n : result->analysis.not_measurable)
    if (n.kind == "numa_locality") numa_reasons.push_back(n.reason);
  // The topology came back from the trace: one node, not "no topology".
  EXPECT_EQ(numa_reasons, std::vector<std::string>{"one NUMA node with CPUs"}) << result->output;
  EXPECT_NE(result->output.find("NOT MEASURABLE ON THIS NODE\n"), std::string::npos) << result->output;
  EXPECT_NE(result->output.find("\n  numa_locality: one NUMA node with CPUs\n"),
            std::string::npos)
      << result->output;

  options.json = true;
  auto json = report::RunReport(options);
  ASSERT_TRUE(json.ok()) << json.error().message;
  std::string json_path = dir_ + "/report.json";
  std::ofstream(json_path) << json->output;
  // Python's json module as an independent parser (docs/report.md's schema).
  ChildProcess py({"python3", "-c",
                   "import json,sys; r=json.load(open(sys.argv[1])); "
                   "n=[x for x in r['not_measurable'] if x['kind']=='numa_locality']; "
                   "assert n==[{'kind':'numa_locality','reason':'one NUMA node with CPUs'}], r['not_measurable']; "
                   "assert all(f['detector']!='numa_locality' for f in r['findings'])",
                   json_path});
  EXPECT_EQ(py.Wait(30s), 0) << py.stderr_text();
}

// Perfetto's trace processor loads the new instants with their typed args
// and reports no import error for them.
TEST_F(NumaLocalityRecording, TheTopologyLoadsInTheTraceProcessorWithoutErrors) {
  GN_REQUIRE_REAL_EBPF();
  std::string tp = FindTraceProcessor();
  if (tp.empty()) GN_SKIP_NOT_PACKAGED(kNoTraceProcessor);
  ASSERT_TRUE(recorded_) << stderr_;
  std::ofstream(dir_ + "/q.sql")
      << "select 'nodes' as k, count(*) as v from slice where name = 'numa node' "
         "union all select 'node_args', count(*) from slice join args using(arg_set_id) "
         "  where slice.name = 'numa node' and args.key in ('debug.node', 'debug.cpus') "
         "union all select 'irq_cpus', count(*) from slice where name = 'nic irq cpus' "
         "union all select 'errors', ifnull(sum(value), 0) from stats "
         "  where severity in ('error', 'data_loss') and value > 0 "
         "  and name not in ('ftrace_cpu_dropped_events_delta', 'ftrace_cpu_overrun_delta', "
         "                   'ftrace_cpu_has_data_loss');";
  ChildProcess proc({tp, "-q", dir_ + "/q.sql", trace_});
  ASSERT_EQ(proc.Wait(120s), 0) << proc.stderr_text();
  std::map<std::string, long long> rows;
  std::istringstream lines(proc.stdout_text());
  std::string line;
  while (std::getline(lines, line)) {
    auto parts = Split(line, ',');
    if (parts.size() != 2) continue;
    std::string name(Trim(parts[0]));
    if (name.size() >= 2 && name.front() == '"') name = name.substr(1, name.size() - 2);
    if (auto v = ParseInt64(parts[1])) rows[name] = *v;
  }
  size_t nodes = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/sys/devices/system/node", ec)) {
    std::string n = e.path().filename().string();
    if (n.size() > 4 && n.rfind("node", 0) == 0 && std::isdigit(static_cast<unsigned char>(n[4]))) ++nodes;
  }
  EXPECT_EQ(rows["nodes"], static_cast<long long>(nodes)) << proc.stdout_text();
  EXPECT_EQ(rows["node_args"], 2 * static_cast<long long>(nodes)) << proc.stdout_text();
  // Start and end for each NIC IRQ (eth0's virtio vectors here).
  EXPECT_EQ(rows["irq_cpus"] % 2, 0) << proc.stdout_text();
  EXPECT_EQ(rows["errors"], 0) << proc.stdout_text();
}

}  // namespace
}  // namespace gpunoise::testing
