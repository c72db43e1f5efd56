#include "analyze/numa_locality_detector.h"

#include <gtest/gtest.h>

#include "analyze/synthetic.h"

namespace gpunoise::analyze {
namespace {

using namespace gpunoise::testing;

constexpr int32_t kPid = 500, kLauncher = 501;
constexpr uint64_t kMeta = 901;
constexpr const char* kUuid = "GPU-5f2a1c3e-0b1d-4c59-9a34-7e1f00c0ffee";

model::TrackArg Str(const char* name, std::string value) {
  model::TrackArg a;
  a.name = name;
  a.type = model::TrackArg::Type::kString;
  a.string_value = std::move(value);
  return a;
}
model::TrackArg Int(const char* name, int64_t value) {
  model::TrackArg a;
  a.name = name;
  a.int_value = value;
  return a;
}

void Meta(Synth& s, const char* name, std::vector<model::TrackArg> args) {
  model::TrackEventRecord e;
  e.ts = kBase;
  e.track_uuid = kMeta;
  e.type = model::TrackEventType::kInstant;
  e.name = name;
  e.args = std::move(args);
  s.builder().OnTrackEvent(e);
}

// Two nodes as `gpunoise record` writes them: node 0 has CPUs 0-1, node 1
// CPUs 2-3; the GPU (NVML's PCI address 00000000:3B:00.0) is on `gpu_node`,
// eth0 on `nic_node`.
void Topology(Synth& s, int gpu_node, int nic_node, const char* node1_cpus = "2-3") {
  s.builder().OnTrack({kMeta, 0, "gpunoise node", 0, 0, false});
  Meta(s, "numa node", {Int("node", 0), Str("cpus", "0-1")});
  Meta(s, "numa node", {Int("node", 1), Str("cpus", node1_cpus)});
  Meta(s, "numa device", {Str("kind", "gpu"), Str("name", "0000:3b:00.0"), Str("bus_id", "0000:3b:00.0"),
                          Int("numa_node", gpu_node)});
  Meta(s, "numa device", {Str("kind", "nic"), Str("name", "eth0"), Str("bus_id", "0000:5e:00.0"),
                          Int("numa_node", nic_node)});
  Meta(s, "gpu bus id", {Str("uuid", kUuid), Int("index", 0), Str("bus_id", "00000000:3B:00.0")});
}

void Slice(Synth& s, uint64_t track, uint64_t start, uint64_t end, const char* name, uint64_t flow, bool terminating) {
  model::TrackEventRecord e;
  e.ts = start;
  e.track_uuid = track;
  e.type = model::TrackEventType::kSliceBegin;
  e.name = name;
  (terminating ? e.terminating_flow_ids : e.flow_ids).push_back(flow);
  s.builder().OnTrackEvent(e);
  model::TrackEventRecord end_event;
  end_event.ts = end;
  end_event.track_uuid = track;
  end_event.type = model::TrackEventType::kSliceEnd;
  s.builder().OnTrackEvent(end_event);
}

// The identity instant the CUPTI library writes for `track`.
void Identity(Synth& s, uint64_t track, const char* kind, std::vector<model::TrackArg> args) {
  model::TrackEventRecord e;
  e.ts = kBase;
  e.track_uuid = 10;
  e.type = model::TrackEventType::kInstant;
  e.category = model::kTrackIdentityCategory;
  e.name = model::kTrackIdentityEventName;
  model::TrackArg uuid;
  uuid.name = "track_uuid";
  uuid.type = model::TrackArg::Type::kUint;
  uuid.uint_value = track;
  e.args = {uuid, Str("kind", kind)};
  e.args.insert(e.args.end(), args.begin(), args.end());
  s.builder().OnTrackEvent(e);
}

// The launcher runs 1 s: the first `off` on CPU 2 (node 1), the rest on CPU
// 0 (node 0), launching a kernel every 10 ms on the GPU named by UUID (the
// CUPTI library's tracks). `typed`: the GPU tracks have identities and
// names that say nothing.
Synth Launcher(uint64_t off, int gpu_node, bool typed = false) {
  Synth s;
  s.Process(kPid, "python3").Thread(kLauncher, kPid, "pt_main_thread");
  auto& b = s.builder();
  b.OnTrack({10, 0, "python3", kPid, 0, false});
  b.OnTrack({11, 10, "python3", kPid, kLauncher, false});
  b.OnTrack({20, 0, typed ? "track 1" : "GPU-5f2a1c3e (H200)", 0, 0, false});
  b.OnTrack({21, 20, typed ? "track 2" : "python3 500", 0, 0, false});
  b.OnTrack({12, 21, typed ? "track 3" : "GPU-5f2a1c3e (H200) stream 7", 0, 0, false});
  if (typed) {
    Identity(s, 20, "gpu_device", {Str("gpu_uuid", kUuid), Str("gpu_model", "H200")});
    model::TrackArg process = Int("process_track", 10);
    Identity(s, 21, "gpu_process", {process});
    Identity(s, 12, "gpu_stream", {});
  }
  Topology(s, gpu_node, 0);
  for (int i = 0; i < 100; ++i) {
    uint64_t t = kBase + i * 10 * kMs;
    Slice(s, 11, t, t + 50 * kUs, "cudaLaunchKernel", i + 1, false);
    Slice(s, 12, t + 100 * kUs, t + 6 * kMs, "gemm", i + 1, true);
  }
  s.Switch(kBase, 2, 0, kLauncher);
  s.Switch(kBase + off, 2, kLauncher, 0, 1);
  s.Wake(kBase + off, 2, kLauncher, 0);
  s.Switch(kBase + off + 10 * kUs, 0, 0, kLauncher);
  s.Switch(kBase + 1000 * kMs, 0, kLauncher, 0, 1);
  // The other CPUs have data (a short task at both ends).
  s.Thread(300, 300, "other").Process(300, "other");
  for (uint32_t cpu : {1u, 3u}) {
    s.Switch(kBase, cpu, 0, 300).Switch(kBase + 10 * kUs, cpu, 300, 0, 1);
    s.Switch(kBase + 1000 * kMs, cpu, 0, 300).Switch(kBase + 1000 * kMs + 10 * kUs, cpu, 300, 0, 1);
  }
  return s;
}

TEST(NumaLocality, AGpuLauncherRunningOffItsGpusNodeIsNamedWithTheTimeOffNode) {
  Synth s = Launcher(400 * kMs, 0);
  Timeline t = s.Build();
  Analysis a = AnalyzeOrDie(t, {"pt_main_thread"});
  auto found = FindingsOf(a, "numa_locality");
  ASSERT_EQ(found.size(), 1u);
  const Finding& f = found[0];
  EXPECT_EQ(f.kind, "off_node_thread");
  EXPECT_EQ(f.culprit_kind, "numa_node");
  EXPECT_EQ(f.focus_tids, std::vector<int32_t>{kLauncher});
  EXPECT_EQ(f.cpus, std::vector<uint32_t>{2});
  EXPECT_NEAR(static_cast<double>(f.cost_ns), 400.0 * kMs, 1.0 * kMs);
  EXPECT_EQ(f.Metric("home_node", -1), 0);
  EXPECT_EQ(f.Metric("other_node", -1), 1);
  EXPECT_NEAR(f.Metric("running_share"), 0.4, 0.01);
  EXPECT_NE(f.title.find("GPU-5f2a1c3e"), std::string::npos) << f.title;
  EXPECT_TRUE(a.not_measurable.empty());
}

// The GPU's node comes from its group's identity (UUID), and the finding
// names the GPU from it: the same finding with tracks named "track 1".
TEST(NumaLocality, TheGpusNodeAndNameComeFromItsIdentityNotItsTrackName) {
  Synth named = Launcher(400 * kMs, 0);
  Synth typed = Launcher(400 * kMs, 0, true);
  Timeline tn = named.Build(), tt = typed.Build();
  auto by_name = FindingsOf(AnalyzeOrDie(tn, {"pt_main_thread"}), "numa_locality");
  auto by_identity = FindingsOf(AnalyzeOrDie(tt, {"pt_main_thread"}), "numa_locality");
  ASSERT_EQ(by_name.size(), 1u);
  ASSERT_EQ(by_identity.size(), 1u);
  EXPECT_EQ(by_identity[0].title, by_name[0].title);
  EXPECT_EQ(by_identity[0].cost_ns, by_name[0].cost_ns);
  EXPECT_NE(by_identity[0].title.find("GPU-5f2a1c3e (H200)"), std::string::npos) << by_identity[0].title;
}

TEST(NumaLocality, ANearMissUnderTheThresholdIsNoFinding) {
  Synth s = Launcher(8 * kMs, 0);  // 8 ms off node: under numa.min_delay (10 ms)
  Timeline t = s.Build();
  Analysis a = AnalyzeOrDie(t, {"pt_main_thread"});
  EXPECT_TRUE(FindingsOf(a, "numa_locality").empty());
}

TEST(NumaLocality, TheHomeNodeIsTheGpusNode) {
  Synth s = Launcher(400 * kMs, 1);  // the GPU on node 1: CPU 2 is home, CPU 0 off for 600 ms
  Timeline t = s.Build();
  Analysis a = AnalyzeOrDie(t, {"pt_main_thread"});
  auto found = FindingsOf(a, "numa_locality");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].Metric("home_node", -1), 1);
  EXPECT_NEAR(static_cast<double>(found[0].cost_ns), 600.0 * kMs, 1.0 * kMs);
  EXPECT_EQ(found[0].cpus, std::vector<uint32_t>{0});
}

// eth0 (node `nic_node`) has IRQ 45 delivered to CPU `irq_cpu`, which takes
// `interrupts` of it over 1 s while the focus thread runs there.
Timeline NicIrq(int nic_node, const char* irq_cpu, int interrupts) {
  Synth s;
  s.Process(100, "trainer").Thread(100, 100, "trainer");
  s.IrqName(45, "eth0-TxRx-0");
  Topology(s, -1, nic_node);
  Meta(s, "nic irq cpus", {Int("irq", 45), Str("device", "eth0"), Str("cpus", irq_cpu), Int("effective", 1),
                           Str("phase", "start")});
  Meta(s, "nic irq cpus", {Int("irq", 45), Str("device", "eth0"), Str("cpus", irq_cpu), Int("effective", 1),
                           Str("phase", "end")});
  s.Switch(kBase, 0, 0, 100).Switch(kBase + 1000 * kMs, 0, 100, 0, 1);
  for (int i = 0; i < interrupts; ++i) {
    uint64_t at = kBase + 1 * kMs + static_cast<uint64_t>(i) * (990 * kMs / static_cast<uint64_t>(interrupts));
    s.Irq(0, at, at + 20 * kUs, 45);
  }
  s.Net(kBase + 500 * kMs, 0, model::NetTraceKind::kRxPacket, "eth0", 1500);
  s.Thread(300, 300, "other").Process(300, "other");
  s.Switch(kBase, 2, 0, 300).Switch(kBase + 10 * kUs, 2, 300, 0, 1);
  s.Switch(kBase + 1000 * kMs, 2, 0, 300).Switch(kBase + 1000 * kMs + 10 * kUs, 2, 300, 0, 1);
  return s.Build();
}

std::vector<Finding> OfKind(const Analysis& a, std::string_view kind) {
  std::vector<Finding> out;
  for (const auto& f : FindingsOf(a, "numa_locality"))
    if (f.kind == kind) out.push_back(f);
  return out;
}

TEST(NumaLocality, NicIrqsDeliveredOffTheNicsNodeAreNamedWithTheirInterrupts) {
  Timeline t = NicIrq(1, "0", 500);
  Analysis a = AnalyzeOrDie(t, {"trainer"});
  auto found = OfKind(a, "nic_irq_off_node");
  ASSERT_EQ(found.size(), 1u);
  const Finding& f = found[0];
  EXPECT_EQ(f.kind, "nic_irq_off_node");
  EXPECT_EQ(f.device, "eth0");
  EXPECT_EQ(f.cpus, std::vector<uint32_t>{0});
  EXPECT_EQ(f.Metric("interrupts"), 500);
  EXPECT_EQ(f.Metric("off_node_irqs"), 1);
  EXPECT_NEAR(f.Metric("focus_ns"), 500 * 20.0 * kUs, 1.0 * kUs);
  // Without GPU work the thread's home is the NIC its traffic used: the
  // trainer ran on node 0, eth0 is on node 1.
  auto threads = OfKind(a, "off_node_thread");
  ASSERT_EQ(threads.size(), 1u);
  EXPECT_EQ(threads[0].Metric("home_node", -1), 1);
  EXPECT_NE(threads[0].title.find("NIC eth0"), std::string::npos) << threads[0].title;
}

TEST(NumaLocality, NicIrqsOnTheNicsNodeOrTooFewAreNoFinding) {
  EXPECT_TRUE(FindingsOf(AnalyzeOrDie(NicIrq(0, "0", 500), {"trainer"}), "numa_locality").empty());
  // 90 interrupts: under numa.min_irqs (100).
  EXPECT_TRUE(OfKind(AnalyzeOrDie(NicIrq(1, "0", 90), {"trainer"}), "nic_irq_off_node").empty());
}

TEST(NumaLocality, OneNodeOrDevicesWithoutANodeIsNotMeasurable) {
  Synth s;
  s.Process(100, "trainer").Thread(100, 100, "trainer");
  s.builder().OnTrack({kMeta, 0, "gpunoise node", 0, 0, false});
  Meta(s, "numa node", {Int("node", 0), Str("cpus", "0-3")});
  Meta(s, "numa device", {Str("kind", "nic"), Str("name", "eth0"), Str("bus_id", ""), Int("numa_node", -1)});
  s.Switch(kBase, 2, 0, 100).Switch(kBase + 1000 * kMs, 2, 100, 0, 1);
  Analysis a = AnalyzeOrDie(s.Build(), {"trainer"});
  EXPECT_TRUE(FindingsOf(a, "numa_locality").empty());
  ASSERT_EQ(a.not_measurable.size(), 1u);
  EXPECT_EQ(a.not_measurable[0].kind, "numa_locality");
  EXPECT_EQ(a.not_measurable[0].reason, "one NUMA node with CPUs");

  Synth two;
  two.Process(100, "trainer").Thread(100, 100, "trainer");
  two.builder().OnTrack({kMeta, 0, "gpunoise node", 0, 0, false});
  Meta(two, "numa node", {Int("node", 0), Str("cpus", "0-1")});
  Meta(two, "numa node", {Int("node", 1), Str("cpus", "2-3")});
  Meta(two, "numa device", {Str("kind", "nic"), Str("name", "eth0"), Str("bus_id", ""), Int("numa_node", -1)});
  two.Switch(kBase, 2, 0, 100).Switch(kBase + 1000 * kMs, 2, 100, 0, 1);
  Analysis b = AnalyzeOrDie(two.Build(), {"trainer"});
  ASSERT_EQ(b.not_measurable.size(), 1u);
  EXPECT_NE(b.not_measurable[0].reason.find("numa_node -1"), std::string::npos);
}

TEST(NumaLocality, ATraceWithoutTopologyIsNotMeasurable) {
  Synth s;
  s.Process(100, "trainer").Thread(100, 100, "trainer");
  s.Switch(kBase, 0, 0, 100).Switch(kBase + 1000 * kMs, 0, 100, 0, 1);
  Analysis a = AnalyzeOrDie(s.Build(), {"trainer"});
  ASSERT_EQ(a.not_measurable.size(), 1u);
  EXPECT_NE(a.not_measurable[0].reason.find("no NUMA topology"), std::string::npos);
}

}  // namespace
}  // namespace gpunoise::analyze
