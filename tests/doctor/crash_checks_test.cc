#include "doctor/crash_checks.h"

#include "doctor/check_test_util.h"

namespace gpunoise::doctor::testing {
namespace {

void SetPanic(FixtureTree& tree, int panic, int oops, int soft = 0) {
  tree.Write("/proc/sys/kernel/panic", std::to_string(panic) + "\n");
  tree.Write("/proc/sys/kernel/panic_on_oops", std::to_string(oops) + "\n");
  tree.Write("/proc/sys/kernel/softlockup_panic", std::to_string(soft) + "\n");
  tree.Write("/proc/sys/kernel/hung_task_panic", "0\n");
  tree.Write("/proc/sys/kernel/panic_on_warn", "0\n");
}

TEST(PanicSettings, ANodeThatNeverRebootsAfterAPanicIsAWarning) {
  FixtureTree tree;  // only what each step writes
  EXPECT_EQ(Check(tree, "kernel.panic").verdict, Verdict::kUnknown);  // no /proc/sys/kernel/panic
  SetPanic(tree, 0, 1);
  CheckResult r = Check(tree, "kernel.panic");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "panic=0 panic_on_oops=1 softlockup_panic=0 hung_task_panic=0 panic_on_warn=0");
  EXPECT_FALSE(r.fix.empty());
  SetPanic(tree, 10, 0);
  EXPECT_EQ(Check(tree, "kernel.panic").verdict, Verdict::kWarn);  // an oops keeps a damaged kernel running
  SetPanic(tree, 10, 1, 1);
  r = Check(tree, "kernel.panic");
  EXPECT_EQ(r.verdict, Verdict::kOk);
  // hung_task_panic=0 is named, not judged.
  bool named = false;
  for (const auto& d : r.details) named |= Contains(d, "hung_task_panic=0");
  EXPECT_TRUE(named);
}

TEST(CrashEvidence, PstoreOrKdumpIsEnough) {
  FixtureTree tree;  // only what each step writes
  EXPECT_EQ(Check(tree, "kernel.evidence").verdict, Verdict::kUnknown);
  tree.Write("/sys/kernel/kexec_crash_loaded", "0\n");
  tree.Write("/sys/kernel/kexec_crash_size", "0\n");
  CheckResult r = Check(tree, "kernel.evidence");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "no pstore backend; no kdump");
  tree.Write("/sys/kernel/kexec_crash_loaded", "1\n");
  tree.Write("/sys/kernel/kexec_crash_size", std::to_string(256 << 20) + "\n");
  r = Check(tree, "kernel.evidence");
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_SAW(r, "kdump loaded (256 MiB reserved)");
  tree.Write("/sys/kernel/kexec_crash_loaded", "0\n");
  tree.Write("/sys/module/pstore/parameters/backend", "ramoops\n");
  tree.Write("/sys/fs/pstore/dmesg-ramoops-0", "Oops\n");
  r = Check(tree, "kernel.evidence");
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_SAW(r, "pstore backend ramoops; 1 pstore record(s) of an earlier crash");
}

TEST(BlackBox, UncollectedDataOfThePreviousBootIsAWarning) {
  FixtureTree tree;  // only what each step writes
  EXPECT_EQ(Check(tree, "kernel.blackbox").verdict, Verdict::kUnknown);
  tree.Write("/sys/kernel/tracing/instances/other/tracing_on", "1\n");
  CheckResult r = Check(tree, "kernel.blackbox");
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_SAW(r, "not armed");
  const std::string box = "/sys/kernel/tracing/instances/gpunoise_blackbox";
  tree.Write(box + "/last_boot_info", "trace_clock: boot\nffffffffa2e00000\t[kernel]\n");
  tree.Write(box + "/tracing_on", "0\n");
  tree.Write(box + "/per_cpu/cpu0/stats", "entries: 1200\noverrun: 0\n");
  tree.Write(box + "/per_cpu/cpu1/stats", "entries: 34\noverrun: 0\n");
  r = Check(tree, "kernel.blackbox");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "holding 1234 records of the previous boot");
  tree.Write(box + "/last_boot_info", "# Current\n");
  tree.Write(box + "/tracing_on", "1\n");
  r = Check(tree, "kernel.blackbox");
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_SAW(r, "persistent buffer, armed (recording)");
}

}  // namespace
}  // namespace gpunoise::doctor::testing
