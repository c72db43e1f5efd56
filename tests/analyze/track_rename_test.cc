// Track names are for people: a trace whose every track and counter name was
// rewritten (inside the file's bytes) gives the same findings, because the
// report finds its tracks by their typed identity (model/track_identity.h).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "analyze/analysis.h"
#include "analyze/timeline_builder.h"
#include "export/perfetto/ftrace_bundle_encoder.h"
#include "export/perfetto/metadata_packets.h"
#include "export/perfetto/net_tracks.h"
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
constexpr uint32_t kNetRx = static_cast<uint32_t>(model::SoftirqVec::kNetRx);
constexpr model::NetDeviceKey kEth0{4026531840, 2};

class NoIrqNames : public perfetto::IrqNameSource {
 public:
  std::string_view IrqName(int32_t) override { return "eth0-rx-0"; }
};

model::Event Switch(uint64_t ts, int32_t prev, int32_t next, int64_t state, const char* comm) {
  model::SchedSwitch s;
  s.prev_tid = prev;
  s.prev_state = state;
  s.next_tid = next;
  s.next_comm = model::TaskComm(comm);
  return {ts, 1, prev, s};
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

// 500 ms of "trainer" on CPU 1 under a NET_RX storm (700 us of every 1 ms),
// with the network collectors' counters and totals, written the way the
// recorder writes them.
std::string WriteRecording() {
  perfetto::Trace trace;
  auto add = [&](const perfetto::TracePacket& p) {
    *trace.add_packet() = p;
    return OkStatus();
  };
  auto add_built = [&](const perfetto::TracePacketBuilder& p) { return add(perfetto::Parsed(p)); };
  perfetto::TracePacket packet;
  perfetto::TracePacketBuilder built;
  model::ProcessSnapshot processes;
  processes.ts = kBase;
  model::ProcessInfo p;
  p.pid = kTrainer;
  p.ppid = 1;
  p.comm = "trainer";
  p.cmdline = {"/usr/bin/trainer"};
  processes.processes.push_back(p);
  processes.threads.push_back({kTrainer, kTrainer, "trainer"});
  perfetto::FillProcessTree(&built, processes);
  (void)add_built(built);

  std::vector<model::Event> events;
  events.push_back(Switch(kBase, 0, kTrainer, 0, "trainer"));
  for (uint64_t t = kBase; t < kBase + 500 * kMs; t += kMs) {
    events.push_back({t + 100 * kUs, 1, kTrainer, model::SoftirqEntry{kNetRx}});
    events.push_back({t + 800 * kUs, 1, kTrainer, model::SoftirqExit{kNetRx}});
  }
  events.push_back(Switch(kBase + 500 * kMs, kTrainer, 0, 1, "swapper/1"));
  perfetto::FtraceBundleEncoder encoder;
  NoIrqNames irq_names;
  packet.Clear();
  encoder.Encode({1, false, 0}, events, irq_names, &packet);
  (void)add(packet);

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
    if (d == detector && k == kind && c.find(culprit) != std::string::npos) return true;
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

}  // namespace
}  // namespace gpunoise::analyze
