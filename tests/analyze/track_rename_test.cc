// Track names are for people: a trace whose every track and counter name was
// rewritten (inside the file's bytes) gives the same findings, because the
// report finds its tracks by their typed identity (model/track_identity.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "analyze/analysis.h"
#include "analyze/timeline_builder.h"
#include "export/perfetto/ftrace_bundle_encoder.h"
#include "export/perfetto/metadata_packets.h"
#include "export/perfetto/net_tracks.h"
#include "export/perfetto/node_tracks.h"
#include "export/perfetto/protos/perfetto_trace_subset.pb.h"
#include "export/perfetto/track_event_writer.h"
#include "import/test_trace.h"
#include "import/trace_reader.h"
#include "import/track_rename.h"
#include "export/perfetto/parsed_packet.h"

namespace gpunoise::analyze {
namespace {

constexpr uint64_t kUs = 1000;
constexpr uint64_t kMs = 1000 * kUs;
constexpr uint64_t kBase = 7'000'000'000;
constexpr int32_t kTrainer = 100;
constexpr int32_t kOther = 300;
constexpr uint32_t kNetRx = static_cast<uint32_t>(model::SoftirqVec::kNetRx);
constexpr model::NetDeviceKey kEth0{4026531840, 2};

class NoIrqNames : public perfetto::IrqNameSource {
 public:
  std::string_view IrqName(int32_t) override { return "eth0-rx-0"; }
};

model::Event SwitchOn(uint32_t cpu, uint64_t ts, int32_t prev, int32_t next, int64_t state, const char* comm) {
  model::SchedSwitch s;
  s.prev_tid = prev;
  s.prev_state = state;
  s.next_tid = next;
  s.next_comm = model::TaskComm(comm);
  return {ts, cpu, prev, s};
}
model::Event Switch(uint64_t ts, int32_t prev, int32_t next, int64_t state, const char* comm) {
  return SwitchOn(1, ts, prev, next, state, comm);
}

// Cumulative network counters at `i` * 100 ms: eth0 receives on CPU 1
// through NAPI (every poll at full budget), drops for one reason and has a
// TX timeout at each step.
model::NetSnapshot Snapshot(uint64_t i) {
  model::NetSnapshot s;
  s.ts = kBase + i * 100 * kMs;
  model::DeviceQueueCount rx;
  rx.dev = kEth0;
  rx.queue = 0;
  rx.cpu = 1;
  rx.packets = i * 25000;
  rx.bytes = rx.packets * 1500;
  s.devices.push_back(rx);
  model::DeviceQueueCount timeouts = rx;
  timeouts.dir = model::NetDirection::kTxTimeout;
  timeouts.packets = i;
  timeouts.bytes = 0;
  s.devices.push_back(timeouts);
  model::NapiCount napi;
  napi.dev = kEth0;
  napi.napi_id = 8193;
  napi.queue = 0;
  napi.irq = 45;
  napi.cpu = 1;
  napi.polls = i * 400;
  napi.full_budget = i * 390;
  napi.work = i * 25000;
  s.napi.push_back(napi);
  model::DropCount drop;
  drop.dev = kEth0;
  drop.reason = 6;
  drop.location = 0xffffffff81000000ull;
  drop.cpu = 1;
  drop.packets = i * 500;
  s.drops.push_back(drop);
  return s;
}

using PacketOut = std::function<Status(const perfetto::TracePacket&)>;

// The process tree: "trainer" (the focus) and "other".
void WriteProcesses(const PacketOut& add) {
  perfetto::TracePacketBuilder packet;
  model::ProcessSnapshot processes;
  processes.ts = kBase;
  for (auto [pid, comm] : {std::pair<int32_t, const char*>{kTrainer, "trainer"}, {kOther, "other"}}) {
    model::ProcessInfo p;
    p.pid = pid;
    p.ppid = 1;
    p.comm = comm;
    p.cmdline = {std::string("/usr/bin/") + comm};
    processes.processes.push_back(p);
    processes.threads.push_back({pid, pid, comm});
  }
  perfetto::FillProcessTree(&packet, processes);
  (void)add(perfetto::Parsed(packet));
}

// One bundle per CPU, each CPU's events in time order.
void WriteScheduling(const PacketOut& add, std::map<uint32_t, std::vector<model::Event>> cpus) {
  perfetto::FtraceBundleEncoder encoder;
  NoIrqNames irq_names;
  for (auto& [cpu, events] : cpus) {
    std::stable_sort(events.begin(), events.end(),
                     [](const model::Event& a, const model::Event& b) { return a.ts < b.ts; });
    perfetto::TracePacket packet;
    encoder.Encode({cpu, false, 0}, events, irq_names, &packet);
    (void)add(packet);
  }
}

// 500 ms of "trainer" on CPU 1 under a NET_RX storm (700 us of every 1 ms),
// with the network collectors' counters and totals, written the way the
// recorder writes them.
std::string WriteRecording() {
  perfetto::Trace trace;
  PacketOut add = [&](const perfetto::TracePacket& p) {
    *trace.add_packet() = p;
    return OkStatus();
  };
  WriteProcesses(add);
  auto add_built = [&](const perfetto::TracePacketBuilder& p) { return add(perfetto::Parsed(p)); };
  std::vector<model::Event> events;
  events.push_back(Switch(kBase, 0, kTrainer, 0, "trainer"));
  for (uint64_t t = kBase; t < kBase + 500 * kMs; t += kMs) {
    events.push_back({t + 100 * kUs, 1, kTrainer, model::SoftirqEntry{kNetRx}});
    events.push_back({t + 800 * kUs, 1, kTrainer, model::SoftirqExit{kNetRx}});
  }
  events.push_back(Switch(kBase + 500 * kMs, kTrainer, 0, 1, "swapper/1"));
  WriteScheduling(add, {{1, std::move(events)}});

  perfetto::TrackEventWriter writer(9, 0);
  perfetto::NetTrackWriter net(writer, add_built);
  model::NetNames names;
  names.own_netns = kEth0.netns;
  names.devices[kEth0] = "eth0";
  names.drop_reasons[6] = "SOCKET_RCVBUFF";
  for (uint64_t i = 0; i < 5; ++i) EXPECT_TRUE(net.WriteRates(Snapshot(i), Snapshot(i + 1), names).ok());
  EXPECT_TRUE(net.CloseRates(kBase + 500 * kMs).ok());
  EXPECT_TRUE(net.WriteTotals(Snapshot(0), Snapshot(5), names).ok());
  return trace.SerializeAsString();
}

std::string WriteFile(const std::string& dir, const std::string& name, const std::string& bytes) {
  testing::TestTrace trace;
  trace.AddRaw(bytes);
  return trace.Write(dir, name);
}

using Key = std::tuple<std::string, std::string, std::string, uint64_t>;  // detector, kind, culprit, cost

std::vector<Key> Findings(const std::string& path) {
  TimelineBuilder builder;
  import::TraceReader reader(builder);
  auto stats = reader.ReadFile(path);
  EXPECT_TRUE(stats.ok()) << (stats.ok() ? "" : stats.error().message);
  AnalysisOptions options;
  options.focus = {"trainer"};
  auto a = Analyze(builder.Finish(), options);
  EXPECT_TRUE(a.ok());
  std::vector<Key> out;
  if (a.ok())
    for (const Finding& f : a->findings) out.emplace_back(f.detector, f.kind, f.culprit, f.cost_ns);
  return out;
}

bool Has(const std::vector<Key>& findings, std::string_view detector, std::string_view kind,
         std::string_view culprit) {
  for (const auto& [d, k, c, cost] : findings)
    if (d == detector && (kind.empty() || k == kind) && c.find(culprit) != std::string::npos) return true;
  return false;
}

std::string Describe(const std::vector<Key>& findings) {
  std::string s;
  for (const auto& [d, k, c, cost] : findings) s += d + "/" + k + " " + c + " " + std::to_string(cost) + "\n";
  return s;
}

TEST(TrackIdentity, RenamingEveryTrackInTheFileKeepsTheFindings) {
  testing::ScopedTempDir dir;
  const std::string original = WriteFile(dir.path(), "typed.pftrace", WriteRecording());
  const std::string bytes = testing::TraceFileBytes(original);
  testing::RenameResult rewritten = testing::RenameTracks(bytes, true, false);
  EXPECT_GT(rewritten.renamed, 5);
  const std::string renamed = WriteFile(dir.path(), "renamed.pftrace", rewritten.bytes);
  ASSERT_NE(testing::TraceFileBytes(renamed), bytes);

  std::vector<Key> before = Findings(original);
  // Findings that rest on the network counters and metadata: the storm
  // named for eth0 through the per-CPU NAPI counter, the TX timeouts, the
  // full-budget polls and the drops by reason.
  EXPECT_TRUE(Has(before, "softirq_storm", "softirq_share", "from eth0")) << Describe(before);
  EXPECT_TRUE(Has(before, "nic_trouble", "tx_timeout", "eth0")) << Describe(before);
  EXPECT_TRUE(Has(before, "nic_trouble", "napi_full_budget", "eth0")) << Describe(before);
  EXPECT_TRUE(Has(before, "nic_trouble", "drops", "eth0 (SOCKET_RCVBUFF)")) << Describe(before);
  std::vector<Key> after = Findings(renamed);
  EXPECT_EQ(after, before) << "before:\n" << Describe(before) << "after:\n" << Describe(after);
}

TEST(TrackIdentity, ATraceWithoutIdentitiesIsReadByItsOldNames) {
  testing::ScopedTempDir dir;
  const std::string bytes = WriteRecording();
  const std::string original = WriteFile(dir.path(), "typed2.pftrace", bytes);
  const std::string old = WriteFile(dir.path(), "old.pftrace", testing::RenameTracks(bytes, false, true).bytes);
  const std::string old_renamed =
      WriteFile(dir.path(), "old-renamed.pftrace", testing::RenameTracks(bytes, true, true).bytes);
  std::vector<Key> before = Findings(original);
  // An old trace (names only) gives what a typed one gives...
  EXPECT_EQ(Findings(old), before);
  // ... and without identities the names are all there is: the rename test
  // above would fail if the report still read them.
  std::vector<Key> lost = Findings(old_renamed);
  EXPECT_NE(lost, before);
  EXPECT_FALSE(Has(lost, "nic_trouble", "tx_timeout", "eth0")) << Describe(lost);
}

// The node collectors' tracks (export/perfetto/node_tracks.h), written
// through the recorder's writer beside the scheduler data of `cpus`.
std::string WriteNodeRecording(std::map<uint32_t, std::vector<model::Event>> cpus,
                               const std::function<void(perfetto::NodeTrackWriter&)>& node) {
  perfetto::Trace trace;
  PacketOut add = [&](const perfetto::TracePacket& p) {
    *trace.add_packet() = p;
    return OkStatus();
  };
  WriteProcesses(add);
  WriteScheduling(add, std::move(cpus));
  perfetto::TrackEventWriter writer(9, 0);
  perfetto::NodeTrackWriter writer_node(writer, [&](const perfetto::TracePacketBuilder& p) { return add(perfetto::Parsed(p)); });
  node(writer_node);
  return trace.SerializeAsString();
}

// "trainer" alone on CPU 1 in a cgroup with a 20 ms per 100 ms quota: runs
// 20 ms, is switched out runnable, back 80 ms later with no wakeup, ten
// times, while cpu.stat counts a throttled period each time. The kernel's
// rcu_stall_count rises halfway (warn_count stays at 3).
std::string WriteThrottledRecording() {
  std::map<uint32_t, std::vector<model::Event>> cpus;
  auto& c1 = cpus[1];
  c1.push_back(SwitchOn(1, kBase, 0, kTrainer, 0, "trainer"));
  for (uint64_t i = 0; i < 10; ++i) {
    uint64_t p = kBase + i * 100 * kMs;
    c1.push_back(SwitchOn(1, p + 20 * kMs, kTrainer, 0, 256, "swapper/1"));
    c1.push_back(SwitchOn(1, p + 100 * kMs, 0, kTrainer, 0, "trainer"));
  }
  c1.push_back(SwitchOn(1, kBase + 1020 * kMs, kTrainer, 0, 1, "swapper/1"));
  auto& c0 = cpus[0];
  for (uint64_t t = kBase; t + 10 * kMs <= kBase + 1000 * kMs; t += 10 * kMs) {
    c0.push_back(SwitchOn(0, t, 0, kOther, 0, "other"));
    c0.push_back(SwitchOn(0, t + kMs, kOther, 0, 1, "swapper/0"));
  }
  return WriteNodeRecording(std::move(cpus), [](perfetto::NodeTrackWriter& node) {
    EXPECT_TRUE(node.WriteQuota(kBase, {"/job", 1, 20000, 100000}).ok());
    EXPECT_TRUE(node.WriteQuotaProcess(kBase, "/job", kTrainer).ok());
    auto at = [](uint64_t i) {
      model::NodeSnapshot s;
      s.ts = kBase + i * 100 * kMs;
      s.cgroups["/job"] = {i, i, i * 60 * kMs};
      s.kernel_health["rcu_stall_count"] = i >= 5 ? 1 : 0;
      s.kernel_health["warn_count"] = 3;
      return s;
    };
    for (uint64_t i = 1; i <= 11; ++i) EXPECT_TRUE(node.WriteSample(at(0), at(i - 1), at(i)).ok());
    EXPECT_TRUE(node.Close(kBase + 1100 * kMs).ok());
  });
}

// "trainer" runs on CPU 1 for 1 s while the hypervisor steals 20% of it.
std::string WriteStolenRecording() {
  std::map<uint32_t, std::vector<model::Event>> cpus;
  cpus[1] = {SwitchOn(1, kBase, 0, kTrainer, 0, "trainer"),
             SwitchOn(1, kBase + 1000 * kMs, kTrainer, 0, 1, "swapper/1")};
  cpus[0] = {SwitchOn(0, kBase, 0, kOther, 0, "other"), SwitchOn(0, kBase + 1000 * kMs, kOther, 0, 1, "swapper/0")};
  return WriteNodeRecording(std::move(cpus), [](perfetto::NodeTrackWriter& node) {
    auto at = [](uint64_t i) {
      model::NodeSnapshot s;
      s.ts = kBase + i * 100 * kMs;
      s.steal_ns[0] = 0;
      s.steal_ns[1] = i * 20 * kMs;
      return s;
    };
    for (uint64_t i = 1; i <= 10; ++i) EXPECT_TRUE(node.WriteSample(at(0), at(i - 1), at(i)).ok());
    EXPECT_TRUE(node.Close(kBase + 1000 * kMs).ok());
  });
}

// "trainer" on CPU 1, 200 times: runs 200 us and sleeps; CPU 1 idles in C6
// (85 us exit latency) from 5 us later; the wakeup at 900 us waits 80 us
// for the idle exit.
std::string WriteIdleExitRecording() {
  std::map<uint32_t, std::vector<model::Event>> cpus;
  std::vector<model::CpuStateEvent> idle;
  for (uint64_t i = 0; i < 200; ++i) {
    uint64_t t0 = kBase + i * kMs;
    cpus[1].push_back(SwitchOn(1, t0, 0, kTrainer, 0, "trainer"));
    cpus[1].push_back(SwitchOn(1, t0 + 200 * kUs, kTrainer, 0, 1, "swapper/1"));
    model::SchedWaking w;
    w.tid = kTrainer;
    w.target_cpu = 1;
    cpus[0].push_back({t0 + 900 * kUs, 0, 0, w});
    idle.push_back({t0 + 205 * kUs, t0 + 980 * kUs, 2, 1, model::CpuStateKind::kIdle});
  }
  cpus[1].push_back(SwitchOn(1, kBase + 200 * kMs, 0, kTrainer, 0, "trainer"));
  cpus[1].push_back(SwitchOn(1, kBase + 201 * kMs, kTrainer, 0, 1, "swapper/1"));
  return WriteNodeRecording(std::move(cpus), [&](perfetto::NodeTrackWriter& node) {
    EXPECT_TRUE(node.WriteNodeInstant(kBase, perfetto::kCpuStateInfoEventName,
                                      {{"cpu_idle", 1}, {"cpu_frequency", 1}, {"cpufreq_sysfs", 1},
                                       {"numa_tracepoints", 1}, {"mm_migrate_pages", 1}, {"numa_nodes", 2},
                                       {"numa_balancing", 1}, {"smi", 1}})
                    .ok());
    EXPECT_TRUE(node.WriteNodeInstant(kBase, perfetto::kIdleStateEventName,
                                      {{"cpu", 1}, {"state", 2}, {"name", 0, "C6"}, {"exit_latency_us", 85}})
                    .ok());
    for (const model::CpuStateEvent& e : idle) EXPECT_TRUE(node.WriteIdle(e).ok());
    EXPECT_TRUE(node.WriteFrequency(kBase, 1, 2'400'000).ok());
  });
}

// Writes `bytes`, renames every track in the file, and checks that the
// findings stay, that a trace without identities (an old one) gives them
// by its names, and that one without identities or names loses them.
void ExpectRenamingKeepsFindings(const std::string& bytes, std::string_view detector, std::string_view kind,
                                 std::string_view culprit) {
  testing::ScopedTempDir dir;
  const std::string original = WriteFile(dir.path(), "node.pftrace", bytes);
  testing::RenameResult rewritten = testing::RenameTracks(bytes, true, false);
  EXPECT_GT(rewritten.renamed, 2);
  std::vector<Key> before = Findings(original);
  EXPECT_TRUE(Has(before, detector, kind, culprit)) << Describe(before);
  std::vector<Key> after = Findings(WriteFile(dir.path(), "renamed.pftrace", rewritten.bytes));
  EXPECT_EQ(after, before) << "before:\n" << Describe(before) << "after:\n" << Describe(after);
  std::vector<Key> old = Findings(WriteFile(dir.path(), "old.pftrace", testing::RenameTracks(bytes, false, true).bytes));
  EXPECT_EQ(old, before) << "old:\n" << Describe(old);
  std::vector<Key> lost =
      Findings(WriteFile(dir.path(), "old-renamed.pftrace", testing::RenameTracks(bytes, true, true).bytes));
  EXPECT_FALSE(Has(lost, detector, kind, culprit)) << Describe(lost);
}

TEST(TrackIdentity, RenamingTheCgroupAndKernelCountersKeepsThrottlingAndKernelHealth) {
  const std::string bytes = WriteThrottledRecording();
  ExpectRenamingKeepsFindings(bytes, "cpu_throttling", "", "/job");
  ExpectRenamingKeepsFindings(bytes, "nic_trouble", "kernel_health", "kernel");
}

TEST(TrackIdentity, RenamingTheStealCountersKeepsTheStealFinding) {
  ExpectRenamingKeepsFindings(WriteStolenRecording(), "steal", "", "");
}

TEST(TrackIdentity, RenamingTheIdleStateCountersKeepsTheIdleExitFinding) {
  ExpectRenamingKeepsFindings(WriteIdleExitRecording(), "idle_exit", "", "C6");
}

}  // namespace
}  // namespace gpunoise::analyze
