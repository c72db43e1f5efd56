// gpunoise doctor as a command on fixture trees: exit codes (status and NPD
// conventions), text, summary and JSON output, NVML through the fake
// library, and usage errors.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

#include "doctor/check_test_util.h"
#include "doctor/run_command.h"

namespace gpunoise::doctor::testing {
namespace {

class DoctorCli : public ::testing::Test {
 protected:
  void SetUp() override {
    BuildGoodNode(tree_);
    setenv("GN_FAKE_NVML_BDF", kGpuBdf, 1);
  }
  void TearDown() override {
    for (const char* v : {"GN_FAKE_NVML_BDF", "GN_FAKE_NVML_THROTTLE", "GN_FAKE_NVML_REPLAY_STEP"}) unsetenv(v);
  }
  CommandResult Doctor(std::vector<std::string> extra) {
    std::vector<std::string> argv = {GpunoiseBinary(), "doctor", "--root", tree_.root(), "--nvml", GN_FAKE_NVML_PATH,
                                     "--sample-interval", "20ms"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunCommand(argv);
  }
  FixtureTree tree_;
};

TEST_F(DoctorCli, GoodNodeExitsZeroWithOneLinePerCheck) {
  CommandResult r = Doctor({});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "gpunoise doctor: fixture-node (kernel 6.8.0-fixture, root " + tree_.root() + ")"))
      << r.out;
  for (const auto& id : CheckIds()) EXPECT_TRUE(Contains(r.out, " " + id + " ")) << id << "\n" << r.out;
  EXPECT_TRUE(Contains(r.out, "ok       gpu.throttle")) << r.out;
  // ethtool answers over netlink for this namespace, which has no gnfix0.
  EXPECT_TRUE(Contains(r.out, "unknown  nic.rings           gnfix0: ring sizes: ethtool data comes over netlink"))
      << r.out;
  EXPECT_TRUE(Contains(r.out, "summary: ok (0 fail, 0 warn, ")) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST_F(DoctorCli, WarningExitsOneAndFailureExitsTwo) {
  tree_.Write("/sys/kernel/mm/transparent_hugepage/defrag", "[always] defer defer+madvise madvise never\n");
  CommandResult r = Doctor({"--summary"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "warn: mem.thp (0 fail, 1 warn, ")) << r.out;
  EXPECT_TRUE(Contains(Doctor({}).out, "| fix: echo defer+madvise > /sys/kernel/mm/transparent_hugepage/defrag"));

  tree_.Write("/sys/kernel/oops_count", "1\n");
  r = Doctor({"--summary"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "fail: kernel.counters; warn: mem.thp (1 fail, 1 warn, ")) << r.out;
}

TEST_F(DoctorCli, NvmlThroughTheFakeLibrary) {
  setenv("GN_FAKE_NVML_THROTTLE", "0x40", 1);
  setenv("GN_FAKE_NVML_REPLAY_STEP", "3", 1);
  CommandResult r = Doctor({});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "fail     gpu.throttle        GPU 0000:03:00.0: hardware slowdown: HW thermal slowdown"))
      << r.out;
  EXPECT_TRUE(Contains(r.out, "warn     gpu.pcie_replay     GPU 0000:03:00.0: 3 replays (+3 during sampling)")) << r.out;

  r = RunCommand({GpunoiseBinary(), "doctor", "--root", tree_.root(), "--nvml", "/nonexistent/libnvidia-ml.so.1"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(Contains(r.out, "unknown  gpu.ecc             failed to load NVML /nonexistent/libnvidia-ml.so.1"))
      << r.out;
}

TEST_F(DoctorCli, NpdExitCodesMapFailuresToProblems) {
  CommandResult r = Doctor({"--exit-codes", "npd", "--summary"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(Doctor({"--exit-codes", "npd", "--strict"}).exit_code, 2);  // unknowns (no ethtool here) -> NPD unknown

  tree_.Write("/proc/sys/kernel/numa_balancing", "1\n");
  EXPECT_EQ(Doctor({"--exit-codes", "npd"}).exit_code, 0);  // a warning is not a problem by default
  EXPECT_EQ(Doctor({"--exit-codes", "npd", "--problem-at", "warn"}).exit_code, 1);
  tree_.Write("/sys/kernel/hardlockup_count", "1\n");
  r = Doctor({"--exit-codes", "npd", "--summary"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.out, "fail: kernel.counters")) << r.out;
}

TEST_F(DoctorCli, JsonFollowsTheDocumentedSchema) {
  tree_.Write("/proc/sys/kernel/numa_balancing", "1\n");
  CommandResult r = Doctor({"--json"});
  EXPECT_EQ(r.exit_code, 1);
  std::string json_path = tree_.root() + "/out.json";
  std::ofstream(json_path) << r.out;
  // Validated with Python's json module: the document parses, has every
  // field docs/doctor.md lists, one entry per check, and a consistent exit code.
  std::string script =
      "import json,sys\n"
      "d=json.load(open(sys.argv[1]))\n"
      "assert d['schema']=='gpunoise.doctor/1', d['schema']\n"
      "for k in ['host','kernel','root','focus','sample_interval_ms','checks','counts','worst','summary','exit_code']:\n"
      "  assert k in d, k\n"
      "assert d['focus']['cpus']=='2-3' and d['focus']['source']=='gpu-processes' and d['focus']['pids']==[500]\n"
      "ids=[c['id'] for c in d['checks']]\n"
      "assert len(ids)==len(set(ids))==" + std::to_string(CheckIds().size()) + "\n"
      "for c in d['checks']:\n"
      "  assert c['verdict'] in ('ok','warn','fail','unknown'), c\n"
      "  assert c['saw'] and c['why'], c\n"
      "  assert isinstance(c['details'], list) and isinstance(c['fix'], str)\n"
      "  assert (c['verdict'] not in ('warn','fail')) or c['fix'], c\n"
      "n=d['counts']\n"
      "assert sum(n.values())==len(ids)\n"
      "assert d['worst']=='warn' and d['exit_code']==1\n"
      "c=[c for c in d['checks'] if c['id']=='mem.numa_balancing'][0]\n"
      "assert c['verdict']=='warn' and 'kernel.numa_balancing=1 on 2 NUMA nodes' in c['saw']\n";
  std::string script_path = tree_.root() + "/check.py";
  std::ofstream(script_path) << script;
  CommandResult check = RunCommand({"python3", script_path, json_path});
  EXPECT_EQ(check.exit_code, 0) << check.err << r.out;
}

TEST_F(DoctorCli, JsonEscapesKernelLogText) {
  // The watchdog's own format (the classifier wants it whole), with a driver
  // name full of what JSON must escape.
  tree_.SetKernelLog(
      {std::string("4,2,2000000,-;NETDEV WATCHDOG: gnfix0 (\"q\\1\" \x01 \xff): transmit queue 0 timed out 5000 ms")});
  CommandResult r = Doctor({"--json"});
  std::string json_path = tree_.root() + "/out.json";
  std::ofstream(json_path) << r.out;
  CommandResult check = RunCommand(
      {"python3", "-c",
       "import json,sys; d=json.load(open(sys.argv[1])); c=[c for c in d['checks'] if c['id']=='kernel.log'][0]; "
       "assert '\"q\\\\1\" \\x01 \\ufffd' in c['saw'], c['saw']",
       json_path});
  EXPECT_EQ(check.exit_code, 0) << check.err << r.out;
}

TEST_F(DoctorCli, FocusOptionsChangeTheVerdicts) {
  CommandResult r = Doctor({"--focus-cpus", "0-1", "--summary"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.out, "irq.placement")) << r.out;
  r = Doctor({"--focus", "500", "--summary"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

TEST_F(DoctorCli, BadUsageExitsTwoWithAUsageLine) {
  for (const auto& args : std::vector<std::vector<std::string>>{{"--focus-cpus", "x"},
                                                                {"--focus-cpus", "1", "--focus", "500"},
                                                                {"--sample-interval", "soon"},
                                                                {"--skip", "nosuch"},
                                                                {"--exit-codes", "nagios"},
                                                                {"--problem-at", "warn"},
                                                                {"--json", "--summary"},
                                                                {"--bogus"}}) {
    CommandResult r = Doctor(args);
    EXPECT_EQ(r.exit_code, 2) << args[0];
    EXPECT_EQ(r.err.rfind("usage: gpunoise doctor: ", 0), 0u) << r.err;
    EXPECT_EQ(r.out, "");
  }
  CommandResult r = RunCommand({GpunoiseBinary(), "doctor", "--root", "/nonexistent-root"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "usage: gpunoise doctor: --root /nonexistent-root is not a directory (see gpunoise doctor --help)\n");
  r = Doctor({"--focus", "4711"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Contains(r.err, "failed to find process 4711: no such process")) << r.err;
}

TEST_F(DoctorCli, ListChecksAndHelp) {
  CommandResult r = RunCommand({GpunoiseBinary(), "doctor", "--list-checks"});
  EXPECT_EQ(r.exit_code, 0);
  std::string expected;
  for (const auto& id : CheckIds()) expected += id + "\n";
  EXPECT_EQ(r.out, expected);
  r = RunCommand({GpunoiseBinary(), "doctor", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.out, "EXIT STATUS: 0 all ok, 1 warnings, 2 failures")) << r.out;
  EXPECT_TRUE(Contains(r.out, "EXAMPLES:")) << r.out;
}

}  // namespace
}  // namespace gpunoise::doctor::testing
