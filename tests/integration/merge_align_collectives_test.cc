// `gpunoise merge --align collectives`, judged by Perfetto's trace
// processor: a real recording and a copy of it made to look like another
// machine (BOOTTIME 3 h ahead, REALTIME 250 us fast: an NTP error), each with
// a GPU fragment of all-reduces whose ends are simultaneous on the true wall
// clock up to +-30 us of jitter. REALTIME alone leaves the copy's events
// 250 us off the host's; the collectives bring them within 20 us.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <random>
#include <sstream>

#include "common/strings.h"
#include "merge/machine_alignment.h"
#include "export/perfetto/protos/perfetto_trace_subset.pb.h"
#include "export/perfetto/trace_file_writer.h"
#include "integration/support/privileges.h"
#include "integration/support/trace_rewrite.h"
#include "integration/support/workloads.h"

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;

constexpr int64_t kHourNs = 3600ll * 1'000'000'000;

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
    if (!header && !line.empty()) rows.push_back(line);
    header = false;
  }
  return rows;
}

// A GPU fragment as the CUPTI library lays its tracks out (GPU group,
// "<process> <pid>", stream track) holding one all-reduce kernel per 4 ms,
// ending at `ends[k]` (this machine's BOOTTIME).
std::string WriteFragment(const std::string& path, const std::vector<int64_t>& ends) {
  auto writer = perfetto::TraceFileWriter::Create(path, 0, perfetto::TraceCompression::kNone);
  EXPECT_TRUE(writer.ok());
  auto track = [&](uint64_t uuid, uint64_t parent, const char* name) {
    perfetto::TracePacket p;
    p.set_trusted_packet_sequence_id(4242);
    auto* d = p.mutable_track_descriptor();
    d->set_uuid(uuid);
    if (parent) d->set_parent_uuid(parent);
    d->set_name(name);
    EXPECT_TRUE(writer->WritePacket(p).ok());
  };
  track(10, 0, "GPU 0 (H200)");
  track(11, 10, "python3 500");
  track(12, 11, "GPU 0 (H200) stream 13");
  for (int64_t end : ends) {
    for (int phase = 0; phase < 2; ++phase) {
      perfetto::TracePacket p;
      p.set_trusted_packet_sequence_id(4242);
      p.set_timestamp(static_cast<uint64_t>(phase == 0 ? end - 1'000'000 : end));
      auto* e = p.mutable_track_event();
      e->set_track_uuid(12);
      e->set_type(phase == 0 ? perfetto::TrackEvent::TYPE_SLICE_BEGIN : perfetto::TrackEvent::TYPE_SLICE_END);
      if (phase == 0) e->set_name("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
      EXPECT_TRUE(writer->WritePacket(p).ok());
    }
  }
  EXPECT_TRUE(writer->Commit().ok());
  return path;
}

TEST(MergeAlignCollectives, CollectivesBringAMachineWithA250usNtpErrorWithin20us) {
  GN_REQUIRE_REAL_EBPF();
  std::string tp = FindTraceProcessor();
  if (tp.empty()) GN_SKIP_NOT_PACKAGED(kNoTraceProcessor);
  std::string dir = MakeTempDir();
  std::string host = dir + "/node1.pftrace", node2 = dir + "/node2.pftrace";
  {
    ChildProcess rec({GpunoiseBinary(), "record", "-d", "1", "--events", "sched", "--machine-name", "node1", "-o",
                      host});
    ASSERT_EQ(rec.Wait(30s), 0) << rec.stderr_text();
  }
  ASSERT_TRUE(
      RewriteAsOtherMachine(host, node2, {"node2", "6a1c0f2e-0000-4000-8000-00000000c002", 3 * kHourNs, 250'000}).ok());
  auto clocks = perfetto::ScanInputMachine(host);
  ASSERT_TRUE(clocks.ok() && clocks->clocks);
  // 200 all-reduces across the recording, ending together on the true clock.
  std::mt19937 rng(11);
  std::uniform_int_distribution<int64_t> jitter(-30'000, 30'000);
  std::vector<int64_t> host_ends, node2_ends;
  for (int k = 0; k < 200; ++k) {
    int64_t end = clocks->clocks->boottime + 50'000'000 + k * 4'000'000;
    host_ends.push_back(end + jitter(rng));
    node2_ends.push_back(end + 3 * kHourNs + jitter(rng));  // the copy's BOOTTIME is 3 h ahead
  }
  std::string host_gpu = WriteFragment(dir + "/node1-gpu.pftrace", host_ends);
  std::string node2_gpu = WriteFragment(dir + "/node2-gpu.pftrace", node2_ends);

  const std::string lasts_sql =
      "select ifnull(c.machine_id, 0) as m, max(s.ts) as t from sched s join cpu c using(ucpu) group by m order by m";
  auto offset = [&](const std::string& align, std::string* said) {
    std::string merged = dir + "/merged-" + align + ".pftrace";
    ChildProcess merge({GpunoiseBinary(), "merge", host, host_gpu, node2, node2_gpu, "--align", align, "-o", merged});
    EXPECT_EQ(merge.Wait(60s), 0) << merge.stderr_text();
    *said = merge.stdout_text() + merge.stderr_text();
    auto lasts = Rows(tp, merged, lasts_sql);
    EXPECT_EQ(lasts.size(), 2u) << *said;
    if (lasts.size() != 2) return int64_t{0};
    auto t = [](const std::string& row) { return ParseInt64(Trim(Split(row, ',')[1])).value_or(0); };
    // Node2's events are the host's: what is left between them is the error.
    return t(lasts[1]) - t(lasts[0]);
  };
  std::string said;
  int64_t by_realtime = offset("realtime", &said);
  EXPECT_NEAR(static_cast<double>(by_realtime), 250'000.0, 50'000.0) << said;
  int64_t by_collectives = offset("collectives", &said);
  std::printf("node2 vs host: REALTIME %+.1f us, collectives %+.1f us\n%s", by_realtime / 1e3,
              by_collectives / 1e3, said.c_str());
  EXPECT_LT(std::llabs(by_collectives), 20'000) << said;
  EXPECT_NE(said.find("collectives correct its REALTIME by"), std::string::npos) << said;
  EXPECT_NE(said.find("by REALTIME and collectives"), std::string::npos) << said;
  // 3 machines, each with its own CPUs, in the trace processor.
  std::string node3 = dir + "/node3.pftrace", all = dir + "/three.pftrace";
  ASSERT_TRUE(
      RewriteAsOtherMachine(host, node3, {"node3", "6a1c0f2e-0000-4000-8000-00000000c003", 2 * kHourNs, -100'000}).ok());
  {
    ChildProcess merge({GpunoiseBinary(), "merge", host, host_gpu, node2, node2_gpu, node3, "--align", "collectives",
                        "-o", all});
    ASSERT_EQ(merge.Wait(60s), 0) << merge.stderr_text();
    std::string text = merge.stderr_text();
    EXPECT_NE(text.find("machine 2 (node3) could not be aligned by collectives"), std::string::npos) << text;
    EXPECT_NE(text.find("it keeps REALTIME"), std::string::npos) << text;
  }
  auto cpus = Rows(tp, all, "select ifnull(machine_id, 0) as m, count(*) as n from cpu group by m order by m");
  ASSERT_EQ(cpus.size(), 3u);
  EXPECT_EQ(Rows(tp, all, "select count(*) from machine").front(), "3");
}

}  // namespace
}  // namespace gpunoise::testing
