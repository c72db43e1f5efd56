// How traces are handed over: `record --group` and the monitor's
// dump-group make them 0640 of an operator's group (0600 otherwise), a
// second Ctrl-C while the programs detach ends the recording at once with a
// complete trace, and a flight-recorder dump, end to end, is private and
// loads in Perfetto's trace processor.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/strings.h"
#include "integration/support/metrics_scrape.h"
#include "integration/support/net_load.h"
#include "integration/support/privileges.h"
#include "integration/support/trace_reader.h"
#include "integration/support/veth_pair.h"
#include "integration/support/workloads.h"

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;

constexpr gid_t kGroup = 65534;  // nogroup: exists on Debian, and no one is in it

struct stat StatOf(const std::string& path) {
  struct stat st {};
  ::stat(path.c_str(), &st);
  return st;
}

// trace_processor_shell's one-number answer to `sql`, or -1.
long long TraceProcessorCount(const std::string& tp, const std::string& trace, const std::string& sql) {
  std::string dir = MakeTempDir();
  std::ofstream(dir + "/q.sql") << sql;
  ChildProcess proc({tp, "-q", dir + "/q.sql", trace});
  int rc = proc.Wait(120s);
  std::filesystem::remove_all(dir);
  if (rc != 0) return -1;
  std::istringstream lines(proc.stdout_text());
  std::string line, last;
  while (std::getline(lines, line))
    if (!Trim(line).empty()) last = std::string(Trim(line));
  auto v = ParseInt64(last);
  return v ? *v : -1;
}

TEST(TraceHandover, RecordGroupMakesTheTrace0640OfThatGroupAndTheDefaultIs0600) {
  GN_REQUIRE_REAL_EBPF();
  std::string dir = MakeTempDir();
  ChildProcess shared({GpunoiseBinary(), "record", "-d", "1", "--group", std::to_string(kGroup), "-o",
                       dir + "/shared.pftrace"});
  ASSERT_EQ(shared.Wait(60s), 0) << shared.stderr_text();
  struct stat st = StatOf(dir + "/shared.pftrace");
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(st.st_gid, kGroup);
  ChildProcess private_one({GpunoiseBinary(), "record", "-d", "1", "-o", dir + "/private.pftrace"});
  ASSERT_EQ(private_one.Wait(60s), 0) << private_one.stderr_text();
  EXPECT_EQ(StatOf(dir + "/private.pftrace").st_mode & 07777, 0600u);
  std::string error;
  EXPECT_TRUE(ReadTrace(dir + "/shared.pftrace", &error)) << error;
  // An unknown group is a usage error before anything is recorded.
  ChildProcess bad({GpunoiseBinary(), "record", "-d", "1", "--group", "gn-no-such-group", "-o", dir + "/x.pftrace"});
  EXPECT_EQ(bad.Wait(30s), 2);
  EXPECT_NE(bad.stderr_text().find("no group named 'gn-no-such-group'"), std::string::npos) << bad.stderr_text();
  EXPECT_FALSE(std::filesystem::exists(dir + "/x.pftrace"));
  std::filesystem::remove_all(dir);
}

// Classic tracepoints take the longest to detach (RCU grace periods): the
// second Ctrl-C lands while they do.
TEST(TraceHandover, ASecondCtrlCWhileDetachingEndsAtOnceWithACompleteTrace) {
  GN_REQUIRE_REAL_EBPF();
  std::string dir = MakeTempDir();
  std::string out = dir + "/t.pftrace";
  ChildProcess r({GpunoiseBinary(), "record", "--attach", "tracepoint", "-o", out});
  ASSERT_TRUE(r.WaitForStderr("until it ends", 60s)) << r.stderr_text();
  std::this_thread::sleep_for(1s);
  r.Signal(SIGINT);
  std::this_thread::sleep_for(150ms);  // the gate is closed, detaching has begun
  auto second = std::chrono::steady_clock::now();
  r.Signal(SIGINT);
  while (!std::filesystem::exists(out) && std::chrono::steady_clock::now() - second < 30s)
    std::this_thread::sleep_for(5ms);
  auto file_after = std::chrono::steady_clock::now() - second;
  EXPECT_EQ(r.Wait(60s), 0) << r.stderr_text();
  auto exit_after = std::chrono::steady_clock::now() - second;
  std::cerr << "second Ctrl-C: trace complete after "
            << std::chrono::duration_cast<std::chrono::milliseconds>(file_after).count() << " ms, exit after "
            << std::chrono::duration_cast<std::chrono::milliseconds>(exit_after).count() << " ms\n";
  EXPECT_NE(r.stderr_text().find("stop signal while detaching"), std::string::npos) << r.stderr_text();
  EXPECT_LT(file_after, 1s) << "the trace is finished without waiting for the detach";
  EXPECT_NE(r.stdout_text().find("gpunoise: recorded"), std::string::npos) << r.stdout_text();
  std::string error;
  auto trace = ReadTrace(out, &error);
  ASSERT_TRUE(trace) << error;
  EXPECT_GT(CompactSwitches(*trace).size(), 10u);
  EXPECT_EQ(StatOf(out).st_mode & 07777, 0600u);
  // No temporary file is left beside it.
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);
  std::string tp = FindTraceProcessor();
  if (!tp.empty()) {
    EXPECT_GT(TraceProcessorCount(tp, out, "select count(*) from sched_slice"), 10);
  }
  std::filesystem::remove_all(dir);
}

// A flood into a receiver that never reads: drops (SOCKET_RCVBUFF) fire the
// NIC-trouble detector, and the flight recorder writes its dump.
std::string DumpOnce(const std::vector<std::string>& extra, const std::string& dir, std::string* log) {
  std::string error;
  auto pair = VethPair::Create({}, &error);
  if (!pair) {
    ADD_FAILURE() << error;
    return "";
  }
  std::vector<std::string> args = {GpunoiseBinary(), "monitor", "--listen", "127.0.0.1:0", "--interval", "500ms",
                                   "--flight-recorder", "5s", "--dump-dir", dir, "--dump-interval", "10m"};
  args.insert(args.end(), extra.begin(), extra.end());
  ChildProcess m(args);
  if (!m.WaitForStderr("listening", 60s)) {
    ADD_FAILURE() << m.stderr_text();
    return "";
  }
  UdpFloodOptions flood;
  flood.duration = 3000ms;
  flood.receiver_reads = false;
  flood.receive_buffer_bytes = 4096;
  RunUdpFlood(*pair, flood);
  bool written = m.WaitForStderr("wrote flight-recorder dump", 60s);
  m.Signal(SIGTERM);
  int rc = m.Wait(30s);
  *log = m.stderr_text() + "(monitor exit " + std::to_string(rc) + ")";
  if (!written) return "";
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".pftrace") return e.path().string();
  return "";
}

TEST(TraceHandover, MonitorDumpsArePrivateOrOfTheDumpGroupAndLoadInTraceProcessor) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  std::string tp = FindTraceProcessor();
  std::string log;
  std::string private_dir = MakeTempDir() + "/dumps";
  std::string dump = DumpOnce({}, private_dir, &log);
  ASSERT_FALSE(dump.empty()) << log;
  EXPECT_EQ(StatOf(dump).st_mode & 07777, 0600u) << dump;
  std::string shared_dir = MakeTempDir() + "/dumps";
  std::string shared = DumpOnce({"--dump-group", std::to_string(kGroup)}, shared_dir, &log);
  ASSERT_FALSE(shared.empty()) << log;
  struct stat st = StatOf(shared);
  EXPECT_EQ(st.st_mode & 07777, 0640u) << shared;
  EXPECT_EQ(st.st_gid, kGroup);
  EXPECT_EQ(StatOf(shared_dir).st_gid, kGroup) << "the group can reach the directory too";
  std::string error;
  EXPECT_TRUE(ReadTrace(shared, &error)) << error;
  if (tp.empty()) GN_SKIP_NOT_PACKAGED(kNoTraceProcessor);
  // The dump is a trace Perfetto reads: scheduling and the finding's track.
  EXPECT_GT(TraceProcessorCount(tp, dump, "select count(*) from sched_slice"), 0);
  EXPECT_GT(TraceProcessorCount(tp, shared, "select count(*) from sched_slice"), 0);
  EXPECT_EQ(TraceProcessorCount(tp, shared, "select count(*) from slice join track on slice.track_id = track.id "
                                            "where track.name = 'gpunoise monitor findings'"),
            1)
      << "the finding is in the dump, on its own track";
  EXPECT_EQ(TraceProcessorCount(tp, shared, "select ifnull(sum(value), 0) from stats where severity = 'error' "
                                            "and value > 0"),
            0);
  std::filesystem::remove_all(std::filesystem::path(private_dir).parent_path());
  std::filesystem::remove_all(std::filesystem::path(shared_dir).parent_path());
}

}  // namespace
}  // namespace gpunoise::testing
