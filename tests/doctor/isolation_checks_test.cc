#include "doctor/isolation_checks.h"

#include "doctor/check_test_util.h"
#include "doctor/kernel_cmdline.h"

namespace gpunoise::doctor::testing {
namespace {

TEST(KernelCmdline, ParsesIsolationParametersAndStopsAtInitArguments) {
  KernelCmdline c = ParseKernelCmdline("quiet isolcpus=managed_irq,domain,2-7 nohz_full=2-N rcu_nocbs=2-7 -- --init");
  EXPECT_TRUE(c.Has("quiet"));
  EXPECT_FALSE(c.Has("--init"));
  EXPECT_EQ(c.CpuList("isolcpus", 7), (std::vector<int>{2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(c.IsolcpusFlags(), (std::vector<std::string>{"managed_irq", "domain"}));
  EXPECT_EQ(c.CpuList("nohz_full", 5), (std::vector<int>{2, 3, 4, 5}));
  EXPECT_FALSE(c.CpuList("irqaffinity", 7).has_value());
}

TEST(CmdlineIsolation, OkWhenFocusCpusAreNohzFullAndOffloaded) {
  FixtureTree tree;
  BuildGoodNode(tree);
  CheckResult r = Check(tree, "cpu.isolation");
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_SAW(r, "focus CPUs 2-3 are nohz_full and RCU-offloaded");
}

TEST(CmdlineIsolation, WarnsWhenFocusCpusKeepTheTick) {
  FixtureTree tree;
  BuildGoodNode(tree);
  tree.SetCmdline("BOOT_IMAGE=/vmlinuz rcu_nocbs=2");
  tree.Remove("/sys/devices/system/cpu/nohz_full");
  CheckResult r = Check(tree, "cpu.isolation");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "CPUs 2-3 keep the tick (not nohz_full), CPUs 3 run RCU callbacks (not rcu_nocbs)");
  EXPECT_SAW(r, "kernel command line: rcu_nocbs=2");
  EXPECT_TRUE(Contains(r.fix, "nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1,4-7")) << r.fix;
  EXPECT_EQ(ExitFor(r), 1);
}

TEST(CmdlineIsolation, UnknownWithoutFocus) {
  FixtureTree tree;
  tree.SetCpus(4, 1);
  tree.SetCmdline("quiet");
  CheckResult r = Check(tree, "cpu.isolation");
  EXPECT_EQ(r.verdict, Verdict::kUnknown);
  EXPECT_SAW(r, "no isolcpus, nohz_full or rcu_nocbs on the kernel command line; no focus CPUs");
}

TEST(Focus, IsolatedCpusAreTheFocusWithoutGpuProcesses) {
  FixtureTree tree;
  BuildGoodNode(tree);
  tree.Remove("/proc/500");
  tree.Remove("/proc/501");
  auto run = Gather(tree);
  EXPECT_EQ(run->inputs->focus.source, FocusSource::kIsolatedCpus);
  EXPECT_EQ(run->inputs->focus.cpus, (std::vector<int>{2, 3, 6, 7}));
}

TEST(Focus, GpuManagementDaemonsAreNotTraining) {
  FixtureTree tree;
  BuildGoodNode(tree);
  // nvidia-persistenced and DCGM hold the device files on every GPU node.
  tree.AddProcess({.pid = 80, .comm = "nvidia-persiste", .cpus = "0-7", .fd_targets = {"/dev/nvidia0"}});
  tree.AddProcess({.pid = 81, .comm = "nv-hostengine", .cpus = "0-7", .fd_targets = {"/dev/nvidiactl"}});
  auto run = Gather(tree);
  EXPECT_EQ(run->inputs->focus.source, FocusSource::kGpuProcesses);
  EXPECT_EQ(run->inputs->focus.cpus, (std::vector<int>{2, 3}));
  EXPECT_EQ(run->inputs->focus.pids, (std::vector<int>{500}));
  // ... but they are daemons that may run on the focus CPUs.
  CheckResult r = RunOne(*run->inputs, "cpu.daemons");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "2 process(es) outside the focus set may run on focus CPUs 2-3: nvidia-persiste (80) and nv-hostengine (81)");
}

TEST(Focus, DoctorsOwnNvmlSessionIsNotAGpuWorkload) {
  FixtureTree tree;
  BuildGoodNode(tree);
  // Doctor opened NVML before scanning /proc, so it holds the device files too.
  tree.AddProcess({.pid = 900, .comm = "gpunoise", .cpus = "0-7", .fd_targets = {"/dev/nvidia0", "/dev/nvidiactl"}});
  FakeSources fakes;
  fakes.self_pid = 900;
  auto run = Gather(tree, fakes);
  EXPECT_EQ(run->inputs->focus.source, FocusSource::kGpuProcesses);
  EXPECT_EQ(run->inputs->focus.pids, (std::vector<int>{500}));
  EXPECT_EQ(run->inputs->focus.cpus, (std::vector<int>{2, 3}));
}

TEST(Focus, GivenCpusOrPidsWin) {
  FixtureTree tree;
  BuildGoodNode(tree);
  DoctorOptions options;
  options.focus.cpus = {5};
  auto run = Gather(tree, {}, options);
  EXPECT_EQ(run->inputs->focus.source, FocusSource::kCpuList);
  EXPECT_EQ(run->inputs->focus.cpus, (std::vector<int>{5}));
  options.focus.cpus.clear();
  options.focus.pids = {300};
  run = Gather(tree, {}, options);
  EXPECT_EQ(run->inputs->focus.source, FocusSource::kPids);
  EXPECT_EQ(run->inputs->focus.cpus, (std::vector<int>{0, 1, 4, 5}));
  EXPECT_EQ(run->inputs->focus.description, "CPUs 0-1,4-5: where 300 (sshd) may run (--focus)");
}

TEST(KernelThreads, OkWhenUnboundKthreadsAndWorkqueuesStayOnHousekeeping) {
  FixtureTree tree;
  BuildGoodNode(tree);
  CheckResult r = Check(tree, "cpu.kthreads");
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_SAW(r, "1 per-CPU kernel threads there run only for their own CPU's work");
}

TEST(KernelThreads, WarnsForUnboundKthreadsAndWorkqueuesOnFocusCpus) {
  FixtureTree tree;
  BuildGoodNode(tree);
  tree.Write("/sys/devices/virtual/workqueue/cpumask", "ff\n");
  tree.AddProcess({.pid = 13, .ppid = 2, .comm = "rcu_preempt", .cpus = "0-7", .kernel_thread = true});
  tree.AddProcess({.pid = 40, .ppid = 2, .comm = "kworker/u16:1-events_unbound", .cpus = "0-7", .kernel_thread = true});
  tree.AddProcess({.pid = 41, .ppid = 2, .comm = "kworker/u16:2", .cpus = "0-7", .kernel_thread = true});
  CheckResult r = Check(tree, "cpu.kthreads");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "unbound workqueues may run on CPUs 0-7");
  EXPECT_SAW(r, "3 unbound kernel thread(s) may run on focus CPUs: kworker/u* (unbound workqueues) x2 and rcu_preempt");
  EXPECT_TRUE(Contains(r.fix, "echo f3 > /sys/devices/virtual/workqueue/cpumask")) << r.fix;
  EXPECT_TRUE(Contains(r.fix, "taskset -pc 0-1,4-7 $p")) << r.fix;
  EXPECT_EQ(ExitFor(r), 1);
}

TEST(Daemons, OkWhenOnlyTheTrainingJobMayRunOnFocusCpus) {
  FixtureTree tree;
  BuildGoodNode(tree);  // pid 501, a child of the GPU process, is part of the job
  CheckResult r = Check(tree, "cpu.daemons");
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_SAW(r, "no process outside the focus set may run on focus CPUs 2-3");
}

TEST(Daemons, WarnsForDaemonsAllowedOnFocusCpus) {
  FixtureTree tree;
  BuildGoodNode(tree);
  tree.AddProcess({.pid = 700, .ppid = 1, .comm = "node_exporter", .cpus = "0-7"});
  tree.AddProcess({.pid = 701, .ppid = 1, .comm = "defunct", .cpus = "0-7", .state = 'Z'});
  CheckResult r = Check(tree, "cpu.daemons");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "1 process(es) outside the focus set may run on focus CPUs 2-3: node_exporter (700)");
  EXPECT_TRUE(Contains(r.fix, "systemctl set-property --runtime system.slice AllowedCPUs=0-1,4-7")) << r.fix;
  EXPECT_EQ(ExitFor(r), 1);
}

TEST(Governor, WarnsForPowersaveOnAFocusCpu) {
  FixtureTree tree;
  BuildGoodNode(tree);
  CheckResult r = Check(tree, "cpu.governor");
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_SAW(r, "focus CPUs: performance on CPUs 2-3");
  tree.Write("/sys/devices/system/cpu/cpu3/cpufreq/scaling_governor", "powersave\n");
  r = Check(tree, "cpu.governor");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "performance on CPUs 2, powersave on CPUs 3");
  EXPECT_TRUE(Contains(r.fix, "cpupower -c 3 frequency-set -g performance")) << r.fix;
  EXPECT_EQ(ExitFor(r), 1);
}

TEST(Governor, UnknownWithoutCpufreq) {
  FixtureTree tree;
  tree.SetCpus(2, 1);
  CheckResult r = Check(tree, "cpu.governor");
  EXPECT_EQ(r.verdict, Verdict::kUnknown);
  EXPECT_SAW(r, "no cpufreq policy");
}

TEST(CStates, WarnsForAnEnabledDeepStateOnAFocusCpu) {
  FixtureTree tree;
  BuildGoodNode(tree);
  CheckResult r = Check(tree, "cpu.cstates");
  EXPECT_EQ(r.verdict, Verdict::kOk);
  tree.Write("/sys/devices/system/cpu/cpu2/cpuidle/state2/disable", "0\n");
  r = Check(tree, "cpu.cstates");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "deep idle states enabled: C6 (133 us) on CPUs 2 (driver intel_idle)");
  EXPECT_TRUE(Contains(r.fix, "cpupower -c 2 idle-set -D 10")) << r.fix;
  EXPECT_EQ(ExitFor(r), 1);
}

TEST(CStates, UnknownWithoutCpuidle) {
  FixtureTree tree;
  tree.SetCpus(2, 1);
  tree.Write("/sys/devices/system/cpu/cpuidle/current_driver", "none\n");
  CheckResult r = Check(tree, "cpu.cstates");
  EXPECT_EQ(r.verdict, Verdict::kUnknown);
  EXPECT_SAW(r, "cpuidle driver: none");
}

TEST(NumaBalancing, WarnsWhenOnWithSeveralNodes) {
  FixtureTree tree;
  BuildGoodNode(tree);
  EXPECT_EQ(Check(tree, "mem.numa_balancing").verdict, Verdict::kOk);
  tree.Write("/proc/sys/kernel/numa_balancing", "1\n");
  CheckResult r = Check(tree, "mem.numa_balancing");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "kernel.numa_balancing=1 on 2 NUMA nodes");
  EXPECT_EQ(ExitFor(r), 1);
  tree.Remove("/sys/devices/system/node/node1");
  EXPECT_EQ(Check(tree, "mem.numa_balancing").verdict, Verdict::kOk);
}

TEST(Thp, WarnsForDefragAlways) {
  FixtureTree tree;
  BuildGoodNode(tree);
  EXPECT_EQ(Check(tree, "mem.thp").verdict, Verdict::kOk);
  tree.Write("/sys/kernel/mm/transparent_hugepage/defrag", "[always] defer defer+madvise madvise never\n");
  CheckResult r = Check(tree, "mem.thp");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "transparent_hugepage enabled=madvise defrag=always");
  EXPECT_EQ(r.fix, "echo defer+madvise > /sys/kernel/mm/transparent_hugepage/defrag");
  EXPECT_EQ(ExitFor(r), 1);
}

TEST(Swap, WarnsWhenSwapIsActive) {
  FixtureTree tree;
  BuildGoodNode(tree);
  EXPECT_EQ(Check(tree, "mem.swap").verdict, Verdict::kOk);
  tree.Write("/proc/swaps",
             "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
             "/dev/sda2                               partition\t8388604\t\t1048576\t\t-2\n");
  CheckResult r = Check(tree, "mem.swap");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "swap active on /dev/sda2 (8191 MiB, 1024 MiB used), vm.swappiness=60");
  EXPECT_EQ(ExitFor(r), 1);
}

}  // namespace
}  // namespace gpunoise::doctor::testing
