#include "model/kernel_log.h"

#include <gtest/gtest.h>

#include <chrono>

#include <fstream>
#include <sstream>

namespace gpunoise::model {
namespace {

struct Case {
  const char* text;
  KernelLogClass cls;
  const char* device = "";
  int cpu = -1;
  const char* task = "";
};

// Message formats as the drivers and the kernel print them.
const Case kCorpus[] = {
    {"NETDEV WATCHDOG: eth0 (mlx5_core): transmit queue 3 timed out 5120 ms", KernelLogClass::kTxTimeout, "eth0"},
    {"NETDEV WATCHDOG: ens1f0np0 (ice): transmit queue 12 timed out 9484 ms", KernelLogClass::kTxTimeout, "ens1f0np0"},
    // Since 6.7 through netdev_crit: "DRIVER BUS NETDEV: " before it, or "NETDEV: " without a parent.
    {"mlx5_core 0000:3b:00.0 eth1: NETDEV WATCHDOG: CPU: 3: transmit queue 5 timed out 5120 ms",
     KernelLogClass::kTxTimeout, "eth1"},
    {"virtio_net virtio0 enp0s3: NETDEV WATCHDOG: CPU: 0: transmit queue 0 timed out 5056 ms",
     KernelLogClass::kTxTimeout, "enp0s3"},
    {"veth7: NETDEV WATCHDOG: CPU: 1: transmit queue 0 timed out 5000 ms", KernelLogClass::kTxTimeout, "veth7"},
    {"mlx5_core 0000:3b:00.0 eth0: TX timeout detected", KernelLogClass::kTxTimeout, "eth0"},
    {"ice 0000:af:00.0 eth1: tx_timeout: VSI_num: 6, Q 5, NTC: 0x1a, HW_HEAD: 0x1a, NTU: 0x2b, INT: 0x0",
     KernelLogClass::kTxTimeout, "eth1"},
    {"mlx5_core 0000:3b:00.0 eth0: Link down", KernelLogClass::kLinkDown, "eth0"},
    {"mlx5_core 0000:3b:00.0 eth0: Link up", KernelLogClass::kLinkUp, "eth0"},
    {"ice 0000:af:00.0 eth1: NIC Link is Down", KernelLogClass::kLinkDown, "eth1"},
    {"ice 0000:af:00.0 eth1: NIC Link is up 100 Gbps Full Duplex, Requested FEC: RS-FEC, Negotiated FEC: RS-FEC, "
     "Autoneg Advertised: On, Autoneg Negotiated: False, Flow Control: None",
     KernelLogClass::kLinkUp, "eth1"},
    {"i40e 0000:3b:00.0 eth0: NIC Link is Up, 40 Gbps Full Duplex, Flow Control: None", KernelLogClass::kLinkUp, "eth0"},
    {"bnxt_en 0000:3b:00.0 eth0: NIC Link is Down", KernelLogClass::kLinkDown, "eth0"},
    {"gve 0000:00:04.0: Device link is down.", KernelLogClass::kLinkDown, "0000:00:04.0"},
    {"br0: port 1(veth0) entered disabled state", KernelLogClass::kLinkDown, "veth0"},
    {"br0: port 1(veth0) entered forwarding state", KernelLogClass::kLinkUp, "veth0"},
    {"mlx5_core 0000:3b:00.0: mlx5_health_try_recover:... health recovery flow aborted / Performing PCI recovery",
     KernelLogClass::kNicReset, "0000:3b:00.0"},
    {"i40e 0000:3b:00.0: TX driver issue detected, PF reset issued", KernelLogClass::kNicReset, "0000:3b:00.0"},
    {"ena 0000:00:05.0: Trigger reset is on", KernelLogClass::kNicReset, "0000:00:05.0"},
    {"gve 0000:00:04.0: Performing reset", KernelLogClass::kNicReset, "0000:00:04.0"},
    {"watchdog: BUG: soft lockup - CPU#3 stuck for 23s! [kworker/3:1:123]", KernelLogClass::kSoftLockup, "", 3,
     "kworker/3:1"},
    {"watchdog: Watchdog detected hard LOCKUP on cpu 5", KernelLogClass::kHardLockup, "", 5},
    {"rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:", KernelLogClass::kRcuStall},
    {"rcu: INFO: rcu_sched self-detected stall on CPU", KernelLogClass::kRcuStall},
    {"rcu: INFO: rcu_preempt detected expedited stalls on CPUs/tasks: { 3-... } 21002 jiffies s: 1153 root: 0x8/.",
     KernelLogClass::kRcuStall},
    {"INFO: task python3:4242 blocked for more than 122 seconds.", KernelLogClass::kHungTask, "", -1, "python3"},
    {"kworker/0:1: page allocation failure: order:4, mode:0x40cc0(GFP_KERNEL|__GFP_COMP), nodemask=(null),cpuset=/,mems_allowed=0",
     KernelLogClass::kPageAllocFailure, "", -1, "kworker/0:1"},
    {"pcieport 0000:00:03.0: AER: Corrected error message received from 0000:3b:00.0", KernelLogClass::kPcieAer,
     "0000:00:03.0"},
    {"pcieport 0000:00:03.0: AER: Uncorrected (Non-Fatal) error message received from 0000:3b:00.0",
     KernelLogClass::kPcieAer, "0000:00:03.0"},
    {"mlx5_core 0000:3b:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)",
     KernelLogClass::kPcieAer, "0000:3b:00.0"},
    {"mce: CPU3: Core temperature above threshold, cpu clock throttled (total events = 1)", KernelLogClass::kThermal, "",
     3},
    {"mce: [Hardware Error]: Machine check events logged", KernelLogClass::kMachineCheck},
    {"mce: [Hardware Error]: CPU 0: Machine Check: 0 Bank 5: be00000000800400", KernelLogClass::kMachineCheck, "", 0},
    {"NVRM: Xid (PCI:0000:17:00): 79, pid=1234, name=python, GPU has fallen off the bus.", KernelLogClass::kGpuXid,
     "PCI:0000:17:00"},
};

// Lines that look alike and mean nothing here.
const char* kNearMisses[] = {
    "mlx5_core 0000:3b:00.0 eth0: Link speed downshifted to 25G",
    "ice 0000:af:00.0: The DDP package was successfully loaded: ICE OS Default Package version 1.3.30.0",
    "NETDEV WATCHDOG is a kernel feature",                          // no device, no queue
    "eth0: NETDEV WATCHDOG: CPU: 3: transmit queue stopped",       // no timeout
    "watchdog: NMI watchdog: Perf NMI watchdog permanently disabled",
    "rcu: Hierarchical SRCU implementation.",
    "rcu: RCU calculated value of scheduler-enlistment delay is 25 jiffies.",
    "hung_task: khungtaskd started",
    "mce: CPU3: Core temperature/speed normal (total events = 1)",
    "mce: Machine check injector initialized",
    "pcieport 0000:00:03.0: AER: enabled with IRQ 24",
    "thermal_sys: Registered thermal governor 'step_wise'",
    "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15",
    "br0: port 1(veth0) entered blocking state",
    "IPv6: ADDRCONF(NETDEV_CHANGE): eth0: link becomes ready",
    "i40e 0000:3b:00.0: PF reset is not needed",
    "page allocation stats: order:4 ok",
};

TEST(KernelLog, ClassifiesTheCorpusOfRealMessageFormats) {
  for (const Case& c : kCorpus) {
    SCOPED_TRACE(c.text);
    KernelLogMatch m = ClassifyKernelLog(c.text);
    EXPECT_EQ(KernelLogClassName(m.cls), KernelLogClassName(c.cls));
    EXPECT_EQ(m.device, c.device);
    EXPECT_EQ(m.cpu, c.cpu);
    EXPECT_EQ(m.task, c.task);
  }
}

TEST(KernelLog, NearMissesAreNotClassified) {
  for (const char* text : kNearMisses) {
    KernelLogMatch m = ClassifyKernelLog(text);
    EXPECT_FALSE(m) << text << " -> " << KernelLogClassName(m.cls);
  }
}

TEST(KernelLog, EveryClassHasAPatternAndAName) {
  for (size_t i = 1; i < kKernelLogClasses; ++i) {
    auto cls = static_cast<KernelLogClass>(i);
    EXPECT_NE(FindKernelLogPattern(cls), nullptr) << i;
    EXPECT_NE(KernelLogClassName(cls), "?");
  }
}

// docs/deploy's node-problem-detector kernel monitor is generated from the
// same table: the checked-in file must be what the table renders, so a
// pattern changed in one place is changed in both.
TEST(KernelLog, NodeProblemDetectorConfigIsGeneratedFromThePatterns) {
  std::ifstream in(std::string(GPUNOISE_SOURCE_DIR) + "/docs/deploy/node-problem-detector/gpunoise-kernel-monitor.json");
  ASSERT_TRUE(in) << "missing docs/deploy/node-problem-detector/gpunoise-kernel-monitor.json";
  std::stringstream file;
  file << in.rdbuf();
  EXPECT_EQ(file.str(), RenderNpdKernelMonitorConfig())
      << "regenerate: gpunoise doctor --print-npd-kernel-monitor > "
         "docs/deploy/node-problem-detector/gpunoise-kernel-monitor.json";
  for (const KernelLogPattern& p : KernelLogPatterns())
    EXPECT_NE(file.str().find(std::string("\"reason\": \"") + std::string(p.reason) + "\""), std::string::npos);
}

// The literals that let a line skip a pattern's regular expression are
// the pattern's own (a typo would make the pattern never match).
TEST(KernelLog, EveryPatternsLiteralsAreInThePattern) {
  for (const KernelLogPattern& p : KernelLogPatterns()) {
    SCOPED_TRACE(p.pattern);
    ASSERT_FALSE(p.literals.empty());
    std::string plain;
    for (char c : p.pattern)
      if (c != '\\') plain += c;
    std::string_view rest = p.literals;
    while (true) {
      size_t bar = rest.find('|');
      EXPECT_NE(plain.find(std::string(rest.substr(0, bar))), std::string::npos) << rest.substr(0, bar);
      if (bar == std::string_view::npos) break;
      rest.remove_prefix(bar + 1);
    }
  }
}

TEST(KernelLogClassifier, LongLinesClassifyQuickly) {
  // A "Modules linked in:" line of a stack dump is often over 1 KiB.
  std::string line = "Modules linked in:";
  while (line.size() < 2000) line += " mlx5_ib mlx5_core nvidia_uvm(POE) nvidia(POE)";
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(ClassifyKernelLog(line));
  std::string lockup = line + " watchdog: BUG: soft lockup - CPU#3 stuck for 23s! [python3:4242]";
  EXPECT_EQ(ClassifyKernelLog(lockup).cls, KernelLogClass::kSoftLockup);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

}  // namespace
}  // namespace gpunoise::model
