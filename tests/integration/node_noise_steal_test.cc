// Node noise beyond run-queue waits, on real workloads as root (issue 19):
// each test creates what it needs (cgroups with a gn-taxo- prefix), bounds
// its load in time, removes everything, and checks the finding against the
// kernel's own accounting of the same threads.
// This file: steal time.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <vector>
#include <chrono>
#include <initializer_list>
#include <sstream>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "integration/support/cpu_cgroup.h"
#include "integration/support/cpuset_guard.h"
#include "common/clock.h"
#include "export/perfetto/node_tracks.h"
#include "export/perfetto/protos/perfetto_trace_subset.pb.h"
#include "export/perfetto/track_event_writer.h"
#include "integration/support/privileges.h"
#include "integration/support/workloads.h"
#include "report/report_session.h"
#include "integration/support/node_noise.h"
#include "export/perfetto/parsed_packet.h"

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;

// Appends to a copy of `in` the steal counters the recorder's own writer
// (NodeTrackWriter) makes of /proc/stat snapshots in which CPU `cpu` lost
// `share` of every 100 ms from `from` to `to`: a real recording replayed
// with an anomaly this VM cannot make on demand.
std::string InjectSteal(const std::string& in, const std::string& out, uint32_t cpu, double share, uint64_t from,
                        uint64_t to) {
  std::filesystem::copy_file(in, out, std::filesystem::copy_options::overwrite_existing);
  std::string bytes;
  perfetto::TrackEventWriter writer(0x5713a1, 0x1234);
  perfetto::NodeTrackWriter node(writer, [&](const perfetto::TracePacketBuilder& p) {
    std::string body = perfetto::Parsed(p).SerializeAsString();
    bytes.push_back(0x0a);  // Trace.packet, length-delimited
    for (uint64_t n = body.size(); ; n >>= 7) {
      bytes.push_back(static_cast<char>((n & 0x7f) | (n >= 0x80 ? 0x80 : 0)));
      if (n < 0x80) break;
    }
    bytes += body;
    return OkStatus();
  });
  model::NodeSnapshot base;
  base.ts = from;
  base.steal_ns = {{0, 0}, {1, 0}};
  model::NodeSnapshot prev = base;
  for (uint64_t ts = from + 100'000'000; ts <= to; ts += 100'000'000) {
    model::NodeSnapshot now = prev;
    now.ts = ts;
    now.steal_ns[cpu] += static_cast<uint64_t>(share * 100e6);
    EXPECT_TRUE(node.WriteSample(base, prev, now).ok());
    prev = now;
  }
  EXPECT_TRUE(node.Close(prev.ts).ok());
  std::ofstream(out, std::ios::app | std::ios::binary) << bytes;
  return out;
}

TEST(Steal, AReplayedRecordingWithInjectedStealNamesItAndANearMissDoesNot) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  TempDir dir;
  std::string base = dir.path() + "/base.pftrace";
  pid_t focus = 0;
  uint64_t from = 0, to = 0;
  {
    // Without the node group: the only steal in the trace is the injected.
    ChildProcess rec({GpunoiseBinary(), "record", "-d", "3", "-e", "sched,irq,softirq", "-o", base});
    ASSERT_TRUE(rec.WaitForStderr("recording", 20s)) << rec.stderr_text();
    from = BoottimeNs();
    std::thread t([&] {
      pthread_setname_np(pthread_self(), "gn-stolen");
      Pin({1});
      focus = Gettid();
      Spin(1500ms);
    });
    t.join();
    to = BoottimeNs();
    ASSERT_EQ(rec.Wait(60s), 0) << rec.stderr_text();
  }
  std::string text;
  analyze::Analysis plain = ReportOn(base, focus, &text);
  EXPECT_EQ(FindDetector(plain, "steal"), nullptr) << text;
  for (const auto& c : plain.cpus) EXPECT_FALSE(c.steal_recorded);

  std::string stolen = InjectSteal(base, dir.path() + "/stolen.pftrace", 1, 0.2, from, to);
  analyze::Analysis a = ReportOn(stolen, focus, &text);
  const analyze::Finding* f = FindDetector(a, "steal");
  ASSERT_NE(f, nullptr) << text;
  ASSERT_EQ(a.focus_threads.size(), 1u);
  // 20% of the time the thread ran on CPU 1 inside the injected span.
  double expected = 0.2 * static_cast<double>(a.focus_threads[0].run_ns);
  std::printf("steal: injected 20%% of CPU 1; finding %.1f ms of %.1f ms running\n%s\n", f->cost_ns / 1e6,
              a.focus_threads[0].run_ns / 1e6, f->title.c_str());
  EXPECT_NEAR(static_cast<double>(f->cost_ns), expected, 0.05 * expected) << text;
  EXPECT_EQ(f->cpus, std::vector<uint32_t>{1});

  // A near miss: 0.5% of CPU 1 (about 7 ms of 1.5 s) stays under both
  // thresholds.
  std::string slight = InjectSteal(base, dir.path() + "/slight.pftrace", 1, 0.005, from, to);
  analyze::Analysis b = ReportOn(slight, focus, &text);
  EXPECT_EQ(FindDetector(b, "steal"), nullptr) << text;
  for (const auto& c : b.cpus) {
    if (c.cpu == 1) {
      EXPECT_TRUE(c.steal_recorded && c.steal_ns > 0) << "the column shows it all the same";
    }
  }
}

}  // namespace
}  // namespace gpunoise::testing
