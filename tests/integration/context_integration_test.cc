// The context each record was made in, as root with real eBPF on both attach
// paths: it keeps each CPU's timestamps in order across drain passes cut at
// their record budget, and it marks wakeups from interrupts the way
// Perfetto's thread_state reads them (ftrace's common_flags). Neither path
// gets the kernel's own flags (a classic tracepoint's BPF program runs before
// perf fills the common fields), so the oracle is the workload: a UDP
// reader is woken from NET_RX, a futex waiter from task context, and
// Perfetto's trace processor must read them so.
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "common/strings.h"
#include "integration/support/net_load.h"
#include "integration/support/privileges.h"
#include "integration/support/trace_reader.h"
#include "integration/support/veth_pair.h"
#include "integration/support/workloads.h"

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;
using Side = VethPair::Side;

constexpr uint32_t kHardirq = 0x08, kSoftirq = 0x10;  // TRACE_FLAG_*

// A thread woken `rounds` times through a futex (a condition variable) by a
// thread in task context; returns the woken thread's tid.
pid_t FutexWakes(int rounds) {
  std::mutex m;
  std::condition_variable cv;
  int turn = 0;
  pid_t waiter_tid = 0;
  std::thread waiter([&] {
    waiter_tid = static_cast<pid_t>(syscall(SYS_gettid));
    std::unique_lock<std::mutex> lock(m);
    for (int i = 0; i < rounds; ++i) {
      cv.wait(lock, [&] { return turn % 2 == 1; });
      ++turn;
      cv.notify_one();
    }
  });
  {
    std::unique_lock<std::mutex> lock(m);
    for (int i = 0; i < rounds; ++i) {
      ++turn;
      cv.notify_one();
      cv.wait_for(lock, 100ms, [&] { return turn % 2 == 0; });
      lock.unlock();
      std::this_thread::sleep_for(1ms);  // so that the waiter blocks again
      lock.lock();
    }
  }
  waiter.join();
  return waiter_tid;
}

struct Recorded {
  std::string path;
  pid_t reader = 0, futex_waiter = 0;
};

// A UDP flood over veth (the receiver's NAPI runs in NET_RX on the sending
// CPU, which wakes the reader) and futex wakes, under `gpunoise record`.
// `mode`: the attach path ("auto", "tracepoint") with one ring reservation
// per record (record --no-batching); with "+batching" for per-CPU batches
// in the kernel (record --batching: batched switches, wakeups and irq
// records, direct packet records, all nested in each other); with
// "+default" for record's default (batched switches and wakeups inside
// direct softirq records whose entries wait for their exits).
// `stall_recorder`: the recorder is stopped for 500 ms and 400 ms during the
// flood, as a loaded machine stalls it: its rings fill behind it, and the
// drains that catch up are cut at their budget.
Recorded RecordWakeups(const std::string& mode, std::vector<std::string> extra, bool stall_recorder = false) {
  std::string attach = mode.substr(0, mode.find('+'));
  std::string batching = mode.size() > attach.size() ? mode.substr(attach.size()) : "";
  if (batching == "+batching")
    extra.push_back("--batching");
  else if (batching.empty())
    extra.push_back("--no-batching");
  else
    EXPECT_EQ(batching, "+default");
  Recorded r;
  std::string error;
  auto pair = VethPair::Create({}, &error);
  EXPECT_TRUE(pair) << error;
  if (!pair) return r;
  r.path = MakeTempDir() + "/ctx.pftrace";
  std::vector<std::string> args = {GpunoiseBinary(), "record", "-d", "30", "-o", r.path, "--attach", attach};
  args.insert(args.end(), extra.begin(), extra.end());
  ChildProcess rec(args);
  EXPECT_TRUE(rec.WaitForStderr("recording", 30s)) << rec.stderr_text();
  UdpFloodOptions flood;
  flood.duration = 1200ms;
  flood.sender_cpu = 1;
  flood.receiver_cpu = 0;
  std::thread staller;
  if (stall_recorder)
    staller = std::thread([pid = rec.pid()] {
      for (auto stall : {500ms, 400ms}) {
        std::this_thread::sleep_for(100ms);
        ::kill(pid, SIGSTOP);
        std::this_thread::sleep_for(stall);
        ::kill(pid, SIGCONT);
      }
    });
  UdpFloodResult f = RunUdpFlood(*pair, flood);
  if (staller.joinable()) staller.join();
  EXPECT_GT(f.received, 1000u);
  r.reader = f.receiver_tid;
  r.futex_waiter = FutexWakes(200);
  rec.Signal(SIGINT);
  EXPECT_EQ(rec.Wait(60s), 0) << rec.stderr_text();
  return r;
}

// RecordWakeups in `mode` with the default events (and `extra` options),
// and the trace it wrote (none, with the test failed, when there is no trace
// to read).
std::optional<perfetto::Trace> RecordAndReadWakeups(const std::string& mode, Recorded* r,
                                                    std::vector<std::string> extra = {}, bool stall_recorder = false) {
  *r = RecordWakeups(mode, std::move(extra), stall_recorder);
  if (r->path.empty()) return std::nullopt;
  std::string error;
  auto trace = ReadTrace(r->path, &error);
  EXPECT_TRUE(trace) << error;
  return trace;
}

struct WakeContexts {
  uint64_t total = 0, softirq = 0, hardirq = 0;
};

WakeContexts ContextsOfWakingsOf(const perfetto::Trace& trace, pid_t tid) {
  WakeContexts c;
  for (const auto& w : CompactWakings(trace)) {
    if (w.pid != tid) continue;
    ++c.total;
    c.softirq += (w.common_flags & kSoftirq) != 0;
    c.hardirq += (w.common_flags & kHardirq) != 0;
  }
  return c;
}

class ContextIntegration : public ::testing::TestWithParam<std::string> {};

TEST_P(ContextIntegration, AReaderWokenFromNetRxHasIrqContextAndAFutexWakeDoesNot) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  GN_REQUIRE_ROOT_MOUNT_POINT("ip netns exec");
  Recorded r;
  auto trace = RecordAndReadWakeups(GetParam(), &r);
  ASSERT_TRUE(trace);
  WakeContexts reader = ContextsOfWakingsOf(*trace, r.reader);
  WakeContexts futex = ContextsOfWakingsOf(*trace, r.futex_waiter);
  std::printf("%s: reader woken %lu times, %lu from softirq; futex waiter %lu times, %lu from irq\n",
              GetParam().c_str(), (unsigned long)reader.total, (unsigned long)reader.softirq,
              (unsigned long)futex.total, (unsigned long)(futex.softirq + futex.hardirq));
  ASSERT_GT(reader.total, 20u);
  // The datagrams arrive in NET_RX: nearly every wakeup of the reader is made
  // there (the first can come from its own socket setup).
  EXPECT_GE(reader.softirq * 10, reader.total * 9);
  ASSERT_GT(futex.total, 100u);
  EXPECT_EQ(futex.softirq + futex.hardirq, 0u) << "a futex wake is made in task context";
}

// Raises are folded into the entry that serves them and written back out as
// softirq_raise events right before it. The oracle is the kernel's order: a
// NET_RX raise always precedes the entry that serves it on the same CPU, by
// far less than a second, and on veth every NET_RX round follows a raise.
// Every softirq timed (--netrx-sample 0): in a sampled storm an untimed
// softirq's raise is not noted, and the oracle needs each round.
TEST_P(ContextIntegration, EachNetRxEntryIsPrecededByTheRaiseItServedOnTheSameCpu) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  GN_REQUIRE_ROOT_MOUNT_POINT("ip netns exec");
  Recorded r;
  auto trace = RecordAndReadWakeups(GetParam(), &r, {"--netrx-sample", "0"});
  ASSERT_TRUE(trace);
  constexpr uint32_t kNetRx = 3;
  uint64_t entries = 0, raises = 0, raises_before_their_entry = 0;
  for (const auto& p : trace->packet()) {
    if (!p.has_ftrace_events()) continue;
    const auto& events = p.ftrace_events().event();
    for (int i = 0; i < events.size(); ++i) {
      const auto& e = events[i];
      if (e.has_softirq_entry() && e.softirq_entry().vec() == kNetRx) ++entries;
      if (!e.has_softirq_raise() || e.softirq_raise().vec() != kNetRx) continue;
      ++raises;
      ASSERT_LT(i + 1, events.size()) << "a raise is written with its entry";
      const auto& entry = events[i + 1];
      ASSERT_TRUE(entry.has_softirq_entry());
      EXPECT_EQ(entry.softirq_entry().vec(), kNetRx);
      EXPECT_LE(e.timestamp(), entry.timestamp());
      raises_before_their_entry += entry.timestamp() - e.timestamp() < 1'000'000'000;
    }
  }
  std::printf("%s: %lu NET_RX entries, %lu with their raise\n", GetParam().c_str(), (unsigned long)entries,
              (unsigned long)raises);
  ASSERT_GT(entries, 1000u);
  EXPECT_EQ(raises_before_their_entry, raises);
  // Only a round raised before the recording began has no raise.
  EXPECT_GE(raises * 100, entries * 99);
}

// Softirq entries wait for their exit and are written out ahead of any
// record nested in them (bpf/irq.bpf.c). The oracle is the kernel's own
// nesting: on a CPU a softirq's entry is followed by its exit before the
// next entry, and the flood's reader is woken from NET_RX on the sending CPU
// (the context flag says so), so each such wakeup lies inside a NET_RX slice
// of its CPU. One written ahead of its entry would fall outside. Every
// softirq timed (--netrx-sample 0): a wakeup made inside an untimed softirq
// of a sampled storm has no slice around it. The recorder is stalled during
// the flood, so that drains cut at their budget read the storm (the CI
// failure of 50486a7: cut drains held the storm behind the CPU's only task
// record until the staging's bound wrote it whole, ahead of batched wakeups
// still in the kernel); rings of 64 MiB keep every record through the
// stalls, which the oracle needs.
TEST_P(ContextIntegration, SoftirqSlicesAlternatePerCpuAndHoldTheWakeupsMadeInThem) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  GN_REQUIRE_ROOT_MOUNT_POINT("ip netns exec");
  Recorded r;
  auto trace = RecordAndReadWakeups(GetParam(), &r, {"--netrx-sample", "0", "--buffer-size", "64M"},
                                   /*stall_recorder=*/true);
  ASSERT_TRUE(trace);
  constexpr int kNone = -1;
  constexpr int kNetRx = 3;
  struct CpuState {
    int open = kNone;
    bool seen_softirq = false;
    uint64_t last_softirq_ts = 0;  // its last entry or exit, and the bundle it came in
    size_t last_softirq_bundle = 0;
  };
  // One CPU's events of a bundle in time order: softirq entries (vector),
  // exits (-1 - vector), and wakeups made in softirq context (kWakeup).
  constexpr int kWakeup = 1000;
  std::map<uint32_t, CpuState> cpus;
  uint64_t slices = 0, entry_while_open = 0, unmatched_exits = 0, wrong_vector = 0;
  uint64_t wakeups_inside = 0, wakeups_outside = 0, bundles_after_loss = 0;
  // The first wakeups found outside, described for the failure message.
  std::string outside_described;
  size_t bundle = 0;
  for (const auto& p : trace->packet()) {
    if (!p.has_ftrace_events()) continue;
    const auto& b = p.ftrace_events();
    ++bundle;
    bundles_after_loss += b.lost_events();
    struct Item {
      uint64_t ts;
      int what;
      uint32_t flags;
    };
    std::vector<Item> seq;
    for (const auto& e : b.event()) {
      if (e.has_softirq_entry()) seq.push_back({e.timestamp(), static_cast<int>(e.softirq_entry().vec()), 0});
      else if (e.has_softirq_exit()) seq.push_back({e.timestamp(), -1 - static_cast<int>(e.softirq_exit().vec()), 0});
    }
    const auto& cs = b.compact_sched();
    uint64_t ts = 0;
    for (int i = 0; i < cs.waking_timestamp_size(); ++i) {
      ts += cs.waking_timestamp(i);
      // From softirq context, not from a hard irq that interrupted one (the
      // poll's timeout, when the flood stalls, inside any softirq).
      if (i < cs.waking_pid_size() && cs.waking_pid(i) == r.reader && i < cs.waking_common_flags_size() &&
          (cs.waking_common_flags(i) & (kSoftirq | kHardirq)) == kSoftirq)
        seq.push_back({ts, kWakeup, cs.waking_common_flags(i)});
    }
    std::stable_sort(seq.begin(), seq.end(), [](const Item& a, const Item& z) { return a.ts < z.ts; });
    CpuState& c = cpus[b.cpu()];
    for (const auto& [at, what, flags] : seq) {
      if (what == kWakeup) {
        if (c.open == kNetRx) {
          ++wakeups_inside;
        } else if (++wakeups_outside <= 5) {
          // A negative distance: a later softirq event was written before it.
          outside_described += "\n  CPU " + std::to_string(b.cpu()) + " at " + std::to_string(at) + " (bundle " +
                               std::to_string(bundle) + ", flags " + std::to_string(flags) + "): open vector " +
                               std::to_string(c.open) + "; its CPU's last softirq event " +
                               std::to_string(static_cast<int64_t>(at - c.last_softirq_ts)) + " ns before (bundle " +
                               std::to_string(c.last_softirq_bundle) + ")";
        }
        continue;
      }
      c.last_softirq_ts = at;
      c.last_softirq_bundle = bundle;
      if (what >= 0) {
        entry_while_open += c.open != kNone;
        c.open = what;
        c.seen_softirq = true;
      } else {
        // Only a CPU's first softirq may have begun before the recording.
        if (c.open == kNone) unmatched_exits += c.seen_softirq;
        else if (c.open != -1 - what) ++wrong_vector;
        else ++slices;
        c.open = kNone;
        c.seen_softirq = true;
      }
    }
  }
  std::printf("%s: %lu softirq slices; reader woken from softirq %lu times inside NET_RX, %lu outside; "
              "%lu bundles after a loss\n",
              GetParam().c_str(), (unsigned long)slices, (unsigned long)wakeups_inside,
              (unsigned long)wakeups_outside, (unsigned long)bundles_after_loss);
  ASSERT_EQ(bundles_after_loss, 0u) << "the oracle needs every record";
  EXPECT_GT(slices, 10000u);
  EXPECT_EQ(entry_while_open, 0u);
  EXPECT_EQ(unmatched_exits, 0u);
  EXPECT_EQ(wrong_vector, 0u);
  EXPECT_GT(wakeups_inside, 1000u);
  EXPECT_EQ(wakeups_outside, 0u) << "the first of them (vector -1: none open):" << outside_described;
}

// Records the flood in `mode` (RecordWakeups) with eight records per CPU per
// drain pass, and checks that every CPU's timestamps never decrease.
void ExpectTimestampsNonDecreasingAcrossTinyDrainPasses(const std::string& mode) {
  // Eight records per CPU per pass: nearly every drain is cut, often inside
  // a softirq nested in a task's record, under the flood's NET_RX.
  Recorded r = RecordWakeups(mode, {"--drain-batch", "8", "--events", "sched,irq,softirq,net-packets"});
  ASSERT_FALSE(r.path.empty());
  std::string error;
  auto trace = ReadTrace(r.path, &error);
  ASSERT_TRUE(trace) << error;
  bool within_bundle_sorted = false;
  auto per_cpu = PerCpuTimestamps(*trace, &within_bundle_sorted);
  EXPECT_TRUE(within_bundle_sorted);
  uint64_t events = 0;
  for (const auto& [cpu, ts] : per_cpu) {
    events += ts.size();
    for (size_t i = 1; i < ts.size(); ++i)
      if (ts[i] < ts[i - 1]) {
        ADD_FAILURE() << "CPU " << cpu << ": " << ts[i] << " after " << ts[i - 1] << " (event " << i << ")";
        break;
      }
  }
  EXPECT_GT(events, 10000u);
}

TEST_P(ContextIntegration, TimestampsNeverDecreasePerCpuAcrossTinyDrainPasses) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  GN_REQUIRE_ROOT_MOUNT_POINT("ip netns exec");
  ExpectTimestampsNonDecreasingAcrossTinyDrainPasses(GetParam());
}

// Batching on the classic tracepoints: batched sched and irq records behind
// direct packet records, every drain cut. Only this case of the suite, for
// CI time (about 3 s).
TEST(ContextIntegration, ClassicBatchingTimestampsNeverDecreasePerCpuAcrossTinyDrainPasses) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  GN_REQUIRE_ROOT_MOUNT_POINT("ip netns exec");
  ExpectTimestampsNonDecreasingAcrossTinyDrainPasses("tracepoint+batching");
}

INSTANTIATE_TEST_SUITE_P(BothAttachPaths, ContextIntegration,
                         ::testing::Values("auto", "tracepoint", "auto+batching", "auto+default"),
                         [](const auto& info) {
                           if (info.param == "auto+batching") return std::string("TpBtfBatching");
                           if (info.param == "auto+default") return std::string("TpBtfDefault");
                           return info.param == "auto" ? std::string("TpBtf") : std::string("Classic");
                         });

// How Perfetto's own thread_state classifies the reader's wakeups.
TEST(ContextIntegration, PerfettosThreadStateMarksTheReadersWakeupsAsIrqContext) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  std::string tp = FindTraceProcessor();
  if (tp.empty())
    GN_SKIP_NOT_PACKAGED(kNoTraceProcessor);
  GN_REQUIRE_ROOT_MOUNT_POINT("ip netns exec");
  Recorded r = RecordWakeups("auto", {});
  ASSERT_FALSE(r.path.empty());
  std::string dir = MakeTempDir();
  auto query = [&](pid_t tid) {
    std::ofstream(dir + "/q.sql") << "select irq_context, count(*) from thread_state join thread using (utid) "
                                     "where tid = " << tid << " and state = 'R' and irq_context is not null "
                                     "group by irq_context order by irq_context;";
    ChildProcess proc({tp, "-q", dir + "/q.sql", r.path});
    EXPECT_EQ(proc.Wait(120s), 0) << proc.stderr_text();
    std::map<long long, long long> rows;
    std::istringstream lines(proc.stdout_text());
    std::string line;
    while (std::getline(lines, line)) {
      auto parts = Split(line, ',');
      if (parts.size() != 2) continue;
      auto k = ParseInt64(parts[0]), v = ParseInt64(parts[1]);
      if (k && v) rows[*k] = *v;
    }
    return rows;
  };
  auto reader = query(r.reader);
  auto futex = query(r.futex_waiter);
  EXPECT_GT(reader[1], 20) << "wakeups from irq context";
  EXPECT_GE(reader[1] * 10, (reader[0] + reader[1]) * 9);
  EXPECT_GT(futex[0], 100);
  EXPECT_EQ(futex[1], 0);
}

}  // namespace
}  // namespace gpunoise::testing
