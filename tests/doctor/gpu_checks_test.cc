#include "doctor/gpu_checks.h"

#include "doctor/check_test_util.h"

namespace gpunoise::doctor::testing {
namespace {

FakeSources WithGpu(const GpuHealth& health) {
  FakeSources f;
  f.gpus[kGpuBdf] = health;
  return f;
}

TEST(GpuChecks, UnknownWithoutGpusOrWithoutNvml) {
  FixtureTree empty;
  empty.SetCpus(2, 1);
  for (const char* id : {"gpu.persistence", "gpu.throttle", "gpu.ecc", "gpu.pcie_replay"}) {
    CheckResult r = Check(empty, id);
    EXPECT_EQ(r.verdict, Verdict::kUnknown) << id;
    EXPECT_SAW(r, "no NVIDIA GPU");
    EXPECT_EQ(ExitFor(r), 0);
  }
  FixtureTree tree;
  BuildGoodNode(tree);
  FakeSources fakes;
  fakes.gpu_unavailable = "failed to load NVML libnvidia-ml.so.1: cannot open shared object file";
  CheckResult r = Check(tree, "gpu.ecc", fakes);
  EXPECT_EQ(r.verdict, Verdict::kUnknown);
  EXPECT_EQ(r.saw, fakes.gpu_unavailable);
}

TEST(GpuChecks, NvmlErrorForOneGpuIsUnknownForThatGpu) {
  FixtureTree tree;
  BuildGoodNode(tree);
  FakeSources fakes;
  fakes.gpus.clear();
  CheckResult r = Check(tree, "gpu.persistence", fakes);
  EXPECT_EQ(r.verdict, Verdict::kUnknown);
  EXPECT_SAW(r, "GPU 0000:03:00.0: failed to find GPU 0000:03:00.0 in NVML");
}

TEST(Persistence, WarnsWhenOff) {
  FixtureTree tree;
  BuildGoodNode(tree);
  EXPECT_EQ(Check(tree, "gpu.persistence").verdict, Verdict::kOk);
  GpuHealth h = GoodGpu();
  h.persistence_mode = false;
  CheckResult r = Check(tree, "gpu.persistence", WithGpu(h));
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "GPU 0000:03:00.0: persistence mode off");
  EXPECT_EQ(ExitFor(r), 1);
}

TEST(Throttle, FailsForHardwareSlowdownAndWarnsForSoftwareCaps) {
  FixtureTree tree;
  BuildGoodNode(tree);
  GpuHealth h = GoodGpu();
  h.throttle_reasons = kThrottleHwSlowdown | kThrottleHwThermal;
  CheckResult r = Check(tree, "gpu.throttle", WithGpu(h));
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_SAW(r, "hardware slowdown: HW slowdown, HW thermal slowdown");
  EXPECT_EQ(ExitFor(r), 2);
  h.throttle_reasons = kThrottleSwPowerCap;
  r = Check(tree, "gpu.throttle", WithGpu(h));
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "slowed: SW power cap");
  h.throttle_reasons = kThrottleGpuIdle | kThrottleSyncBoost;
  EXPECT_EQ(Check(tree, "gpu.throttle", WithGpu(h)).verdict, Verdict::kOk);
  h.throttle_reasons = 0;  // an H200 under load reports no reason at all
  r = Check(tree, "gpu.throttle", WithGpu(h));
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_SAW(r, "clocks not held back");
  EXPECT_EQ(r.saw.find("()"), std::string::npos) << "no empty list of reasons: " << r.saw;
}

TEST(Ecc, FailsForVolatileUncorrectableErrorsOrAFailedRemap) {
  FixtureTree tree;
  BuildGoodNode(tree);
  GpuHealth h = GoodGpu();
  h.ecc_uncorrected_volatile = 4;
  CheckResult r = Check(tree, "gpu.ecc", WithGpu(h));
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_SAW(r, "4 uncorrectable ECC errors since driver load");
  EXPECT_EQ(ExitFor(r), 2);
  h = GoodGpu();
  h.remapped_rows = RemappedRows{0, 1, false, true};
  EXPECT_EQ(Check(tree, "gpu.ecc", WithGpu(h)).verdict, Verdict::kFail);
}

TEST(Ecc, WarnsForPendingRetirementOrRemap) {
  FixtureTree tree;
  BuildGoodNode(tree);
  GpuHealth h = GoodGpu();
  h.remapped_rows = RemappedRows{1, 0, true, false};
  CheckResult r = Check(tree, "gpu.ecc", WithGpu(h));
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "row remap pending a GPU reset");
  EXPECT_EQ(ExitFor(r), 1);
  h = GoodGpu();
  h.retired_pages_pending = true;
  EXPECT_EQ(Check(tree, "gpu.ecc", WithGpu(h)).verdict, Verdict::kWarn);
}

TEST(Ecc, UnknownWhenTheGpuHasNoEcc) {
  FixtureTree tree;
  BuildGoodNode(tree);
  GpuHealth h;
  h.persistence_mode = true;
  CheckResult r = Check(tree, "gpu.ecc", WithGpu(h));
  EXPECT_EQ(r.verdict, Verdict::kUnknown);
  EXPECT_SAW(r, "ECC not supported or not reported");
}

TEST(PcieReplay, WarnsWhenReplaysGrowWhileSampling) {
  FixtureTree tree;
  BuildGoodNode(tree);
  EXPECT_EQ(Check(tree, "gpu.pcie_replay").verdict, Verdict::kOk);
  FakeSources fakes;
  GpuHealth later = GoodGpu();
  later.pcie_replays = 19;
  fakes.gpus_second[kGpuBdf] = later;
  CheckResult r = Check(tree, "gpu.pcie_replay", fakes);
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "19 replays (+12 during sampling)");
  EXPECT_EQ(ExitFor(r), 1);
}

}  // namespace
}  // namespace gpunoise::doctor::testing
