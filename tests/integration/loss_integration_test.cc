// Loss is counted exactly, and filters keep what they promise: `gpunoise
// record` against an independent eBPF count of the same tracepoints
// (sched_oracle.bpf.c), as root, on both attach paths.
//
// The process under test blocks until the recording has started and exits
// before it ends, so the recording's edges cut none of its events: per CPU,
// its switches and wakings in the trace plus those counted as lost must equal
// the oracle's count exactly.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <regex>
#include <set>
#include <thread>

#include "common/cgroup_mount.h"
#include "integration/support/privileges.h"
#include "integration/support/sched_oracle.h"
#include "integration/support/trace_reader.h"
#include "integration/support/workloads.h"

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;

constexpr int kThreads = 3;

// What the target's threads say of themselves (shared memory).
struct ThreadReport {
  std::atomic<int32_t> tid{0};
  // getrusage(RUSAGE_THREAD): nvcsw + nivcsw from the thread's creation (the
  // recording already ran) to the end of its loop. Counting from the loop's
  // start instead left out the preemptions around sched_setaffinity on a
  // loaded CI machine (CI once saw 5 more switch-ins than that).
  std::atomic<uint64_t> switches{0};
};
struct TargetShared {
  ThreadReport threads[kThreads];
};

uint64_t ThreadSwitches() {
  rusage ru{};
  getrusage(RUSAGE_THREAD, &ru);
  return static_cast<uint64_t>(ru.ru_nvcsw + ru.ru_nivcsw);
}

// A process that waits for a byte on a pipe, then starts kThreads threads
// that pass a token round a ring of pipes for `run_for`, on `cpus`
// (threads created during the recording), and exits.
class TargetProcess {
 public:
  TargetProcess(std::vector<int> cpus, std::chrono::milliseconds run_for, std::string cgroup = "") {
    shared_ = static_cast<TargetShared*>(
        mmap(nullptr, sizeof(TargetShared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    new (shared_) TargetShared();
    int go[2], ready[2];
    if (pipe(go) != 0 || pipe(ready) != 0) throw std::runtime_error("pipe");
    pid_ = fork();
    if (pid_ == 0) {
      close(go[1]);
      close(ready[0]);
      if (!cgroup.empty()) {
        FILE* f = fopen((cgroup + "/cgroup.procs").c_str(), "w");
        if (!f) _exit(3);
        fprintf(f, "%d", getpid());
        fclose(f);
      }
      (void)!write(ready[1], "r", 1);
      char c;
      if (read(go[0], &c, 1) != 1) _exit(2);
      Run(cpus, run_for);
      _exit(0);
    }
    close(go[0]);
    close(ready[1]);
    go_fd_ = go[1];
    char c;
    if (read(ready[0], &c, 1) != 1) throw std::runtime_error("target did not start");
    close(ready[0]);
  }
  ~TargetProcess() {
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (go_fd_ >= 0) close(go_fd_);
    munmap(shared_, sizeof(TargetShared));
  }
  pid_t pid() const { return pid_; }
  void Go() {
    (void)!write(go_fd_, "g", 1);
    close(go_fd_);
    go_fd_ = -1;
  }
  // Waits at most `timeout` for it to exit; true when it exited with 0.
  bool Join(std::chrono::milliseconds timeout) {
    auto end = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    while (std::chrono::steady_clock::now() < end) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        reaped_ = true;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0;
      }
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }
  const TargetShared& shared() const { return *shared_; }

 private:
  void Run(const std::vector<int>& cpus, std::chrono::milliseconds run_for) {
    int ring[kThreads][2];
    for (auto& p : ring)
      if (pipe(p) != 0) _exit(4);
    auto deadline = std::chrono::steady_clock::now() + run_for;
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([&, i] {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpus[static_cast<size_t>(i) % cpus.size()], &set);
        sched_setaffinity(0, sizeof(set), &set);
        ThreadReport& me = shared_->threads[i];
        me.tid = static_cast<int32_t>(syscall(SYS_gettid));
        char c = 't';
        if (i == 0) (void)!write(ring[1][1], &c, 1);
        int in = ring[i][0], out = ring[(i + 1) % kThreads][1];
        for (uint64_t n = 0; read(in, &c, 1) == 1 && c != 'q'; ++n) {
          if ((n & 255) == 0 && std::chrono::steady_clock::now() > deadline) stop = true;
          c = stop ? 'q' : 't';
          if (write(out, &c, 1) != 1) break;
        }
        // Pass the stop on so every thread leaves its loop.
        c = 'q';
        (void)!write(out, &c, 1);
        me.switches = ThreadSwitches();
      });
    }
    for (auto& t : threads) t.join();
  }

  TargetShared* shared_ = nullptr;
  pid_t pid_ = -1;
  int go_fd_ = -1;
  bool reaped_ = false;
};

// The session summary's args, by name.
std::map<std::string, std::string> SessionArgs(const perfetto::Trace& trace) {
  auto all = TrackEventArgs(trace, "gpunoise recording");
  return all.empty() ? std::map<std::string, std::string>{} : all.back();
}

uint64_t Arg(const std::map<std::string, std::string>& args, const std::string& name) {
  auto it = args.find(name);
  return it == args.end() ? 0 : std::stoull(it->second);
}

struct TraceCounts {
  std::map<uint32_t, uint64_t> switches, wakings;
  std::map<int32_t, uint64_t> switch_ins;
  std::set<int32_t> woken;
};

TraceCounts Count(const perfetto::Trace& trace) {
  TraceCounts c;
  for (const auto& s : CompactSwitches(trace)) {
    ++c.switches[s.cpu];
    ++c.switch_ins[s.next_pid];
  }
  for (const auto& w : CompactWakings(trace)) {
    ++c.wakings[w.cpu];
    c.woken.insert(w.pid);
  }
  return c;
}

std::set<int32_t> Tids(const TargetShared& shared) {
  std::set<int32_t> tids;
  for (const ThreadReport& t : shared.threads) tids.insert(t.tid);
  return tids;
}

// An unselected process's threads are never woken in the trace, and are
// switched in exactly as often as they took the CPU from a selected thread
// (the switch out of a selected thread names its successor, as perf's --pid
// does). The oracle says how often that was: the trace's order cannot, since
// this kernel does not report some switches from idle (MEASURED.md).
void ExpectOutsiderOnlyReplacesSelected(const TraceCounts& counts, const TargetShared& outsider,
                                        const SchedOracle& oracle, uint64_t lost) {
  auto successors = oracle.SuccessorsPerThread();
  for (int32_t tid : Tids(outsider)) {
    EXPECT_FALSE(counts.woken.count(tid)) << "thread " << tid << " of an unselected process was woken in the trace";
    if (lost) continue;
    uint64_t in = counts.switch_ins.count(tid) ? counts.switch_ins.at(tid) : 0;
    EXPECT_EQ(in, successors[tid]) << "switch-ins of thread " << tid << " of an unselected process";
  }
}

// The loss figure the recorder printed: "...; N lost events".
uint64_t SummaryLost(const std::string& out) {
  std::smatch m;
  static const std::regex re("; ([0-9]+) lost events");
  return std::regex_search(out, m, re) ? std::stoull(m[1]) : UINT64_MAX;
}

// The FtraceCpuStats dropped_events of the end-of-trace stats, summed.
uint64_t StatsDropped(const perfetto::Trace& trace) {
  uint64_t total = 0;
  for (const auto& p : trace.packet())
    if (p.has_ftrace_stats() && p.ftrace_stats().phase() == perfetto::FtraceStats::END_OF_TRACE)
      for (const auto& c : p.ftrace_stats().cpu_stats()) total += c.dropped_events();
  return total;
}

// The total the report's header gives (JSON).
uint64_t ReportLost(const std::string& trace_path) {
  ChildProcess report({GpunoiseBinary(), "report", "--json", trace_path});
  if (report.Wait(60s) != 0) return UINT64_MAX;
  std::smatch m;
  std::string json = report.stdout_text();
  static const std::regex re("\"total_lost\": *([0-9]+)");
  return std::regex_search(json, m, re) ? std::stoull(m[1]) : UINT64_MAX;
}

// Per CPU, what the trace holds plus what it says it lost of `kind` equals
// the oracle's count.
// Per CPU, what the trace holds plus what it says it lost of `kind` equals
// the oracle's count. Runs of this kind's program that the kernel skipped
// (on the classic path trace_call_bpf refuses a program nested in another,
// e.g. a waking from an irq that interrupted a task's exit record) are
// counted per program, not per CPU, and whatever the event would have been
// (also another process's waking, which the filter would have dropped):
// those may make up the difference, and then at most all of it.
void ExpectEveryEventAccounted(const std::map<uint32_t, uint64_t>& in_trace,
                               const std::map<std::string, std::string>& args, const std::string& kind,
                               const std::map<uint32_t, uint64_t>& oracle, uint64_t* lost_total) {
  uint64_t skipped = Arg(args, "program.sched.gn_" + kind + ".missed") +
                     Arg(args, "program.sched.gn_tp_" + kind + ".missed");
  std::set<uint32_t> cpus;
  for (const auto& [cpu, n] : in_trace) cpus.insert(cpu);
  for (const auto& [cpu, n] : oracle) cpus.insert(cpu);
  uint64_t missing = 0;
  for (uint32_t cpu : cpus) {
    std::string prefix = "cpu." + std::to_string(cpu) + ".";
    uint64_t lost = Arg(args, prefix + "lost_kind." + kind) + Arg(args, prefix + "unwritten_kind." + kind);
    *lost_total += lost;
    uint64_t have = in_trace.count(cpu) ? in_trace.at(cpu) : 0;
    uint64_t want = oracle.count(cpu) ? oracle.at(cpu) : 0;
    if (skipped == 0) {
      EXPECT_EQ(have + lost, want) << kind << " on CPU " << cpu << ": " << have << " in the trace, " << lost
                                   << " counted as lost";
    } else {
      EXPECT_LE(have + lost, want) << kind << " on CPU " << cpu;
      missing += want - std::min(want, have + lost);
    }
  }
  *lost_total += skipped;
  EXPECT_LE(missing, skipped) << kind << ": more missing than the program runs the kernel skipped";
}

// What a finished recording holds against the oracle: the trace's counts,
// its session summary, and how many switches and wakings it counted as lost
// (each kind checked per CPU by ExpectEveryEventAccounted).
struct Checked {
  TraceCounts counts;
  std::map<std::string, std::string> args;
  uint64_t lost = 0;
};

// Ends the recording `rec` (SIGINT), stops the oracle, reads `out` and
// checks every switch and waking of the target against the oracle.
void StopAndCheck(ChildProcess& rec, SchedOracle& oracle, const std::string& out, Checked* checked) {
  std::this_thread::sleep_for(200ms);
  rec.Signal(SIGINT);
  ASSERT_EQ(rec.Wait(30s), 0) << rec.stderr_text();
  oracle.Stop();
  std::string error;
  auto trace = ReadTrace(out, &error);
  ASSERT_TRUE(trace) << error;
  checked->counts = Count(*trace);
  checked->args = SessionArgs(*trace);
  ExpectEveryEventAccounted(checked->counts.switches, checked->args, "sched_switch", oracle.SwitchesPerCpu(),
                            &checked->lost);
  ExpectEveryEventAccounted(checked->counts.wakings, checked->args, "sched_waking", oracle.WakingsPerCpu(),
                            &checked->lost);
}

// `mode`: the attach path ("auto", "tracepoint") with one ring reservation
// per record (record --no-batching), or with "+batching" for per-CPU
// batches in the kernel (record --batching).
// `mode`: the attach mode, then "+batching" (irq records batched too) and
// "+lanes" (two drain threads) where asked.
std::vector<std::string> RecordArgs(const std::string& out, const std::string& mode,
                                    std::vector<std::string> extra) {
  std::string attach = mode;
  auto take = [&attach](const std::string& suffix) {
    if (attach.size() <= suffix.size() || !attach.ends_with(suffix)) return false;
    attach.resize(attach.size() - suffix.size());
    return true;
  };
  const bool lanes = take("+lanes");
  const bool batching = take("+batching");
  std::vector<std::string> args = {GpunoiseBinary(), "record",  "-o",           out,
                                   "--events",       "sched",   "--attach",     attach,
                                   "--drain-interval", "50"};
  args.push_back(batching ? "--batching" : "--no-batching");
  args.push_back("--drain-threads");
  args.push_back(lanes ? "2" : "1");
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

class LossIntegration : public ::testing::TestWithParam<std::string> {};

// Records the target with small rings and a consumer stopped for 600 ms, in
// `mode` (RecordArgs), and checks every switch and waking per CPU against
// the oracle and the one loss total everywhere.
void ExpectAStoppedConsumersLossCountedExactly(const std::string& mode) {
  std::string out = MakeTempDir() + "/loss.pftrace";
  TargetProcess target({0, 1}, 1500ms);
  std::string error;
  auto oracle = SchedOracle::Start(target.pid(), -1, &error);
  ASSERT_TRUE(oracle) << error;
  // Small rings, so that a stopped consumer loses records.
  ChildProcess rec(RecordArgs(out, mode, {"--pid", std::to_string(target.pid()), "--buffer-size", "16K"}));
  ASSERT_TRUE(rec.WaitForStderr("recording", 20s)) << rec.stderr_text();
  target.Go();
  std::this_thread::sleep_for(300ms);
  rec.Signal(SIGSTOP);
  std::this_thread::sleep_for(600ms);
  rec.Signal(SIGCONT);
  ASSERT_TRUE(target.Join(20s));
  Checked checked;
  StopAndCheck(rec, *oracle, out, &checked);
  if (::testing::Test::HasFatalFailure()) return;
  auto trace = ReadTrace(out);  // again, for its stats
  ASSERT_TRUE(trace);
  auto& args = checked.args;
  uint64_t lost = checked.lost;
  EXPECT_GT(lost, 0u) << "the stopped consumer lost nothing: the test proved nothing";

  // One total everywhere: the trace's stats hold the ring loss; the summary
  // line, the session summary and the report's header the ring loss plus
  // the program runs the kernel skipped (on the classic path trace_call_bpf
  // refuses a program while another runs on the CPU: a few here).
  uint64_t ring_lost = 0, skipped = 0;
  auto ends_with = [](const std::string& s, const std::string& tail) {
    return s.size() > tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  for (const auto& [name, value] : args) {
    if (name.rfind("cpu.", 0) == 0 && ends_with(name, ".lost")) ring_lost += std::stoull(value);
    if (name.rfind("program.", 0) == 0 && ends_with(name, ".missed")) skipped += std::stoull(value);
    if (ends_with(name, ".decode_errors") || ends_with(name, ".unwritten") || name == "records_outside_cpus") {
      EXPECT_EQ(value, "0") << name;
    }
  }
  EXPECT_GE(ring_lost + skipped, lost);
  EXPECT_EQ(StatsDropped(*trace), ring_lost);
  EXPECT_EQ(Arg(args, "bpf_recursion_misses"), skipped);
  EXPECT_EQ(Arg(args, "lost_events"), ring_lost + skipped);
  EXPECT_EQ(SummaryLost(rec.stdout_text()), ring_lost + skipped) << rec.stdout_text();
  EXPECT_EQ(ReportLost(out), ring_lost + skipped);

  // The recorder's pace names the stall: the rings went unread for the
  // whole stop before a drain found them short, inside the recording.
  if (ring_lost) {
    uint64_t start = Arg(args, "start_ts"), end = Arg(args, "end_ts");
    uint64_t first_seen = Arg(args, "drain.first_ring_loss_seen");
    EXPECT_GE(first_seen, start);
    EXPECT_LE(first_seen, end);
    EXPECT_GE(Arg(args, "drain.unread_before_loss_ns"), 600'000'000u) << rec.stdout_text();
    uint64_t from = Arg(args, "drain.unread_before_loss_from");
    EXPECT_GE(from, start);
    EXPECT_LT(from, end);
  }
}

TEST_P(LossIntegration, EverySwitchAndWakingIsInTheTraceOrCountedAsLostOnce) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  ExpectAStoppedConsumersLossCountedExactly(GetParam());
}

// Batching on the classic tracepoints, whose programs read other arguments
// and whose nested runs the kernel refuses (trace_call_bpf; counted as
// skipped, which the check allows for). Only this case of the suite, for CI
// time (about 4 s).
TEST(LossIntegration, ClassicBatchingCountsEverySwitchAndWakingInTheTraceOrAsLostOnce) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  ExpectAStoppedConsumersLossCountedExactly("tracepoint+batching");
}

// Records `target` and `outsider` running side by side with the filter
// `filter_args`, and checks what the filter promises: every switch and
// waking of the target per CPU, each of its threads' switch-ins (against the
// oracle and the kernel's own count), and the outsider only where it took a
// CPU from the target.
void ExpectFilterKeepsTheTargetOnly(const std::string& attach, std::vector<std::string> filter_args,
                                    TargetProcess& target, TargetProcess& outsider) {
  std::string out = MakeTempDir() + "/filter.pftrace";
  std::string error;
  auto oracle = SchedOracle::Start(target.pid(), -1, &error);
  ASSERT_TRUE(oracle) << error;
  ChildProcess rec(RecordArgs(out, attach, std::move(filter_args)));
  ASSERT_TRUE(rec.WaitForStderr("recording", 20s)) << rec.stderr_text();
  target.Go();
  outsider.Go();
  ASSERT_TRUE(target.Join(20s));
  ASSERT_TRUE(outsider.Join(20s));
  Checked checked;
  StopAndCheck(rec, *oracle, out, &checked);
  if (::testing::Test::HasFatalFailure()) return;
  TraceCounts& counts = checked.counts;
  auto& args = checked.args;
  uint64_t lost = checked.lost;
  auto oracle_ins = oracle->SwitchInsPerThread();
  for (const ThreadReport& t : target.shared().threads) {
    int32_t tid = t.tid;
    ASSERT_NE(tid, 0);
    // With loss (a starved consumer on a loaded machine) only the per-CPU
    // sums above are exact.
    if (lost) continue;
    EXPECT_EQ(counts.switch_ins[tid], oracle_ins[tid]) << "thread " << tid;
    // The kernel's own count: every switch out up to the loop's end was
    // followed by a switch in (plus its first, and the few after the count),
    // but for the few switches from idle this kernel does not report to any
    // tracer (MEASURED.md: 8 in 20,000; the oracle misses them too). Under
    // load it was 48 in 15,649, then 0.6% and 89 in 17,287, each time with
    // the oracle agreeing exactly, so the exact check is the oracle's and
    // this one allows 1%.
    uint64_t rusage = t.switches.load();
    EXPECT_GE(counts.switch_ins[tid] + 2 + rusage / 100, rusage) << "thread " << tid;
    // Above: its first switch-in, and those after the count (the thread
    // still passes the stop on and exits, and the outsider shares its CPUs
    // and may preempt it in between: 5 more than the count once, 2026-12-07).
    EXPECT_LE(counts.switch_ins[tid], rusage + 16) << "thread " << tid;
  }
  ExpectOutsiderOnlyReplacesSelected(counts, outsider.shared(), *oracle, lost);
  EXPECT_EQ(args["switch_chain_checked"], "false") << "a filter removes switches by design";
}

TEST_P(LossIntegration, PidFilterKeepsEveryThreadsSwitchInsAndWakingsAndNothingElse) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  TargetProcess target({0, 1}, 800ms);
  TargetProcess outsider({1, 0}, 800ms);
  ExpectFilterKeepsTheTargetOnly(GetParam(), {"--pid", std::to_string(target.pid())}, target, outsider);
}

TEST_P(LossIntegration, CgroupFilterKeepsEveryThreadsSwitchInsAndWakingsAndNothingElse) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  auto mount = CgroupV2Mount();
  ASSERT_TRUE(mount.ok()) << mount.error().message;
  std::string cg = *mount + "/gpunoise-loss-test-" + std::to_string(getpid());
  ASSERT_EQ(mkdir(cg.c_str(), 0755), 0) << cg << ": " << strerror(errno);
  {
    TargetProcess target({0, 1}, 800ms, cg);
    TargetProcess outsider({1, 0}, 800ms);
    ExpectFilterKeepsTheTargetOnly(GetParam(), {"--cgroup", cg}, target, outsider);
  }
  rmdir(cg.c_str());
}

// Records until a 5 MiB tmpfs is full, with `compression` (record's
// options), and checks that written + lost + unwritten is the oracle's count.
void ExpectAFullDiskCountsWhatTheRingsStillHeld(const std::string& mode, std::vector<std::string> compression) {
  std::string dir = MakeTempDir();
  // The writer keeps 4 MiB for the closing metadata: ~1 MiB of room for events.
  ASSERT_EQ(mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=5m"), 0) << strerror(errno);
  std::string out = dir + "/full.pftrace";
  {
    // All threads on one CPU: switches far faster than across CPUs.
    TargetProcess target({1}, 15s);
    std::vector<std::string> extra = {"--pid", std::to_string(target.pid())};
    extra.insert(extra.end(), compression.begin(), compression.end());
    ChildProcess rec(RecordArgs(out, mode, extra));
    ASSERT_TRUE(rec.WaitForStderr("recording", 20s)) << rec.stderr_text();
    // The recording ends itself when the disk is full: count over its gate.
    int gate = FindRecordingGate(rec.pid());
    ASSERT_GE(gate, 0) << "the recorder holds no gn_gate map";
    std::string error;
    auto oracle = SchedOracle::Start(target.pid(), gate, &error);
    close(gate);
    ASSERT_TRUE(oracle) << error;
    target.Go();
    EXPECT_EQ(rec.Wait(60s), 1) << rec.stderr_text();
    oracle->Stop();
    EXPECT_NE(rec.stderr_text().find("disk full"), std::string::npos) << rec.stderr_text();

    auto trace = ReadTrace(out, &error);
    ASSERT_TRUE(trace) << error;
    TraceCounts counts = Count(*trace);
    auto args = SessionArgs(*trace);
    EXPECT_EQ(args["end_reason"], "disk full");
    uint64_t unwritten = 0;
    for (const auto& [name, value] : args)
      if (name.find(".unwritten_kind.") != std::string::npos) unwritten += std::stoull(value);
    EXPECT_GT(unwritten, 0u) << "what the rings held at the end is counted";
    // Per CPU, written + lost + unwritten = the oracle's count, but for the
    // switch that may be in flight on a CPU at the instant the gate closes:
    // the recorder's program can see it open and the oracle's, which runs
    // after it on the same tracepoint, closed.
    auto oracle_switches = oracle->SwitchesPerCpu();
    std::set<uint32_t> cpus;
    for (const auto& [cpu, n] : oracle_switches) cpus.insert(cpu);
    for (const auto& [cpu, n] : counts.switches) cpus.insert(cpu);
    for (uint32_t cpu : cpus) {
      std::string prefix = "cpu." + std::to_string(cpu) + ".";
      uint64_t accounted = counts.switches[cpu] + Arg(args, prefix + "lost_kind.sched_switch") +
                           Arg(args, prefix + "unwritten_kind.sched_switch");
      uint64_t want = oracle_switches[cpu];
      EXPECT_GE(accounted, want) << "CPU " << cpu;
      EXPECT_LE(accounted, want + 1) << "CPU " << cpu;
    }
  }
  umount2(dir.c_str(), MNT_DETACH);
}

TEST_P(LossIntegration, AFullDiskCountsWhatTheRingsStillHeldAsUnwritten) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  GN_REQUIRE_ROOT_MOUNT_POINT("a tmpfs for the full disk");
  ExpectAFullDiskCountsWhatTheRingsStillHeld(GetParam(), {"--compress", "none"});
}

// The deflate thread hears of the full disk a block or so late: the blocks
// sealed meanwhile never reach the file and are counted as unwritten too.
TEST(LossIntegrationDeflateThread, AFullDiskCountsWhatTheDeflateThreadNeverWrote) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  GN_REQUIRE_ROOT_MOUNT_POINT("a tmpfs for the full disk");
  ExpectAFullDiskCountsWhatTheRingsStillHeld("auto+batching", {"--compress", "zlib", "--deflate-thread", "on"});
}

TEST_P(LossIntegration, EveryNewThreadIsRecordedOnce) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  std::string out = MakeTempDir() + "/newtask.pftrace";
  TargetProcess target({0, 1}, 200ms);
  ChildProcess rec(RecordArgs(out, GetParam(), {"--pid", std::to_string(target.pid())}));
  ASSERT_TRUE(rec.WaitForStderr("recording", 20s)) << rec.stderr_text();
  target.Go();
  ASSERT_TRUE(target.Join(20s));
  std::this_thread::sleep_for(200ms);
  rec.Signal(SIGINT);
  ASSERT_EQ(rec.Wait(30s), 0) << rec.stderr_text();
  std::string error;
  auto trace = ReadTrace(out, &error);
  ASSERT_TRUE(trace) << error;
  // One task_newtask per thread: two made the trace processor see two
  // threads of one tid, the first left runnable for ever.
  std::map<int32_t, int> newtasks;
  for (const auto* e : FtraceEvents(*trace))
    if (e->has_task_newtask()) ++newtasks[e->task_newtask().pid()];
  for (int32_t tid : Tids(target.shared())) EXPECT_EQ(newtasks[tid], 1) << "thread " << tid;
}

INSTANTIATE_TEST_SUITE_P(BothAttachPaths, LossIntegration,
                         ::testing::Values("auto", "tracepoint", "auto+batching", "auto+batching+lanes"),
                         [](const auto& info) {
                           if (info.param == "auto+batching+lanes") return std::string("TpBtfBatchingTwoDrainLanes");
                           if (info.param == "auto+batching") return std::string("TpBtfBatching");
                           return info.param == "auto" ? std::string("TpBtf") : std::string("Classic");
                         });

}  // namespace
}  // namespace gpunoise::testing
