// The deployment examples in docs/deploy: the node-problem-detector plugin
// config is valid for NPD and its rules map doctor's verdicts onto NPD's
// 0 OK / 1 NonOK / other Unknown; the SLURM HealthCheckProgram wrapper drains
// and resumes through scontrol (a fake one here) as documented.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "common/files.h"
#include "doctor/check_test_util.h"
#include "doctor/run_command.h"
#include "integration/support/privileges.h"

namespace gpunoise::doctor::testing {
namespace {

const std::string kSource = GPUNOISE_SOURCE_DIR;
const std::string kWrapper = kSource + "/docs/deploy/slurm/gpunoise-slurm-healthcheck";

void MakeWarn(FixtureTree& t) { t.Write("/proc/sys/kernel/numa_balancing", "1\n"); }
void MakeFail(FixtureTree& t) { t.Write("/sys/kernel/oops_count", "1\n"); }

TEST(NodeProblemDetectorConfig, IsValidAndMapsVerdictsToNpdStatuses) {
  FixtureTree ok, warn, fail;
  BuildGoodNode(ok);
  BuildGoodNode(warn);
  MakeWarn(warn);
  BuildGoodNode(fail);
  MakeFail(fail);
  CommandResult r = RunCommand({"python3", kSource + "/tests/doctor/check_npd_config.py",
                                kSource + "/docs/deploy/node-problem-detector/gpunoise-doctor-monitor.json",
                                GpunoiseBinary(), ok.root(), warn.root(), fail.root()},
                               120);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "GpunoiseDoctorFailure on fail: exit 1 -> NonOK: fail: kernel.counters")) << r.out;
  EXPECT_TRUE(Contains(r.out, "GpunoiseDoctorWarning on warn: exit 1 -> NonOK: warn: mem.numa_balancing")) << r.out;
  EXPECT_TRUE(Contains(r.out, "GpunoiseDoctorFailure on warn: exit 0 -> OK")) << r.out;
}

// A directory with fake scontrol and logger that record their calls, and a
// node state that `scontrol -o show node` prints.
class SlurmWrapper : public ::testing::Test {
 protected:
  void SetUp() override {
    BuildGoodNode(tree_);
    bin_ = tree_.root() + "/fakebin";
    ::mkdir(bin_.c_str(), 0755);
    WriteScript("scontrol",
                "#!/bin/sh\n"
                "if [ \"$1\" = -o ] && [ \"$2\" = show ]; then cat \"" + bin_ + "/node_state\"; exit 0; fi\n"
                "echo \"$*\" >> \"" + bin_ + "/scontrol.log\"\n");
    WriteScript("logger", "#!/bin/sh\nshift 3\necho \"$*\" >> \"" + bin_ + "/logger.log\"\n");
    SetNodeState("IDLE", "");
  }
  void WriteScript(const std::string& name, const std::string& text) {
    std::string path = bin_ + "/" + name;
    std::ofstream(path) << text;
    ::chmod(path.c_str(), 0755);
  }
  void SetNodeState(const std::string& state, const std::string& reason) {
    std::ofstream(bin_ + "/node_state") << "NodeName=gn1 Arch=x86_64 CPUTot=8 State=" << state
                                        << " ThreadsPerCore=1 Partitions=gpu"
                                        << (reason.empty() ? "" : " Reason=" + reason) << "\n";
  }
  CommandResult Run(const std::string& extra_env = "") {
    std::string env = "PATH=" + bin_ + ":/usr/bin:/bin SLURMD_NODENAME=gn1 GPUNOISE=" + GpunoiseBinary() +
                      " GPUNOISE_DOCTOR_ARGS='--root " + tree_.root() + " --nvml none' " + extra_env;
    return RunCommand({"/bin/sh", "-c", env + " " + kWrapper}, 60);
  }
  std::string Log(const std::string& name) {
    auto text = ReadFileToString(bin_ + "/" + name);
    return text.ok() ? *text : "";
  }
  FixtureTree tree_;
  std::string bin_;
};

TEST_F(SlurmWrapper, DrainsAFailingNodeWithTheSummaryAsReason) {
  MakeFail(tree_);
  CommandResult r = Run();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(Log("scontrol.log"),
                       "update nodename=gn1 state=drain reason=gpunoise: fail: kernel.counters (1 fail, 0 warn,"))
      << Log("scontrol.log");
  EXPECT_TRUE(Contains(Log("logger.log"), "drained gn1: fail: kernel.counters")) << Log("logger.log");
}

TEST_F(SlurmWrapper, LeavesANodeDrainedByAnAdminAlone) {
  MakeFail(tree_);
  SetNodeState("IDLE+DRAIN", "maintenance [root@2026-11-30T10:00:00]");
  EXPECT_EQ(Run().exit_code, 0);
  EXPECT_EQ(Log("scontrol.log"), "");
  tree_.Write("/sys/kernel/oops_count", "0\n");  // healthy now, but the drain is not ours
  EXPECT_EQ(Run().exit_code, 0);
  EXPECT_EQ(Log("scontrol.log"), "");
}

TEST_F(SlurmWrapper, ResumesANodeItDrainedOnceItPasses) {
  SetNodeState("IDLE+DRAIN", "gpunoise: fail: kernel.counters [root@2026-11-30T10:00:00]");
  EXPECT_EQ(Run().exit_code, 0);
  EXPECT_EQ(Log("scontrol.log"), "update nodename=gn1 state=resume\n");
}

TEST_F(SlurmWrapper, WarningsDrainOnlyWhenAskedTo) {
  MakeWarn(tree_);
  EXPECT_EQ(Run().exit_code, 0);
  EXPECT_EQ(Log("scontrol.log"), "");
  EXPECT_EQ(Run("GPUNOISE_DRAIN_ON=warn").exit_code, 0);
  EXPECT_TRUE(Contains(Log("scontrol.log"), "state=drain reason=gpunoise: warn: mem.numa_balancing"))
      << Log("scontrol.log");
}

TEST_F(SlurmWrapper, DoctorThatCannotRunChangesNothing) {
  EXPECT_EQ(Run("GPUNOISE_DOCTOR_ARGS=--bogus").exit_code, 0);
  EXPECT_EQ(Run("GPUNOISE=/nonexistent/gpunoise").exit_code, 0);
  EXPECT_EQ(Log("scontrol.log"), "");
  std::string log = Log("logger.log");
  EXPECT_TRUE(Contains(log, "doctor could not run (exit 2): usage: gpunoise doctor: unrecognised option '--bogus'"))
      << log;
  EXPECT_TRUE(Contains(log, "doctor could not run (exit 127)")) << log;
}

TEST(SlurmWrapperScript, PassesShellcheck) {
  if (!PathExists("/usr/bin/shellcheck")) GN_SKIP_MISSING_TOOL("shellcheck is not installed (Debian package shellcheck)");
  CommandResult r = RunCommand({"shellcheck", kWrapper});
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

}  // namespace
}  // namespace gpunoise::doctor::testing
