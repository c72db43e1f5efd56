// The printk:console collector on its own, for real: every line of a burst
// written to /dev/kmsg reaches it with the writer's tid, and a burst larger
// than its log between two drains is counted as lost, never silently. Also
// measures what the program costs per message (BPF_ENABLE_STATS:
// run_time_ns / run_cnt), printed for docs/record.md.
#include <gtest/gtest.h>
#include <bpf/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include "collect/console_collector.h"
#include "collect/system_checks.h"
#include "collect/tracepoint_catalog.h"
#include "common/files.h"
#include "common/unique_fd.h"
#include "integration/support/privileges.h"

extern "C" {
#include "bpf/console.h"
}

namespace gpunoise::testing {
namespace {

// /dev/kmsg rate-limits writers (printk_devkmsg=ratelimit: 10 lines per
// 5 s); a burst needs it "on" for a moment, restored afterwards.
class DevkmsgUnlimited {
 public:
  DevkmsgUnlimited() {
    auto v = ReadFileToString("/proc/sys/kernel/printk_devkmsg");
    if (v.ok()) saved_ = *v;
    std::ofstream("/proc/sys/kernel/printk_devkmsg") << "on\n";
  }
  ~DevkmsgUnlimited() {
    if (!saved_.empty()) std::ofstream("/proc/sys/kernel/printk_devkmsg") << saved_;
  }

 private:
  std::string saved_;
};

size_t Ours(const std::vector<model::ConsoleRecord>& records, const std::string& prefix, int32_t tid) {
  size_t n = 0;
  for (const auto& r : records)
    if (r.text.rfind(prefix, 0) == 0) {
      EXPECT_EQ(r.tid, tid);
      ++n;
    }
  return n;
}

TEST(ConsoleCollectorIntegration, EveryLineOfABurstArrivesAndAnOverflowIsCounted) {
  GN_REQUIRE_REAL_EBPF();
  auto tracefs = collect::EnsureTracefs();
  ASSERT_TRUE(tracefs.ok()) << tracefs.error().message;
  auto catalog = collect::TracepointCatalog::Open(*tracefs);
  ASSERT_TRUE(catalog.ok()) << catalog.error().message;
  collect::CollectorContext context;
  context.catalog = &*catalog;
  collect::ConsoleCollector console;
  // Statistics on only while this fd is open (nothing to restore).
  UniqueFd stats(bpf_enable_stats(BPF_STATS_RUN_TIME));
  console.Start(context);
  ASSERT_NE(console.report().state, model::CollectorState::kDisabled) << console.report().reason;
  DevkmsgUnlimited unlimited;
  int32_t tid = static_cast<int32_t>(::syscall(SYS_gettid));
  std::string prefix = "gncon" + std::to_string(::getpid()) + " ";
  std::ofstream kmsg("/dev/kmsg");
  ASSERT_TRUE(kmsg.good());

  // 2000 lines (level info: not printed on the serial console), drained
  // every 500: all of them, none lost.
  constexpr int kLines = 2000;
  std::vector<model::ConsoleRecord> got;
  uint64_t runs0 = console.ProgramRunCount(), ns0 = console.ProgramRunTimeNs();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kLines; ++i) {
    kmsg << "<6>" << prefix << i << " of a burst\n" << std::flush;
    if (i % 500 == 499) console.Drain(&got);
  }
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  console.Drain(&got);
  EXPECT_EQ(Ours(got, prefix, tid), static_cast<size_t>(kLines));
  EXPECT_EQ(console.lost(), 0u);
  uint64_t runs = console.ProgramRunCount() - runs0, ns = console.ProgramRunTimeNs() - ns0;
  EXPECT_GE(runs, static_cast<uint64_t>(kLines));
  if (stats.valid() && runs)
    std::printf("printk:console program: %llu runs, %.0f ns per run (%.0f lines/s written)\n",
                static_cast<unsigned long long>(runs), static_cast<double>(ns) / static_cast<double>(runs),
                kLines / wall);

  // A burst of more than the log holds, read once: what was overwritten is
  // counted, and what is left is the newest.
  got.clear();
  constexpr int kBurst = GN_CON_LOG + 1000;
  for (int i = 0; i < kBurst; ++i) kmsg << "<6>" << prefix << "overflow " << i << "\n" << std::flush;
  console.Drain(&got);
  size_t ours = Ours(got, prefix, tid);
  EXPECT_GE(console.lost(), 1000u);
  EXPECT_LE(ours, static_cast<size_t>(GN_CON_LOG));
  // Everything logged during the burst (ours and any other printk) was
  // either read or counted as lost.
  EXPECT_GE(got.size() + console.lost(), static_cast<size_t>(kBurst));
  ASSERT_FALSE(got.empty());
  EXPECT_NE(got.back().text.find("overflow " + std::to_string(kBurst - 1)), std::string::npos) << got.back().text;
}

}  // namespace
}  // namespace gpunoise::testing
