// `gpunoise merge` of traces of several machines, judged by Perfetto's trace
// processor: each machine is its own (its own CPUs), and all are on the first
// machine's time axis through their REALTIME snapshots. A second machine is
// emulated by rewriting a real recording (support/trace_rewrite.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

#include "common/clock.h"
#include "common/strings.h"
#include "integration/support/privileges.h"
#include "integration/support/trace_rewrite.h"
#include "integration/support/workloads.h"

namespace gpunoise::testing {
namespace {

// stderr without the warnings about unsynchronised clocks: a recording of a
// VM without NTP says its clock was not synchronised (adjtimex), and so do
// the copies made of it, which is true and not what these tests are about.
std::string OtherWarnings(const std::string& err) {
  std::string out;
  size_t pos = 0;
  while (pos < err.size()) {
    size_t end = err.find('\n', pos);
    if (end == std::string::npos) end = err.size();
    std::string line = err.substr(pos, end - pos + 1);
    if (line.find("was not synchronised") == std::string::npos) out += line;
    pos = end + 1;
  }
  return out;
}

using namespace std::chrono_literals;

constexpr int64_t kHourNs = 3600ll * 1'000'000'000;
constexpr int64_t kMicroNs = 1000;

// The rows of one statement, as "a,b" lines without the header.
std::vector<std::string> Rows(const std::string& tp, const std::string& trace, const std::string& sql) {
  std::string dir = MakeTempDir();
  std::ofstream(dir + "/q.sql") << sql;
  ChildProcess proc({tp, "-q", dir + "/q.sql", trace});
  EXPECT_EQ(proc.Wait(120s), 0) << proc.stderr_text();
  std::vector<std::string> rows;
  std::istringstream lines(proc.stdout_text());
  std::string line;
  bool header = true;
  while (std::getline(lines, line)) {
    if (header) {
      header = false;
      continue;
    }
    if (!line.empty()) rows.push_back(line);
  }
  return rows;
}

long long Single(const std::string& tp, const std::string& trace, const std::string& sql) {
  auto rows = Rows(tp, trace, sql);
  EXPECT_EQ(rows.size(), 1u) << sql;
  if (rows.empty()) return 0;
  return ParseInt64(Trim(rows[0])).value_or(0);
}

class MergeMachines : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    host_ = dir_ + "/node1.pftrace";
    ChildProcess rec({GpunoiseBinary(), "record", "-d", "1", "--events", "sched", "--machine-name",
                      "node1", "-o", host_});
    ASSERT_EQ(rec.Wait(30s), 0) << rec.stderr_text();
  }

  std::string Merge(const std::vector<std::string>& inputs, std::string* out_text, std::string* err_text) {
    std::string out = dir_ + "/merged.pftrace";
    std::vector<std::string> argv = {GpunoiseBinary(), "merge"};
    argv.insert(argv.end(), inputs.begin(), inputs.end());
    argv.insert(argv.end(), {"-o", out});
    ChildProcess merge(argv);
    EXPECT_EQ(merge.Wait(60s), 0) << merge.stderr_text();
    *out_text = merge.stdout_text();
    *err_text = merge.stderr_text();
    return out;
  }

  std::string dir_, host_;
};

TEST_F(MergeMachines, AMachineBootedThreeHoursEarlierWithA250usClockErrorLandsWithin250usOfTheHost) {
  GN_REQUIRE_REAL_EBPF();
  std::string tp = FindTraceProcessor();
  if (tp.empty()) GN_SKIP_NOT_PACKAGED(kNoTraceProcessor);
  std::string node2 = dir_ + "/node2.pftrace";
  ASSERT_TRUE(RewriteAsOtherMachine(host_, node2,
                                    {"node2", "6a1c0f2e-0000-4000-8000-00000000b002", 3 * kHourNs,
                                     250 * kMicroNs})
                  .ok());
  const std::string first_sched = "select min(ts) as t from sched";
  long long host_first = Single(tp, host_, first_sched);
  long long node2_first = Single(tp, node2, first_sched);
  // Unaligned, each on its own BOOTTIME: 3 h apart.
  EXPECT_NEAR(static_cast<double>(node2_first - host_first), 3.0 * kHourNs, 1e9);

  std::string out, err;
  std::string merged = Merge({host_, node2}, &out, &err);
  EXPECT_NE(out.find("of 2 machines"), std::string::npos) << out;
  EXPECT_EQ(OtherWarnings(err).find("warning"), std::string::npos) << err;

  EXPECT_EQ(Single(tp, merged, "select count(*) as n from machine"), 2);
  // Each machine has its own CPUs: the host's (machine_id NULL) and node2's.
  auto cpus = Rows(tp, merged, "select machine_id, count(*) as n from cpu group by machine_id");
  ASSERT_EQ(cpus.size(), 2u);
  long long per_machine = Single(tp, merged,
                                 "select count(distinct ifnull(c.machine_id, -1)) as n "
                                 "from sched s join cpu c using(ucpu)");
  EXPECT_EQ(per_machine, 2);
  // The last slice of each machine, not the first: the trace processor
  // (v53) hides every machine's ftrace data before the latest start of any
  // CPU of any machine (metadata ftrace_latest_data_start_ns is trace-wide),
  // so the host may lose a first slice that node2, 250 us later, keeps.
  auto lasts = Rows(tp, merged,
                    "select ifnull(c.machine_id, 0) as m, max(s.ts) as t from sched s "
                    "join cpu c using(ucpu) group by m order by m");
  ASSERT_EQ(lasts.size(), 2u);
  auto t = [](const std::string& row) { return ParseInt64(Trim(Split(row, ',')[1])).value_or(0); };
  // Node2's events are the host's, so after alignment only its clock error
  // is left between them.
  EXPECT_NEAR(static_cast<double>(t(lasts[1]) - t(lasts[0])), 250.0 * kMicroNs, 50.0 * kMicroNs)
      << lasts[0] << " / " << lasts[1];
}

TEST_F(MergeMachines, ThreeMachinesAreThreeInTheTraceProcessorEachWithItsOwnCpus) {
  GN_REQUIRE_REAL_EBPF();
  std::string tp = FindTraceProcessor();
  if (tp.empty()) GN_SKIP_NOT_PACKAGED(kNoTraceProcessor);
  std::string node2 = dir_ + "/node2.pftrace", node3 = dir_ + "/node3.pftrace";
  ASSERT_TRUE(RewriteAsOtherMachine(host_, node2,
                                    {"node2", "6a1c0f2e-0000-4000-8000-00000000b002", 3 * kHourNs,
                                     250 * kMicroNs})
                  .ok());
  ASSERT_TRUE(RewriteAsOtherMachine(host_, node3,
                                    {"node3", "6a1c0f2e-0000-4000-8000-00000000b003", -kHourNs / 2,
                                     -100 * kMicroNs})
                  .ok());
  std::string out, err;
  std::string merged = Merge({host_, node2, node3}, &out, &err);
  EXPECT_NE(out.find("of 3 machines"), std::string::npos) << out;
  EXPECT_EQ(Single(tp, merged, "select count(*) as n from machine"), 3);
  auto cpus = Rows(tp, merged, "select machine_id, count(*) as n from cpu group by machine_id");
  EXPECT_EQ(cpus.size(), 3u);
  // The last slice of each machine, not the first: the trace processor
  // (v53) hides every machine's ftrace data before the latest start of any
  // CPU of any machine (metadata ftrace_latest_data_start_ns is trace-wide),
  // so the host may lose a first slice that node2, 250 us later, keeps.
  auto lasts = Rows(tp, merged,
                    "select ifnull(c.machine_id, 0) as m, max(s.ts) as t from sched s "
                    "join cpu c using(ucpu) group by m order by m");
  ASSERT_EQ(lasts.size(), 3u);
  auto t = [](const std::string& row) { return ParseInt64(Trim(Split(row, ',')[1])).value_or(0); };
  EXPECT_NEAR(static_cast<double>(t(lasts[1]) - t(lasts[0])), 250.0 * kMicroNs, 50.0 * kMicroNs)
      << lasts[0] << " / " << lasts[1] << " / " << lasts[2];
  EXPECT_NEAR(static_cast<double>(t(lasts[2]) - t(lasts[0])), -100.0 * kMicroNs, 50.0 * kMicroNs)
      << lasts[0] << " / " << lasts[1] << " / " << lasts[2];
}

TEST_F(MergeMachines, APreviousBootRecordedBeforeTheHostBootedIsAlignedWhenGivenFirst) {
  GN_REQUIRE_REAL_EBPF();
  std::string tp = FindTraceProcessor();
  if (tp.empty()) GN_SKIP_NOT_PACKAGED(kNoTraceProcessor);
  // The same host's previous boot: recorded an hour of wall time before
  // this boot began (however long this machine has been up), so on this
  // boot's BOOTTIME it would be negative.
  const int64_t back = static_cast<int64_t>(BoottimeNs()) + kHourNs;
  std::string previous = dir_ + "/previous-boot.pftrace";
  ASSERT_TRUE(RewriteAsOtherMachine(host_, previous,
                                    {"node1", "6a1c0f2e-0000-4000-8000-00000000b0f1", 0, -back})
                  .ok());
  auto t = [](const std::string& row) { return ParseInt64(Trim(Split(row, ',')[1])).value_or(0); };
  const std::string last_per_machine =
      "select ifnull(c.machine_id, 0) as m, max(s.ts) as t from sched s "
      "join cpu c using(ucpu) group by m order by m";
  {
    // Current boot first: the previous one cannot go on its axis; said so.
    std::string out, err;
    std::string merged = Merge({host_, previous}, &out, &err);
    EXPECT_NE(out.find("of 2 machines"), std::string::npos) << out;
    EXPECT_NE(err.find(previous + " was recorded before"), std::string::npos) << err;
    auto lasts = Rows(tp, merged, last_per_machine);
    ASSERT_EQ(lasts.size(), 2u);
    // Unaligned: both on their own BOOTTIME, which here is the same.
    EXPECT_EQ(t(lasts[1]), t(lasts[0]));
  }
  // Previous boot first: the current one lands `back` after it. Read from
  // ftrace_event: the trace processor leaves out of `sched` every machine's
  // data before the latest machine's start (see the first test), here all
  // of the previous boot's.
  std::string out, err;
  std::string merged = Merge({previous, host_}, &out, &err);
  EXPECT_EQ(OtherWarnings(err).find("warning"), std::string::npos) << err;
  // Two boots of one host, numbered by when they booted.
  EXPECT_NE(out.find("machine 1 (node1 (boot 2)): BOOTTIME"), std::string::npos) << out;
  EXPECT_NE(out.find("from machine 0 (node1 (boot 1))"), std::string::npos) << out;
  auto lasts = Rows(tp, merged,
                    "select ifnull(c.machine_id, 0) as m, max(f.ts) as t from ftrace_event f "
                    "join cpu c using(ucpu) group by m order by m");
  ASSERT_EQ(lasts.size(), 2u);
  EXPECT_NEAR(static_cast<double>(t(lasts[1]) - t(lasts[0])), static_cast<double>(back), 50.0 * kMicroNs)
      << lasts[0] << " / " << lasts[1];
}

TEST_F(MergeMachines, ATraceWithoutARealtimeSnapshotIsMergedWithAWarningNamingIt) {
  GN_REQUIRE_REAL_EBPF();
  std::string lost = dir_ + "/no-clocks.pftrace";
  OtherMachine m{"node3", "6a1c0f2e-0000-4000-8000-00000000b003", 0, 0};
  m.drop_clock_snapshots = true;
  ASSERT_TRUE(RewriteAsOtherMachine(host_, lost, m).ok());
  std::string out, err;
  Merge({host_, lost}, &out, &err);
  EXPECT_NE(out.find("of 2 machines"), std::string::npos) << out;
  EXPECT_NE(err.find("warning"), std::string::npos) << err;
  EXPECT_NE(err.find(lost), std::string::npos) << err;
  std::string others = OtherWarnings(err);
  EXPECT_EQ(std::count(others.begin(), others.end(), '\n'), 1) << err;
}

}  // namespace
}  // namespace gpunoise::testing
