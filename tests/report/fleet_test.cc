// The cross-node report on synthetic jobs of 6 machines x 2 GPUs built
// through the CUPTI converter (fleet_synthetic.h): two communicators (an
// all-reduce among all 12 ranks, an all-gather without rank 11), +-30 us
// jitter on every collective, REALTIME clocks up to 300 us off.
#include "analyze/fleet.h"
#include "analyze/node_summary.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "common/json_value.h"
#include "report/fleet_report.h"
#include "report/json_report.h"
#include "report/node_json.h"
#include "import/test_trace.h"
#include "integration/support/workloads.h"
#include "report/fleet_synthetic.h"

namespace gpunoise::testing {
namespace {

using analyze::AnalyzeFleet;
using analyze::FleetAnalysis;

constexpr uint64_t kMsNs = 1'000'000;

SynthJob Job() {
  SynthJob job;
  const int64_t errors[] = {300'000, -300'000, 150'000, -200'000, 280'000, 0};
  for (int i = 0; i < 6; ++i) job.machines.push_back({"node" + std::to_string(i), errors[i]});
  job.absent_from_b = 11;
  return job;
}

std::vector<analyze::NodeSummary> Summaries(const std::vector<SynthNode>& nodes) {
  std::vector<analyze::NodeSummary> out;
  for (const auto& n : nodes) out.push_back(n.summary);
  return out;
}

const analyze::MachineRow& RowOf(const FleetAnalysis& fa, const std::string& name) {
  for (const auto& r : fa.machines)
    if (fa.nodes[r.machine].machine == name) return r;
  ADD_FAILURE() << "no machine " << name;
  return fa.machines.front();
}

TEST(FleetReport, LateMachineWithAStormOnItsLauncherCpuIsNamedWithItsStorm) {
  SynthJob job = Job();
  job.machines[2].storm_ns = 5 * kMsNs;
  job.machines[4].decoy_storm = true;  // a storm with no lag: not the straggler
  FleetAnalysis fa = AnalyzeFleet(Summaries(BuildJob(job)), {});
  ASSERT_EQ(fa.findings.size(), 1u) << report_export::FormatFleetText(fa);
  const analyze::Finding& f = fa.findings[0];
  EXPECT_EQ(f.detector, "straggler");
  EXPECT_EQ(f.culprit, "node2");
  EXPECT_EQ(f.kind, "host_side") << f.title;
  EXPECT_NEAR(f.Metric("cost_per_step_ns"), 5.0 * kMsNs, 0.15 * kMsNs);
  // Its peers (11 ranks) each wait for it about 5 ms per step.
  EXPECT_GT(f.Metric("peers_wait_per_step_ns"), 10 * 4.5 * kMsNs);
  bool storm = false;
  for (const auto& c : fa.causes) storm |= c.detector == "softirq_storm" && c.culprit.find("NET_RX") != std::string::npos;
  EXPECT_TRUE(storm) << f.title;
  EXPECT_NE(f.title.find("NET_RX"), std::string::npos) << f.title;
  // The decoy's own storm finding exists, but it costs the job nothing.
  EXPECT_LT(RowOf(fa, "node4").cost_per_step_ns, 100'000u);
  bool decoy_storm = false;
  for (const auto& n : fa.nodes)
    if (n.machine == "node4")
      for (const auto& df : n.findings) decoy_storm |= df.detector == "softirq_storm";
  EXPECT_TRUE(decoy_storm);
  EXPECT_EQ(fa.machines.front().machine, 2u) << "ranked first";
  EXPECT_EQ(fa.matched_instances, 2u * job.steps);
}

TEST(FleetReport, CollectivesAlignTheClocksToWithinTwentyMicroseconds) {
  SynthJob job = Job();
  job.machines[2].storm_ns = 5 * kMsNs;
  FleetAnalysis fa = AnalyzeFleet(Summaries(BuildJob(job)), {});
  // A machine whose clock is fast by e gets a correction of about -e (plus
  // one common constant): corrected errors agree within 20 us.
  std::vector<int64_t> left;
  for (const auto& r : fa.machines) {
    ASSERT_EQ(r.alignment.method, "collectives") << fa.nodes[r.machine].machine;
    left.push_back(job.machines[r.machine].clock_error_ns + r.alignment.realtime_correction_ns);
    EXPECT_LT(r.alignment.spread_ns, 30'000);
  }
  auto [lo, hi] = std::minmax_element(left.begin(), left.end());
  EXPECT_LT(*hi - *lo, 20'000) << "before alignment the clocks were 600 us apart";
}

TEST(FleetReport, MachineWithLongerComputeKernelsIsAGpuSideCause) {
  SynthJob job = Job();
  job.machines[3].extra_compute_ns = 5 * kMsNs;
  job.machines[4].decoy_storm = true;
  FleetAnalysis fa = AnalyzeFleet(Summaries(BuildJob(job)), {});
  ASSERT_EQ(fa.findings.size(), 1u) << report_export::FormatFleetText(fa);
  const analyze::Finding& f = fa.findings[0];
  EXPECT_EQ(f.culprit, "node3");
  EXPECT_EQ(f.kind, "gpu_side") << f.title;
  EXPECT_TRUE(fa.causes.empty()) << "the host is not blamed";
  EXPECT_NE(f.title.find("GPU-side"), std::string::npos) << f.title;
  // One of its two GPUs computes 5 ms longer per step (judged per GPU: one
  // slow GPU of eight would hardly move the machine's average).
  EXPECT_NEAR(f.Metric("compute_excess_per_step_ns"), 5.0 * kMsNs, 0.2 * kMsNs);
}

TEST(FleetReport, NoLagMeansNoStragglerFinding) {
  SynthJob job = Job();
  job.machines[4].decoy_storm = true;
  FleetAnalysis fa = AnalyzeFleet(Summaries(BuildJob(job)), {});
  EXPECT_TRUE(fa.findings.empty()) << report_export::FormatFleetText(fa);
  EXPECT_EQ(fa.straggler, static_cast<size_t>(-1));
  std::string text = report_export::FormatFleetText(fa);
  EXPECT_NE(text.find("No straggler"), std::string::npos);
}

TEST(FleetReport, WithoutCollectiveAlignmentTheClockErrorsLookLikeLag) {
  // REALTIME only: 300 us errors, in lags, are what --align collectives removes.
  SynthJob job = Job();
  analyze::FleetOptions options;
  options.align_collectives = false;
  options.min_lag_per_step_ns = 100'000;
  FleetAnalysis fa = AnalyzeFleet(Summaries(BuildJob(job)), options);
  for (const auto& r : fa.machines) EXPECT_EQ(r.alignment.method, "REALTIME");
  uint64_t worst = 0;
  for (const auto& r : fa.ranks) worst = std::max(worst, r.mean_lag_ns);
  EXPECT_GT(worst, 400'000u);
  FleetAnalysis aligned = AnalyzeFleet(Summaries(BuildJob(job)), {});
  uint64_t aligned_worst = 0;
  for (const auto& r : aligned.ranks) aligned_worst = std::max(aligned_worst, r.mean_lag_ns);
  EXPECT_LT(aligned_worst, 80'000u);
}

TEST(FleetReport, RankAbsentFromACommunicatorIsMatchedOnlyWhereItTakesPart) {
  SynthJob job = Job();
  FleetAnalysis fa = AnalyzeFleet(Summaries(BuildJob(job)), {});
  for (const auto& r : fa.ranks) {
    EXPECT_EQ(r.instances, r.rank == 11 ? 30u : 60u) << "rank " << r.rank;
    EXPECT_GE(r.rank, 0);
  }
  EXPECT_EQ(fa.ranks.size(), 12u);
}

// NCCL 2.19+'s typed payloads: communicator, message size and kind come
// from the decoded fields, not from range names (these ranges are all
// named "NCCL collective") nor from kernel names alone.
TEST(FleetReport, TypedNcclPayloadsMatchCollectivesByCommunicatorSequenceAndSize) {
  SynthJob job = Job();
  job.typed_payloads = true;
  job.machines[2].storm_ns = 5 * kMsNs;
  std::vector<SynthNode> nodes = BuildJob(job);
  for (const auto& c : nodes[0].summary.collectives) {
    EXPECT_TRUE(c.comm == kCommA || c.comm == kCommB) << c.comm;
    EXPECT_EQ(c.bytes, c.comm == kCommA ? kAllReduceBytes : kAllGatherBytes);
  }
  FleetAnalysis fa = AnalyzeFleet(Summaries(nodes), {});
  for (const auto& r : fa.ranks) EXPECT_EQ(r.instances, r.rank == 11 ? 30u : 60u) << "rank " << r.rank;
  ASSERT_LT(fa.straggler, fa.nodes.size());
  EXPECT_EQ(fa.nodes[fa.straggler].machine, "node2");
  for (const auto& m : fa.machines) EXPECT_EQ(m.alignment.method, "collectives") << fa.nodes[m.machine].machine;
}

TEST(FleetReport, RanksWhoseCallsDifferInSizeAreNotTheSameInstance) {
  SynthJob job = Job();
  job.typed_payloads = true;
  job.size_mismatch_machine = 1;  // ranks 2 and 3
  job.size_mismatch_step = 4;
  FleetAnalysis fa = AnalyzeFleet(Summaries(BuildJob(job)), {});
  for (const auto& r : fa.ranks) {
    uint64_t expected = (r.rank == 11 ? 30u : 60u) - (r.rank == 2 || r.rank == 3 ? 1u : 0u);
    EXPECT_EQ(r.instances, expected) << "rank " << r.rank;
  }
}

TEST(FleetReport, EachGpuHasItsOwnIdleSplit) {
  SynthJob job = Job();
  job.machines[2].storm_ns = 5 * kMsNs;
  auto nodes = BuildJob(job);
  const auto& gpus = nodes[2].summary.gpus;
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].gpu, "GPU 0 (H200)");
  EXPECT_EQ(gpus[0].rank, 4);
  EXPECT_EQ(gpus[1].rank, 5);
  // GPU 0's launcher was held 5 ms per step by the storm: host wait.
  double per_step0 = static_cast<double>(gpus[0].host_wait_ns) / gpus[0].steps;
  double per_step1 = static_cast<double>(gpus[1].host_wait_ns) / gpus[1].steps;
  EXPECT_NEAR(per_step0 - per_step1, 5.0 * kMsNs, 0.2 * kMsNs);
  // GPU 1 waits for GPU 0 inside its all-reduce kernel (NCCL's kernel
  // starts when its rank arrives and spins until the last one has).
  EXPECT_GT(gpus[1].collective_ns / gpus[1].steps, gpus[0].collective_ns / gpus[0].steps + 4 * kMsNs);
  EXPECT_EQ(gpus[0].step_source, "collective period");
  EXPECT_NEAR(static_cast<double>(gpus[0].step_ns), 14.0 * kMsNs, 0.1 * kMsNs);
  EXPECT_NEAR(static_cast<double>(gpus[0].collective_ns) / gpus[0].steps, 1.6 * kMsNs, 0.15 * kMsNs);
}

TEST(FleetReport, StepsAreTheNvtxRangesNamedByStep) {
  SynthJob job = Job();
  job.steps = 10;
  job.step_range = "train_step";
  job.step_name = "train_step";
  auto nodes = BuildJob(job);
  const auto& g = nodes[0].summary.gpus[0];
  EXPECT_EQ(g.step_source, "nvtx train_step");
  EXPECT_EQ(g.steps, 10u);
  EXPECT_NEAR(static_cast<double>(g.step_ns), 12.005 * kMsNs, 0.001 * kMsNs);
  job.step_name = "no_such_range";  // falls back to the collectives' period
  EXPECT_EQ(BuildJob(job)[0].summary.gpus[0].step_source, "collective period");
}

TEST(FleetReport, PerNodeJsonSummariesGiveTheSameVerdict) {
  SynthJob job = Job();
  job.machines[2].storm_ns = 5 * kMsNs;
  job.machines[4].decoy_storm = true;
  auto nodes = BuildJob(job);
  std::vector<analyze::NodeSummary> parsed;
  for (const auto& n : nodes) {
    report_export::ReportInput in{"n.pftrace", &n.analysis, nullptr, &n.summary};
    std::string json = report_export::FormatJsonReport(in);
    auto doc = ParseJson(json);
    ASSERT_TRUE(doc.ok()) << doc.error().message;
    auto node = report_export::ParseNodeReport(*doc, "n.json");
    ASSERT_TRUE(node.ok()) << node.error().message;
    EXPECT_EQ(node->collectives.size(), n.summary.collectives.size());
    EXPECT_EQ(node->realtime_minus_boottime, n.summary.realtime_minus_boottime);
    parsed.push_back(std::move(node).value());
  }
  FleetAnalysis fa = AnalyzeFleet(parsed, {});
  FleetAnalysis direct = AnalyzeFleet(Summaries(nodes), {});
  ASSERT_EQ(fa.findings.size(), 1u);
  EXPECT_EQ(fa.findings[0].culprit, "node2");
  EXPECT_EQ(fa.findings[0].cost_ns, direct.findings[0].cost_ns);
  ASSERT_FALSE(fa.causes.empty());
  EXPECT_EQ(fa.causes[0].title, direct.causes[0].title);

  auto fleet_json = ParseJson(report_export::FormatFleetJson(fa));
  ASSERT_TRUE(fleet_json.ok()) << fleet_json.error().message;
  EXPECT_EQ((*fleet_json)["schema"].String(), "gpunoise.fleet/1");
  EXPECT_EQ((*fleet_json)["straggler"]["machine"].String(), "node2");
  EXPECT_EQ((*fleet_json)["nodes"].items().size(), 6u);
  EXPECT_EQ((*fleet_json)["findings"].items()[0]["detector"].String(), "straggler");
}

TEST(FleetReport, NotAReportIsAnErrorNamingTheFile) {
  auto doc = ParseJson(R"({"schema": "something/else"})");
  ASSERT_TRUE(doc.ok());
  auto node = report_export::ParseNodeReport(*doc, "x.json");
  ASSERT_FALSE(node.ok());
  EXPECT_NE(node.error().message.find("x.json"), std::string::npos);
  auto old = ParseJson(R"({"schema": "gpunoise.report/1", "findings": []})");
  ASSERT_TRUE(old.ok());
  EXPECT_FALSE(report_export::ParseNodeReport(*old, "old.json").ok());
}

}  // namespace
}  // namespace gpunoise::testing

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;

TEST(FleetReportCommand, PerNodeJsonFilesMakeTheCrossNodeReport) {
  SynthJob job = Job();
  job.machines[2].storm_ns = 5 * kMsNs;
  job.machines[4].decoy_storm = true;
  auto nodes = BuildJob(job);
  ScopedTempDir dir;
  std::vector<std::string> args = {GpunoiseBinary(), "report"};
  for (const auto& n : nodes) {
    report_export::ReportInput in{n.summary.machine + ".pftrace", &n.analysis, nullptr, &n.summary};
    TestTrace file;
    file.AddRaw(report_export::FormatJsonReport(in));
    args.push_back(file.Write(dir.path(), n.summary.machine + ".json"));
  }
  {
    ChildProcess p(args);
    ASSERT_EQ(p.Wait(60s), 0) << p.stderr_text();
    const std::string out = p.stdout_text();
    EXPECT_NE(out.find("gpunoise fleet report: 6 machines"), std::string::npos) << out;
    EXPECT_NE(out.find(" 1. [straggler] node2 (ranks 4,5) holds the job back"), std::string::npos) << out;
    EXPECT_NE(out.find("NODES"), std::string::npos);
    EXPECT_NE(out.find("collectives: REALTIME"), std::string::npos) << out;
    std::printf("%s", out.c_str());  // the example in docs/fleet.md
  }
  args.push_back("--json");
  ChildProcess p(args);
  ASSERT_EQ(p.Wait(60s), 0) << p.stderr_text();
  auto doc = ParseJson(p.stdout_text());
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  EXPECT_EQ((*doc)["straggler"]["machine"].String(), "node2");
  EXPECT_EQ((*doc)["nodes"].items()[0]["machine"].String(), "node2");
}

TEST(FleetReportCommand, AFileThatIsNeitherATraceNorAReportIsAOneLineError) {
  ScopedTempDir dir;
  TestTrace junk;
  junk.AddRaw("{\"not\": \"a report\"}");
  std::string path = junk.Write(dir.path(), "junk.json");
  ChildProcess p({GpunoiseBinary(), "report", path, path});
  EXPECT_EQ(p.Wait(60s), 1);
  EXPECT_NE(p.stderr_text().find("junk.json is not a gpunoise report"), std::string::npos) << p.stderr_text();
}

}  // namespace
}  // namespace gpunoise::testing

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;

// Collects track names of one machine of a trace.
class TrackNames : public model::TraceSink {
 public:
  void OnEvent(const model::Event&) override {}
  void OnTrack(const model::TrackInfo& t) override { names.push_back(t.name); }
  std::vector<std::string> names;
};

TEST(FleetReportCommand, AMergedTraceOfSixMachinesNamesTheStragglerAndAnnotatesEachMachine) {
  ScopedTempDir dir;
  SynthJob job = Job();
  job.machines[2].storm_ns = 5 * kMsNs;
  job.machines[4].decoy_storm = true;
  auto nodes = BuildJob(job, dir.path());
  std::vector<std::string> merge = {GpunoiseBinary(), "merge"};
  for (const auto& n : nodes) merge.push_back(n.trace_path);
  std::string all = dir.path() + "/all.pftrace", annotated = dir.path() + "/annotated.pftrace";
  merge.insert(merge.end(), {"-o", all});
  {
    ChildProcess p(merge);
    int rc = p.Wait(60s);
    const std::string said = p.stderr_text() + p.stdout_text();
    ASSERT_EQ(rc, 0) << said;
    EXPECT_NE(said.find("of 6 machines"), std::string::npos) << said;
  }
  ChildProcess p({GpunoiseBinary(), "report", all, "--annotate", annotated});
  ASSERT_EQ(p.Wait(60s), 0) << p.stderr_text();
  const std::string out = p.stdout_text();
  EXPECT_NE(out.find("gpunoise fleet report: 6 machines"), std::string::npos) << out;
  EXPECT_NE(out.find("[straggler] node2 (ranks 4,5) holds the job back"), std::string::npos) << out;
  EXPECT_NE(out.find("NET_RX"), std::string::npos) << out;
  EXPECT_NE(out.find("(machine 2)"), std::string::npos) << "each machine read apart: " << out;

  // The straggler finding is on node2's own timeline (machine 2), not the host's.
  for (uint32_t machine : {0u, 2u}) {
    TrackNames names;
    import::ReadOptions options;
    options.machine_id = machine;
    import::TraceReader reader(names, options);
    auto read = reader.ReadFile(annotated);
    ASSERT_TRUE(read.ok()) << read.error().message;
    bool findings = false, straggler = false;
    for (const auto& n : names.names) {
      findings |= n == "gpunoise findings";
      straggler |= n.find("straggler") != std::string::npos;
    }
    EXPECT_EQ(straggler, machine == 2) << "machine " << machine;
    EXPECT_TRUE(findings) << "each machine has its own findings track: machine " << machine;
  }
}

// Per-node traces, not merged: each node's copy gets its own findings
// track, and only the straggler's copy the straggler finding.
TEST(FleetReportCommand, PerNodeTracesAreEachAnnotatedIntoADirectory) {
  ScopedTempDir dir;
  SynthJob job = Job();
  job.machines[2].storm_ns = 5 * kMsNs;
  auto nodes = BuildJob(job, dir.path());
  std::vector<std::string> argv = {GpunoiseBinary(), "report"};
  for (const auto& n : nodes) argv.push_back(n.trace_path);
  const std::string out_dir = dir.path() + "/annotated";
  argv.insert(argv.end(), {"--annotate", out_dir});
  ChildProcess p(argv);
  ASSERT_EQ(p.Wait(60s), 0) << p.stderr_text();
  EXPECT_NE(p.stdout_text().find("[straggler] node2"), std::string::npos) << p.stdout_text();
  struct stat st {};
  ASSERT_EQ(::stat(out_dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::string copy = out_dir + "/node" + std::to_string(i) + ".pftrace";
    struct stat in {}, cp {};
    ASSERT_EQ(::stat(nodes[i].trace_path.c_str(), &in), 0);
    ASSERT_EQ(::stat(copy.c_str(), &cp), 0) << copy;
    EXPECT_GE(cp.st_size, in.st_size) << "the node's own packets are all still there: " << copy;
    EXPECT_EQ(cp.st_mode & 0777, 0600u) << copy;
    TrackNames names;
    import::TraceReader reader(names);
    auto read = reader.ReadFile(copy);
    ASSERT_TRUE(read.ok()) << read.error().message;
    bool straggler = false;
    for (const auto& n : names.names) straggler |= n.find("straggler") != std::string::npos;
    EXPECT_EQ(straggler, i == 2) << copy;
  }
  // JSON summaries have no trace to annotate.
  report_export::ReportInput in{"node0.pftrace", &nodes[0].analysis, nullptr, &nodes[0].summary};
  TestTrace file;
  file.AddRaw(report_export::FormatJsonReport(in));
  std::string json = file.Write(dir.path(), "node0.json");
  ChildProcess bad({GpunoiseBinary(), "report", json, nodes[1].trace_path, "--annotate", out_dir});
  EXPECT_EQ(bad.Wait(60s), 1);
  EXPECT_NE(bad.stderr_text().find("--annotate needs traces"), std::string::npos) << bad.stderr_text();
}

}  // namespace
}  // namespace gpunoise::testing

namespace gpunoise::testing {
namespace {

// CPU-only nodes: focus threads observed 2 s, waiting `wait_ms` of it.
analyze::NodeSummary CpuNode(const std::string& name, uint64_t wait_ms, uint64_t cost_ms = 0) {
  analyze::NodeSummary n;
  n.machine = name;
  n.start_ns = 1'000'000'000;
  n.end_ns = 3'000'000'000;
  n.cpu.focus_observed_ns = 2'000'000'000;
  n.cpu.focus_wait_ns = wait_ms * 1'000'000;
  n.cpu.max_softirq_share = 0.01;
  if (cost_ms) {
    analyze::Finding f;
    f.detector = "interference";
    f.kind = "run_queue_delay";
    f.title = "gn-hog (pid 7) kept gn-focus (pid 6) waiting";
    f.cost_ns = cost_ms * 1'000'000;
    n.findings.push_back(f);
  }
  return n;
}

TEST(FleetCpuSide, AMachineWhoseFocusThreadsWaitFarLongerIsNamedWithARobustScore) {
  std::vector<analyze::NodeSummary> nodes = {CpuNode("a", 20), CpuNode("b", 35), CpuNode("c", 700, 690),
                                             CpuNode("d", 10), CpuNode("e", 25)};
  FleetAnalysis fa = AnalyzeFleet(nodes, {});
  ASSERT_TRUE(fa.cpu_robust);
  ASSERT_EQ(fa.findings.size(), 1u) << report_export::FormatFleetText(fa);
  const auto& f = fa.findings[0];
  EXPECT_EQ(f.kind, "cpu_outlier");
  EXPECT_EQ(f.culprit, "c");
  EXPECT_GT(f.Metric("robust_score"), 3.5);
  ASSERT_EQ(fa.causes.size(), 1u);
  EXPECT_NE(f.title.find("gn-hog"), std::string::npos) << f.title;
  EXPECT_EQ(fa.nodes[fa.machines.front().machine].machine, "c") << "ranked first";
}

TEST(FleetCpuSide, AMachineWhoseRdmaPortsCountErrorsIsNamed) {
  std::vector<analyze::NodeSummary> nodes = {CpuNode("a", 20), CpuNode("b", 22), CpuNode("c", 21), CpuNode("d", 20),
                                             CpuNode("e", 23)};
  for (auto& n : nodes) n.cpu.rdma_ports = 1;
  nodes[3].cpu.rdma_errors = 4000;  // 2000 per second over its 2 s
  FleetAnalysis fa = AnalyzeFleet(nodes, {});
  ASSERT_EQ(fa.findings.size(), 1u) << report_export::FormatFleetText(fa);
  EXPECT_EQ(fa.findings[0].culprit, "d");
  EXPECT_NE(fa.findings[0].title.find("RDMA ports counted 2e+03 errors per second"), std::string::npos)
      << fa.findings[0].title;
}

TEST(FleetCpuSide, EqualMachinesHaveNoOutlier) {
  std::vector<analyze::NodeSummary> nodes = {CpuNode("a", 20), CpuNode("b", 22), CpuNode("c", 24), CpuNode("d", 21)};
  FleetAnalysis fa = AnalyzeFleet(nodes, {});
  EXPECT_TRUE(fa.findings.empty()) << report_export::FormatFleetText(fa);
}

TEST(FleetCpuSide, TwoMachinesGiveNoRobustScore) {
  FleetAnalysis fa = AnalyzeFleet({CpuNode("a", 20), CpuNode("c", 700, 690)}, {});
  EXPECT_FALSE(fa.cpu_robust);
  EXPECT_TRUE(fa.findings.empty());
  std::string text = report_export::FormatFleetText(fa);
  EXPECT_NE(text.find("no robust score is possible with 2 machines"), std::string::npos) << text;
  auto doc = ParseJson(report_export::FormatFleetJson(fa));
  ASSERT_TRUE(doc.ok());
  EXPECT_FALSE((*doc)["cpu_robust"].Bool(true));
  EXPECT_EQ((*doc)["cpu_side"].items()[0]["score"].type(), JsonValue::Type::kNull);
}

}  // namespace
}  // namespace gpunoise::testing

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;

const std::string kRecordJob = std::string(GPUNOISE_SOURCE_DIR) + "/docs/deploy/slurm/gpunoise-record-job";

TEST(SlurmRecordJob, PassesShellcheck) {
  if (access("/usr/bin/shellcheck", X_OK) != 0) GTEST_SKIP() << "shellcheck is not installed (Debian package shellcheck)";
  ChildProcess p({"/usr/bin/shellcheck", kRecordJob});
  EXPECT_EQ(p.Wait(60s), 0) << p.stdout_text();
}

TEST(SlurmRecordJob, DryRunStartsEveryNodeAtOneInstantAndGathersItsSummary) {
  ScopedTempDir dir;
  TestTrace squeue, scontrol;
  squeue.AddRaw("#!/bin/sh\necho 'gpu[1-2]'\n");
  scontrol.AddRaw("#!/bin/sh\n[ \"$1 $2 $3\" = 'show hostnames gpu[1-2]' ] && printf 'gpu1\\ngpu2\\n'\n");
  std::string sq = squeue.Write(dir.path(), "squeue"), sc = scontrol.Write(dir.path(), "scontrol");
  chmod(sq.c_str(), 0700);
  chmod(sc.c_str(), 0700);
  ChildProcess p({"/usr/bin/env", "GPUNOISE_DRY_RUN=1", "SQUEUE=" + sq, "SCONTROL=" + sc, kRecordJob, "4242", "-d",
                  "5", "-s", "train_step", "-o", dir.path() + "/out"});
  ASSERT_EQ(p.Wait(60s), 0) << p.stderr_text();
  std::string out = p.stdout_text(), err = p.stderr_text();
  EXPECT_NE(err.find("2 nodes of job 4242, recording 5 s from 20"), std::string::npos) << err;
  EXPECT_NE(out.find("+ srun --jobid 4242 --overlap --nodes 2 --ntasks-per-node 1"), std::string::npos) << out;
  EXPECT_NE(out.find("record --start-at"), std::string::npos) << out;
  EXPECT_NE(out.find(" 5 /var/tmp/gpunoise-4242 train_step"), std::string::npos) << out;
  EXPECT_NE(out.find("--nodelist gpu2 cat /var/tmp/gpunoise-4242/gpu2.json"), std::string::npos) << out;
  EXPECT_NE(out.find("+ gpunoise report " + dir.path() + "/out/"), std::string::npos) << out;

  ChildProcess bad({"/usr/bin/env", "SQUEUE=" + sq, "SCONTROL=" + sc, kRecordJob, "4242", "-m", "ssh"});
  EXPECT_EQ(bad.Wait(60s), 2);
  EXPECT_NE(bad.stderr_text().find("-m takes srun, pdsh or clush"), std::string::npos) << bad.stderr_text();
}

}  // namespace
}  // namespace gpunoise::testing

namespace gpunoise::analyze {
namespace {

// The GPU capture's rank wins; without one, the rank the recorder read from
// the process's environment (containers: RANK in /proc/PID/environ).
TEST(FleetRanks, RankComesFromTheGpuCaptureElseFromTheProcessEnvironment) {
  Timeline t;
  t.gpu_ranks[10] = 3;
  model::ProcessIdentity env_rank;
  env_rank.job.rank = 7;
  t.identities[10] = env_rank;
  t.identities[11] = env_rank;
  t.identities[12] = model::ProcessIdentity{};
  EXPECT_EQ(RankOfProcess(t, 10), 3);
  EXPECT_EQ(RankOfProcess(t, 11), 7);
  EXPECT_EQ(RankOfProcess(t, 12), -1);
  EXPECT_EQ(RankOfProcess(t, 13), -1);
}

}  // namespace
}  // namespace gpunoise::analyze
