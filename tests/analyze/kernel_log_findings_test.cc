// Kernel log findings in the report: ranked by their message's class among
// the others (they cost the focus threads nothing measurable), and the TX
// watchdog finding quotes the kernel's own NETDEV WATCHDOG line.
#include "analyze/kernel_log_findings.h"

#include <gtest/gtest.h>

#include <map>

#include "analyze/synthetic.h"
#include "analyze/tx_timeout_log.h"

namespace gpunoise::analyze {
namespace {

using namespace gpunoise::testing;

constexpr int32_t kFocus = 100;

Synth Base() {
  Synth s;
  s.Process(kFocus, "trainer").Thread(kFocus, kFocus, "trainer");
  s.Switch(kBase, 1, 0, kFocus);
  s.Switch(kBase + 1000 * kMs, 1, kFocus, 0, 1);
  return s;
}

// `device`: its DEVICE= field, which /dev/kmsg's reader also makes `about`
// (collect/kmsg_reader.cc).
void Log(Synth& s, uint64_t ts, const std::string& text, uint32_t cpu = 2, int32_t tid = 0,
         const std::string& device = "") {
  model::KernelLogEntry e;
  e.ts = ts;
  e.text = text;
  model::KernelLogMatch m = model::ClassifyKernelLog(text);
  e.cls = m.cls;
  e.device = device;
  e.about = !device.empty() ? device : m.device;
  e.source = model::KernelLogSource::kBoth;
  e.cpu = static_cast<int32_t>(cpu);
  e.tid = tid;
  s.builder().OnKernelLog(e);
}

TEST(KernelLogFindings, SevereClassesRankAboveRatesAndWarnings) {
  Finding rate;  // a finding of some rate, over a long span, costing nothing
  rate.detector = "nic_trouble";
  rate.kind = "drops";
  rate.start = 0;
  rate.end = 900;
  Finding hung;
  hung.detector = "kernel_log";
  hung.kind = "hung_task";
  Finding lockup;
  lockup.detector = "kernel_log";
  lockup.kind = "soft_lockup";
  Finding costly;
  costly.detector = "interference";
  costly.kind = "run_queue_delay";
  costly.cost_ns = 5;
  std::vector<Finding> all = {rate, hung, lockup, costly};
  RankFindings(&all);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].kind, "run_queue_delay");  // a measured cost comes first
  EXPECT_EQ(all[1].kind, "soft_lockup");
  EXPECT_EQ(all[2].kind, "hung_task");
  EXPECT_EQ(all[3].kind, "drops");
}

TEST(KernelLogFindings, ALockupFindingNamesTheCpuAndTaskAndItsTime) {
  Synth s = Base();
  Log(s, kBase + 400 * kMs, "watchdog: BUG: soft lockup - CPU#3 stuck for 23s! [python3:4242]");
  Timeline t = s.Build();
  Analysis a = AnalyzeOrDie(t, {"trainer"});
  auto found = FindingsOf(a, "kernel_log");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].kind, "soft_lockup");
  EXPECT_EQ(found[0].start, kBase + 400 * kMs);  // its own time, not 0
  ASSERT_EQ(found[0].cpus.size(), 1u);
  EXPECT_EQ(found[0].cpus[0], 3u);
  EXPECT_NE(found[0].title.find("python3"), std::string::npos) << found[0].title;
  ASSERT_FALSE(found[0].evidence.empty());
  EXPECT_NE(found[0].evidence[0].find("[printed on CPU 2 by ? (tid 0)]"), std::string::npos) << found[0].evidence[0];
}

TEST(KernelLogFindings, TxTimeoutFindingQuotesTheWatchdogLine) {
  Synth s = Base();
  s.Net(kBase + 300 * kMs, 0, model::NetTraceKind::kTxTimeout, "eth1", 0, 0, 5);
  const std::string line = "NETDEV WATCHDOG: eth1 (mlx5_core): transmit queue 5 timed out 5120 ms";
  Log(s, kBase + 300 * kMs + 20 * kUs, "NETDEV WATCHDOG: eth0 (mlx5_core): transmit queue 1 timed out 5120 ms");
  Log(s, kBase + 300 * kMs + 30 * kUs, line);
  Timeline t = s.Build();
  auto found = FindingsOf(AnalyzeOrDie(t, {"trainer"}), "nic_trouble");
  ASSERT_EQ(found.size(), 1u);
  bool quoted = false, other = false;
  for (const auto& e : found[0].evidence) {
    if (e.find(line) != std::string::npos) quoted = true;
    if (e.find("eth0 (mlx5_core)") != std::string::npos) other = true;
  }
  EXPECT_TRUE(quoted);
  EXPECT_FALSE(other);  // another device's line is not this finding's
}

TEST(KernelLogFindings, OneTxTimeoutIsOneFindingThatQuotesItsLine) {
  Synth s = Base();
  s.Net(kBase + 300 * kMs, 0, model::NetTraceKind::kTxTimeout, "eth1", 0, 0, 5);
  // 6.7+'s netdev_crit form, with DEVICE= naming the NIC's PCI function (so
  // `about` is "+pci:...", not the netdev name the tracepoint has).
  const std::string line = "mlx5_core 0000:3b:00.0 eth1: NETDEV WATCHDOG: CPU: 0: transmit queue 5 timed out 5120 ms";
  Log(s, kBase + 300 * kMs + 15 * kUs, line, 0, 0, "+pci:0000:3b:00.0");
  Log(s, kBase + 301 * kMs, "mlx5_core 0000:3b:00.0 eth1: TX timeout detected", 1, 77, "+pci:0000:3b:00.0");
  Timeline t = s.Build();
  Analysis a = AnalyzeOrDie(t, {"trainer"});
  auto nic = FindingsOf(a, "nic_trouble");
  ASSERT_EQ(nic.size(), 1u);
  EXPECT_EQ(nic[0].kind, "tx_timeout");
  EXPECT_EQ(nic[0].device, "eth1");
  EXPECT_EQ(nic[0].queue, 5);
  EXPECT_EQ(nic[0].Metric("kernel_log_lines"), 2);
  bool quoted = false;
  for (const auto& e : nic[0].evidence)
    if (e.find(line) != std::string::npos && e.find("(and 1 more such lines)") != std::string::npos &&
        e.find("[printed on CPU 0") != std::string::npos)
      quoted = true;
  EXPECT_TRUE(quoted);
  EXPECT_TRUE(FindingsOf(a, "kernel_log").empty());  // the same timeout, said once
}

TEST(KernelLogFindings, LinesOfAnotherDeviceOrTimeAreKept) {
  Synth s = Base();
  s.Switch(kBase + 6000 * kMs, 1, 0, kFocus);  // a longer recording
  s.Switch(kBase + 6001 * kMs, 1, kFocus, 0, 1);
  s.Net(kBase + 300 * kMs, 0, model::NetTraceKind::kTxTimeout, "eth1", 0, 0, 5);
  Log(s, kBase + 300 * kMs + 15 * kUs, "NETDEV WATCHDOG: eth1 (mlx5_core): transmit queue 5 timed out 5120 ms");
  // Another device's timeout at the same time; the same device's, seconds
  // later (past nic.tx_timeout_log_window, 2 s: no watchdog event of it in
  // the trace); and a lockup.
  Log(s, kBase + 300 * kMs + 30 * kUs, "NETDEV WATCHDOG: eth0 (ice): transmit queue 1 timed out 5120 ms");
  Log(s, kBase + 5300 * kMs, "NETDEV WATCHDOG: eth1 (mlx5_core): transmit queue 2 timed out 5000 ms");
  Log(s, kBase + 400 * kMs, "watchdog: BUG: soft lockup - CPU#1 stuck for 23s! [python3:4242]");
  Timeline t = s.Build();
  Analysis a = AnalyzeOrDie(t, {"trainer"});
  auto nic = FindingsOf(a, "nic_trouble");
  ASSERT_EQ(nic.size(), 1u);
  EXPECT_EQ(nic[0].Metric("kernel_log_lines"), 1);
  auto log = FindingsOf(a, "kernel_log");
  ASSERT_EQ(log.size(), 3u);
  std::map<std::string, const Finding*> by;
  for (const auto& f : log) by[f.kind + "/" + f.device] = &f;
  ASSERT_TRUE(by.count("tx_timeout/eth0"));
  ASSERT_TRUE(by.count("tx_timeout/eth1"));
  EXPECT_EQ(by["tx_timeout/eth1"]->start, kBase + 5300 * kMs);  // only the later line
  EXPECT_EQ(by["tx_timeout/eth1"]->Metric("messages"), 1);
  EXPECT_TRUE(by.count("soft_lockup/"));
}

TEST(TxTimeoutLog, ALineBelongsByTypedDeviceBusAddressAndTime) {
  model::KernelLogEntry e;
  e.ts = 10 * kMs + 5000 * kMs;
  e.text = "NETDEV WATCHDOG: eth1 (mlx5_core): transmit queue 5 timed out 5120 ms";
  e.cls = model::KernelLogClass::kTxTimeout;
  e.about = "eth1";
  const uint64_t w = 2000 * kMs, start = 10 * kMs + 4000 * kMs, end = start + 500 * kMs;
  EXPECT_TRUE(IsTxTimeoutLineOf(e, "eth1", "", start, end, w));
  EXPECT_FALSE(IsTxTimeoutLineOf(e, "eth0", "", start, end, w));
  EXPECT_FALSE(IsTxTimeoutLineOf(e, "", "", start, end, w));
  // 2 s before the span is in it, a millisecond more is not; likewise after.
  EXPECT_TRUE(IsTxTimeoutLineOf(e, "eth1", "", start + 3000 * kMs, end + 3000 * kMs, w));
  EXPECT_FALSE(IsTxTimeoutLineOf(e, "eth1", "", start + 3001 * kMs, end + 3001 * kMs, w));
  EXPECT_FALSE(IsTxTimeoutLineOf(e, "eth1", "", 0, 10 * kMs + 2999 * kMs, w));
  EXPECT_TRUE(IsTxTimeoutLineOf(e, "eth1", "", 0, 10 * kMs + 3000 * kMs, w));
  // A line whose text names another netdev (renamed since) but whose
  // DEVICE= names the bus address of this one.
  model::KernelLogEntry renamed = e;
  renamed.text = "NETDEV WATCHDOG: eth9 (mlx5_core): transmit queue 5 timed out 5120 ms";
  renamed.about = renamed.device = "+pci:0000:3b:00.0";
  EXPECT_FALSE(IsTxTimeoutLineOf(renamed, "eth1", "", start, end, w));
  EXPECT_TRUE(IsTxTimeoutLineOf(renamed, "eth1", "0000:3b:00.0", start, end, w));
  EXPECT_FALSE(IsTxTimeoutLineOf(renamed, "eth1", "0000:3b:00.1", start, end, w));
  model::KernelLogEntry user = e;  // echo ... > /dev/kmsg
  user.facility = 1;
  EXPECT_FALSE(IsTxTimeoutLineOf(user, "eth1", "", start, end, w));
  model::KernelLogEntry lockup = e;
  lockup.cls = model::KernelLogClass::kSoftLockup;
  EXPECT_FALSE(IsTxTimeoutLineOf(lockup, "eth1", "", start, end, w));
}

TEST(KernelLogFindings, TxTimeoutFindingSaysWhenTheLogHasNoLine) {
  Synth s = Base();
  s.Net(kBase + 300 * kMs, 0, model::NetTraceKind::kTxTimeout, "eth1", 0, 0, 5);
  Timeline t = s.Build();
  auto found = FindingsOf(AnalyzeOrDie(t, {"trainer"}), "nic_trouble");
  ASSERT_EQ(found.size(), 1u);
  bool said = false;
  for (const auto& e : found[0].evidence)
    if (e.find("no kernel log in the trace") != std::string::npos) said = true;
  EXPECT_TRUE(said);
}

TEST(KernelLogFindings, LossSummaryCountsTheLogBySource) {
  Synth s = Base();
  Log(s, kBase + 100 * kMs, "matched");
  model::KernelLogEntry kmsg_only;
  kmsg_only.ts = kBase + 200 * kMs;
  kmsg_only.text = "kmsg only";
  s.builder().OnKernelLog(kmsg_only);
  model::KernelLogEntry console_only = kmsg_only;
  console_only.text = "console only";
  console_only.source = model::KernelLogSource::kConsole;
  s.builder().OnKernelLog(console_only);
  s.builder().OnKernelLogLoss(3);
  Timeline t = s.Build();
  Analysis a = AnalyzeOrDie(t, {"trainer"});
  EXPECT_EQ(a.loss.kernel_log.messages, 3u);
  EXPECT_EQ(a.loss.kernel_log.with_caller, 1u);
  EXPECT_EQ(a.loss.kernel_log.kmsg_only, 1u);
  EXPECT_EQ(a.loss.kernel_log.console_only, 1u);
  EXPECT_EQ(a.loss.kernel_log.kmsg_gaps, 3u);
  EXPECT_FALSE(a.loss.kernel_log.console);  // no session summary naming the collector
}

}  // namespace
}  // namespace gpunoise::analyze
