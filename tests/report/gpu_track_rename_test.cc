// GPU tracks are found by their identity (model/track_identity.h), not by
// their names: a machine's trace file (GPU fragment written by the CUPTI
// library's converter) whose every track name was rewritten gives the same
// findings and the same per-GPU split.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "analyze/analysis.h"
#include "analyze/node_summary.h"
#include "analyze/timeline_builder.h"
#include "import/test_trace.h"
#include "import/trace_reader.h"
#include "import/track_rename.h"
#include "report/fleet_synthetic.h"

namespace gpunoise::testing {
namespace {

struct Read {
  std::vector<std::tuple<std::string, std::string, std::string, uint64_t>> findings;  // detector, kind, culprit, cost
  std::vector<std::tuple<int32_t, uint64_t, uint64_t, std::string>> gpus;  // rank, steps, host wait, name
};

Read ReadTrace(const std::string& path) {
  analyze::TimelineBuilder builder;
  import::TraceReader reader(builder);
  auto stats = reader.ReadFile(path);
  EXPECT_TRUE(stats.ok()) << (stats.ok() ? "" : stats.error().message);
  analyze::Timeline t = builder.Finish();
  auto a = analyze::Analyze(t, {});
  EXPECT_TRUE(a.ok());
  Read r;
  if (!a.ok()) return r;
  for (const auto& f : a->findings) r.findings.emplace_back(f.detector, f.kind, f.culprit, f.cost_ns);
  for (const auto& g : analyze::SummarizeNode(t, *a, {}).gpus) r.gpus.emplace_back(g.rank, g.steps, g.host_wait_ns, g.gpu);
  return r;
}

std::string Write(const ScopedTempDir& dir, const std::string& name, const std::string& bytes) {
  TestTrace trace;
  trace.AddRaw(bytes);
  return trace.Write(dir.path(), name);
}

bool HasGap(const Read& r) {
  for (const auto& [detector, kind, culprit, cost] : r.findings)
    if (detector == "gpu_idle_gap" && culprit.find("NET_RX") != std::string::npos) return true;
  return false;
}

TEST(GpuTrackIdentity, RenamingEveryTrackOfAGpuTraceKeepsTheFindings) {
  ScopedTempDir dir;
  SynthJob job;
  job.machines = {{"node0", 0}, {"node1", 0, 5'000'000}};
  job.steps = 10;
  auto nodes = BuildJob(job, dir.path());
  ASSERT_EQ(nodes.size(), 2u);
  const std::string bytes = TraceFileBytes(nodes[1].trace_path);
  RenameResult renamed = RenameTracks(bytes, true, false);
  EXPECT_GT(renamed.renamed, 4);

  Read before = ReadTrace(nodes[1].trace_path);
  // The launcher's CPU storm holds GPU 0 idle: a gap named for NET_RX, and
  // both GPUs split by rank.
  EXPECT_TRUE(HasGap(before));
  ASSERT_EQ(before.gpus.size(), 2u);
  // Each GPU named from its identity (UUID or index, model), not its track.
  for (const auto& g : before.gpus) EXPECT_TRUE(std::get<3>(g).starts_with("GPU")) << std::get<3>(g);
  Read after = ReadTrace(Write(dir, "renamed.pftrace", renamed.bytes));
  EXPECT_EQ(after.findings, before.findings);
  EXPECT_EQ(after.gpus, before.gpus);

  // Without identities only the old names tell: as they were they give the
  // same, renamed they give no GPU work at all (so the check above can fail).
  Read old = ReadTrace(Write(dir, "old.pftrace", RenameTracks(bytes, false, true).bytes));
  EXPECT_EQ(old.findings, before.findings);
  EXPECT_EQ(old.gpus, before.gpus);
  Read lost = ReadTrace(Write(dir, "old-renamed.pftrace", RenameTracks(bytes, true, true).bytes));
  EXPECT_FALSE(HasGap(lost));
  EXPECT_TRUE(lost.gpus.empty());
}

}  // namespace
}  // namespace gpunoise::testing
