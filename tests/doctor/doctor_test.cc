// The whole doctor over fixture trees: a good node passes every check, an
// empty tree makes every check unknown with a reason, and sources/samples
// behave as documented.
#include "doctor/doctor.h"

#include <gtest/gtest.h>

#include "doctor/good_node.h"

namespace gpunoise::doctor::testing {
namespace {

TEST(Doctor, GoodNodePassesEveryCheck) {
  FixtureTree tree;
  BuildGoodNode(tree);
  auto run = Gather(tree);
  ASSERT_TRUE(run->inputs.ok()) << run->inputs.error().message;
  auto results = RunChecks(*run->inputs);
  ASSERT_EQ(results.size(), CheckIds().size());
  for (const auto& r : results) {
    EXPECT_EQ(r.verdict, Verdict::kOk) << r.id << ": " << r.saw;
    EXPECT_FALSE(r.saw.empty()) << r.id;
    EXPECT_FALSE(r.why.empty()) << r.id;
  }
  EXPECT_EQ(ExitCode(results, {}), 0);
}

TEST(Doctor, EmptyRootMakesEveryCheckUnknownWithAReason) {
  FixtureTree tree;
  auto run = Gather(tree);
  ASSERT_TRUE(run->inputs.ok());
  auto results = RunChecks(*run->inputs);
  for (const auto& r : results) {
    EXPECT_EQ(r.verdict, Verdict::kUnknown) << r.id << ": " << r.saw;
    EXPECT_FALSE(r.saw.empty()) << r.id;
  }
  // Unknown does not count: a node without data (or without GPUs) is not drained.
  EXPECT_EQ(ExitCode(results, {}), 0);
  EXPECT_EQ(ExitCode(results, {.strict = true}), 1);
}

TEST(Doctor, SkipLeavesOutChecksByIdOrFamily) {
  FixtureTree tree;
  BuildGoodNode(tree);
  auto run = Gather(tree);
  auto results = RunChecks(*run->inputs, {"gpu", "cpu.daemons"});
  for (const auto& r : results) {
    EXPECT_NE(r.id.rfind("gpu.", 0), 0u) << r.id;
    EXPECT_NE(r.id, "cpu.daemons");
  }
  EXPECT_EQ(results.size(), CheckIds().size() - 5);
}

TEST(Doctor, ZeroSampleIntervalTakesOneSample) {
  FixtureTree tree;
  BuildGoodNode(tree);
  int sleeps = 0;
  FakeSources fakes;
  fakes.between_samples = [&] { ++sleeps; };
  DoctorOptions options;
  options.sample_interval_ns = 0;
  auto run = Gather(tree, fakes, options);
  EXPECT_EQ(run->inputs->samples.size(), 1u);
  EXPECT_EQ(sleeps, 0);
  EXPECT_EQ(RunOne(*run->inputs, "nic.errors").verdict, Verdict::kUnknown);
  EXPECT_NE(RunOne(*run->inputs, "nic.errors").saw.find("growth not sampled"), std::string::npos);
}

TEST(Doctor, BadFocusPidIsAnError) {
  FixtureTree tree;
  BuildGoodNode(tree);
  DoctorOptions options;
  options.focus.pids = {777};
  auto run = Gather(tree, {}, options);
  ASSERT_FALSE(run->inputs.ok());
  EXPECT_NE(run->inputs.error().message.find("failed to find process 777"), std::string::npos);
}

TEST(ExitCode, StatusStyleIsWorstVerdict) {
  CheckResult ok{.id = "a", .verdict = Verdict::kOk};
  CheckResult warn{.id = "b", .verdict = Verdict::kWarn};
  CheckResult fail{.id = "c", .verdict = Verdict::kFail};
  CheckResult unknown{.id = "d", .verdict = Verdict::kUnknown};
  EXPECT_EQ(ExitCode({ok, unknown}, {}), 0);
  EXPECT_EQ(ExitCode({ok, warn, unknown}, {}), 1);
  EXPECT_EQ(ExitCode({ok, warn, fail}, {}), 2);
  EXPECT_EQ(ExitCode({ok, unknown}, {.strict = true}), 1);
  EXPECT_EQ(ExitCode({fail, unknown}, {.strict = true}), 2);
}

TEST(ExitCode, NpdStyleIsZeroOkOneProblemTwoUnknown) {
  CheckResult ok{.id = "a", .verdict = Verdict::kOk};
  CheckResult warn{.id = "b", .verdict = Verdict::kWarn};
  CheckResult fail{.id = "c", .verdict = Verdict::kFail};
  CheckResult unknown{.id = "d", .verdict = Verdict::kUnknown};
  ExitPolicy npd{.style = ExitCodeStyle::kNpd};
  EXPECT_EQ(ExitCode({ok, unknown}, npd), 0);
  EXPECT_EQ(ExitCode({ok, warn}, npd), 0);  // problem at fail (default)
  EXPECT_EQ(ExitCode({ok, fail}, npd), 1);
  ExitPolicy npd_warn{.style = ExitCodeStyle::kNpd, .problem_at = Verdict::kWarn};
  EXPECT_EQ(ExitCode({ok, warn}, npd_warn), 1);
  ExitPolicy npd_strict{.style = ExitCodeStyle::kNpd, .strict = true};
  EXPECT_EQ(ExitCode({ok, unknown}, npd_strict), 2);
  EXPECT_EQ(ExitCode({fail, unknown}, npd_strict), 1);
}

}  // namespace
}  // namespace gpunoise::doctor::testing
