// The network collectors end to end, as root: real traffic between two
// network namespaces, `gpunoise record`, and the trace checked against the
// kernel's own counters (device statistics, /proc/net/snmp).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "integration/support/bpf_programs.h"
#include "integration/support/fake_tracefs.h"
#include "integration/support/net_load.h"
#include "integration/support/privileges.h"
#include "integration/support/trace_reader.h"
#include "integration/support/veth_pair.h"
#include "integration/support/workloads.h"

extern "C" {
#include "bpf/net.h"
}

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;
using Side = VethPair::Side;

// How the recorder names a device in another namespace (docs/network.md).
std::string Label(const VethPair& pair, Side side) {
  return pair.device(side) + "@" + std::to_string(pair.netns_inode(side));
}

uint64_t ArgU64(const EventArgs& args, const std::string& key) {
  auto it = args.find(key);
  return it == args.end() ? 0 : std::stoull(it->second);
}

std::optional<EventArgs> DeviceTotals(const perfetto::Trace& trace, const std::string& label) {
  for (const auto& a : TrackEventArgs(trace, "net device"))
    if (a.count("device") && a.at("device") == label) return a;
  return std::nullopt;
}

double RelativeError(double measured, double truth) {
  return truth == 0 ? (measured == 0 ? 0 : 1) : std::abs(measured - truth) / truth;
}

class Recording {
 public:
  // `launcher`: what runs the recorder (nsenter into a namespace), if anything.
  Recording(const std::string& name, std::vector<std::string> extra, std::vector<std::string> launcher = {}) {
    dir_ = MakeTempDir();
    path_ = dir_ + "/" + name + ".pftrace";
    std::vector<std::string> args = std::move(launcher);
    args.insert(args.end(), {GpunoiseBinary(), "record", "-o", path_});
    args.insert(args.end(), extra.begin(), extra.end());
    child_ = std::make_unique<ChildProcess>(args);
  }
  // The recorder first (its destructor stops it), then its files.
  ~Recording() {
    child_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  bool WaitStarted() { return child_->WaitForStderr("recording", 30s); }
  // Stops with SIGINT and reads the trace back.
  std::optional<perfetto::Trace> Finish(std::string* log) {
    child_->Signal(SIGINT);
    int rc = child_->Wait(60s);
    *log = child_->stderr_text() + child_->stdout_text();
    if (rc != 0) return std::nullopt;
    std::string error;
    auto trace = ReadTrace(path_, &error);
    if (!trace) *log += error;
    return trace;
  }

 private:
  std::string dir_, path_;
  std::unique_ptr<ChildProcess> child_;
};

TEST(NetIntegration, PerDevicePacketCountersMatchDeviceStatisticsDuringAFlood) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  std::string error;
  auto pair = VethPair::Create({}, &error);
  ASSERT_TRUE(pair) << error;

  // stopped by SIGINT after the flood
  Recording rec("flood", {"-d", "60", "--net-packet-counters", "on"});
  ASSERT_TRUE(rec.WaitStarted());
  auto rx0 = pair->LinkStatistics(Side::kReceiver);
  auto tx0 = pair->LinkStatistics(Side::kSender);
  UdpFloodOptions flood;
  flood.duration = 3000ms;
  UdpFloodResult r = RunUdpFlood(*pair, flood);
  auto rx1 = pair->LinkStatistics(Side::kReceiver);
  auto tx1 = pair->LinkStatistics(Side::kSender);
  std::string log;
  auto trace = rec.Finish(&log);
  ASSERT_TRUE(trace) << log;
  ASSERT_GT(r.sent, 10000u);

  const double rx_truth = static_cast<double>(rx1["rx_packets"] - rx0["rx_packets"]);
  const double tx_truth = static_cast<double>(tx1["tx_packets"] - tx0["tx_packets"]);
  ASSERT_GT(rx_truth, 10000);

  const std::string rx_label = Label(*pair, Side::kReceiver);
  const std::string tx_label = Label(*pair, Side::kSender);
  // Totals written at the end of the recording...
  auto rx_totals = DeviceTotals(*trace, rx_label);
  auto tx_totals = DeviceTotals(*trace, tx_label);
  ASSERT_TRUE(rx_totals) << "no totals for " << rx_label << "\n" << log;
  ASSERT_TRUE(tx_totals) << "no totals for " << tx_label;
  EXPECT_LT(RelativeError(ArgU64(*rx_totals, "rx_packets"), rx_truth), 0.02)
      << ArgU64(*rx_totals, "rx_packets") << " vs " << rx_truth;
  EXPECT_LT(RelativeError(ArgU64(*tx_totals, "tx_packets"), tx_truth), 0.02)
      << ArgU64(*tx_totals, "tx_packets") << " vs " << tx_truth;
  // ...and the counter tracks a reader plots, integrated over time.
  double rx_counted = IntegrateRate(CounterSamples(*trace, rx_label + " rx packets/s"));
  double tx_counted = IntegrateRate(CounterSamples(*trace, tx_label + " tx packets/s"));
  EXPECT_LT(RelativeError(rx_counted, rx_truth), 0.02) << rx_counted << " vs " << rx_truth;
  EXPECT_LT(RelativeError(tx_counted, tx_truth), 0.02) << tx_counted << " vs " << tx_truth;
  // Bytes too. gpunoise counts frames with their Ethernet header, as NIC
  // drivers do; veth's NAPI path counts skb->len after eth_type_trans
  // (veth_xdp_rcv), 14 bytes less per packet.
  const double rx_bytes = static_cast<double>(rx1["rx_bytes"] - rx0["rx_bytes"]) + 14 * rx_truth;
  EXPECT_LT(RelativeError(ArgU64(*rx_totals, "rx_bytes"), rx_bytes), 0.02)
      << ArgU64(*rx_totals, "rx_bytes") << " vs " << rx_bytes << " for " << rx_truth << " packets";
  EXPECT_FALSE(CounterSamples(*trace, rx_label + " rx Gbit/s").empty());
}

// By default no program runs on every packet: packets and bytes per device
// are the devices' own statistics, of the recorder's network namespace (here
// the sender's, where the recorder runs), and NAPI counts the packets every
// device received, in every namespace.
TEST(NetIntegration, ByDefaultPacketsAndBytesPerDeviceAreTheDevicesOwnStatisticsWithNoProgramOnEveryPacket) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  std::string error;
  auto pair = VethPair::Create({}, &error);
  ASSERT_TRUE(pair) << error;
  const std::string sender_ns = "--net=/run/netns/" + pair->netns(Side::kSender);
  Recording rec("default_net", {"-d", "60"}, {"nsenter", sender_ns, "--"});
  ASSERT_TRUE(rec.WaitStarted());
  const std::set<std::string> programs = LoadedBpfProgramNames();
  EXPECT_TRUE(programs.count("gn_napi_poll") || programs.count("gn_tp_napi_poll")) << "not the recorder's programs";
  for (const char* per_packet :
       {"gn_rx", "gn_tp_rx", "gn_queue", "gn_tp_queue", "gn_start_xmit", "gn_tp_startxmit", "gn_xmit", "gn_tp_xmit"})
    EXPECT_EQ(programs.count(per_packet), 0u) << per_packet << " runs on every packet";
  auto tx0 = pair->LinkStatistics(Side::kSender);
  auto rx0 = pair->LinkStatistics(Side::kReceiver);
  UdpFloodOptions flood;
  flood.duration = 1500ms;
  RunUdpFlood(*pair, flood);
  auto tx1 = pair->LinkStatistics(Side::kSender);
  auto rx1 = pair->LinkStatistics(Side::kReceiver);
  std::string log;
  auto trace = rec.Finish(&log);
  ASSERT_TRUE(trace) << log;
  EXPECT_NE(log.find("the devices' own statistics, this network namespace"), std::string::npos) << log;

  const double tx_truth = static_cast<double>(tx1["tx_packets"] - tx0["tx_packets"]);
  const double tx_bytes = static_cast<double>(tx1["tx_bytes"] - tx0["tx_bytes"]);
  const double rx_truth = static_cast<double>(rx1["rx_packets"] - rx0["rx_packets"]);
  ASSERT_GT(tx_truth, 10000);
  // The recorder's own namespace: its devices carry their plain names.
  const std::string sender = pair->device(Side::kSender);
  auto tx = DeviceTotals(*trace, sender);
  ASSERT_TRUE(tx) << "no totals for " << sender << "\n" << log;
  EXPECT_EQ((*tx)["device_statistics"], "true");
  EXPECT_EQ((*tx)["packets_counted"], "true");
  EXPECT_LT(RelativeError(ArgU64(*tx, "tx_packets"), tx_truth), 0.02) << ArgU64(*tx, "tx_packets") << " vs " << tx_truth;
  EXPECT_LT(RelativeError(ArgU64(*tx, "tx_bytes"), tx_bytes), 0.02) << ArgU64(*tx, "tx_bytes") << " vs " << tx_bytes;
  double counted = IntegrateRate(CounterSamples(*trace, sender + " tx packets/s"));
  EXPECT_LT(RelativeError(counted, tx_truth), 0.02) << counted << " vs " << tx_truth;
  // A device's statistics have no queue or CPU, and no track says otherwise.
  for (const auto& q : TrackEventArgs(*trace, "net queue")) EXPECT_NE(q.at("device"), sender);
  EXPECT_TRUE(CounterSamples(*trace, sender + " cpu0 rx packets/s").empty());
  // The receiver, in another namespace: its packets through its NAPI polls.
  auto rx = DeviceTotals(*trace, Label(*pair, Side::kReceiver));
  ASSERT_TRUE(rx) << log;
  EXPECT_EQ(ArgU64(*rx, "rx_packets"), 0u) << "another namespace's statistics";
  EXPECT_EQ((*rx)["device_statistics"], "false");
  EXPECT_EQ((*rx)["packets_counted"], "false") << "its 0 is unknown, not zero";
  EXPECT_LT(RelativeError(ArgU64(*rx, "napi_packets"), rx_truth), 0.02)
      << ArgU64(*rx, "napi_packets") << " vs " << rx_truth;
}

// Device statistics come from rtnetlink, not from a tracepoint: a kernel
// without the network tracepoints still gets packets and bytes per device
// (and the summary says which counts it could not make).
TEST(NetIntegration, WithoutTheNetworkTracepointsPacketsPerDeviceStillComeFromTheDevicesStatistics) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  std::string error;
  auto pair = VethPair::Create({}, &error);
  ASSERT_TRUE(pair) << error;
  const std::string tracefs = FakeTracefs({"sched/sched_switch", "irq/softirq_entry", "irq/softirq_exit"});
  Recording rec("no_net_tracepoints", {"-d", "60", "--attach", "tracepoint"},
                {"env", "GPUNOISE_TRACEFS_FOR_TESTING=" + tracefs, "nsenter",
                 "--net=/run/netns/" + pair->netns(Side::kSender), "--"});
  ASSERT_TRUE(rec.WaitStarted());
  auto tx0 = pair->LinkStatistics(Side::kSender);
  UdpFloodOptions flood;
  flood.duration = 1000ms;
  RunUdpFlood(*pair, flood);
  auto tx1 = pair->LinkStatistics(Side::kSender);
  std::string log;
  auto trace = rec.Finish(&log);
  ASSERT_TRUE(trace) << log;
  EXPECT_NE(log.find("the devices' own statistics"), std::string::npos) << log;
  EXPECT_NE(log.find("not counted: napi ("), std::string::npos) << log;
  EXPECT_EQ(log.find("packets through NAPI polls"), std::string::npos) << "a count nothing made: " << log;

  const double tx_truth = static_cast<double>(tx1["tx_packets"] - tx0["tx_packets"]);
  ASSERT_GT(tx_truth, 1000);
  const std::string sender = pair->device(Side::kSender);
  auto tx = DeviceTotals(*trace, sender);
  ASSERT_TRUE(tx) << "no totals for " << sender << "\n" << log;
  EXPECT_EQ((*tx)["device_statistics"], "true");
  EXPECT_LT(RelativeError(ArgU64(*tx, "tx_packets"), tx_truth), 0.02) << ArgU64(*tx, "tx_packets") << " vs " << tx_truth;
  EXPECT_FALSE(CounterSamples(*trace, sender + " tx packets/s").empty());
}

// The device counters count in a per-CPU cache slot per key, and a key
// whose slot another key owns counts in the hash map (bpf/agg_cache.bpf.h).
// Pairs are made until two senders' transmit keys share a slot; then every
// sender's count must match its device's, whichever of the two it is in.
TEST(NetIntegration, DeviceCountersStayRightWhenDevicesShareACacheSlot) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  std::vector<std::unique_ptr<VethPair>> pairs;
  std::map<uint32_t, size_t> slot_owner;  // slot of a sender's TX key -> pair
  std::optional<std::pair<size_t, size_t>> sharing;
  while (!sharing && pairs.size() < 32) {
    std::string error;
    auto pair = VethPair::Create({}, &error);
    ASSERT_TRUE(pair) << error;
    // TX is counted at net_dev_queue, on veth's only queue.
    gn_dev_key key{};
    key.dev = {pair->netns_inode(Side::kSender), pair->ifindex(Side::kSender)};
    key.queue = 0;
    key.dir = GN_NET_TX;
    ASSERT_NE(key.dev.ifindex, 0u);
    const uint32_t slot = gn_dev_key_mix(&key) & (GN_AGG_CACHE_SLOTS - 1);
    auto [it, fresh] = slot_owner.emplace(slot, pairs.size());
    if (!fresh) sharing = std::pair{it->second, pairs.size()};
    pairs.push_back(std::move(pair));
  }
  ASSERT_TRUE(sharing) << "no two of " << pairs.size() << " senders share a slot";

  Recording rec("sharing", {"-d", "60", "--net-packet-counters", "on"});
  ASSERT_TRUE(rec.WaitStarted());
  std::vector<uint64_t> tx_truth;
  for (const auto& pair : pairs) {
    auto before = pair->LinkStatistics(Side::kSender);
    UdpFloodOptions flood;
    flood.duration = 200ms;
    flood.max_packets = 5000;
    UdpFloodResult r = RunUdpFlood(*pair, flood);
    ASSERT_GT(r.sent, 0u);
    tx_truth.push_back(pair->LinkStatistics(Side::kSender)["tx_packets"] - before["tx_packets"]);
  }
  std::string log;
  auto trace = rec.Finish(&log);
  ASSERT_TRUE(trace) << log;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const std::string label = Label(*pairs[i], Side::kSender);
    auto totals = DeviceTotals(*trace, label);
    ASSERT_TRUE(totals) << "no totals for " << label;
    const bool shares = i == sharing->first || i == sharing->second;
    EXPECT_LT(RelativeError(ArgU64(*totals, "tx_packets"), tx_truth[i]), 0.02)
        << label << (shares ? " (shares its slot)" : "") << ": " << ArgU64(*totals, "tx_packets") << " vs "
        << tx_truth[i];
  }
}

TEST(NetIntegration, NapiPollsOfTheReceivingDeviceRunOnTheChosenCpu) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  // The receiver's NAPI runs in its own thread pinned to CPU 1; the sender
  // runs on CPU 0, so a poll on CPU 1 can only be the pinned thread's.
  constexpr int kNapiCpu = 1;
  VethPairOptions options;
  options.napi_cpu = kNapiCpu;
  std::string error;
  auto pair = VethPair::Create(options, &error);
  ASSERT_TRUE(pair) << error;
  const std::string dev = pair->device(Side::kReceiver);

  Recording rec("napi", {"-d", "60", "-e", "net-packets", "--net-dev", dev});
  ASSERT_TRUE(rec.WaitStarted());
  UdpFloodOptions flood;
  flood.duration = 1500ms;
  flood.sender_cpu = 0;
  flood.receiver_cpu = 0;
  UdpFloodResult r = RunUdpFlood(*pair, flood);
  std::string log;
  auto trace = rec.Finish(&log);
  ASSERT_TRUE(trace) << log;
  ASSERT_GT(r.sent, 1000u);

  // Per-poll records (--events net-packets), filtered to this device.
  uint64_t on_chosen = 0, elsewhere = 0, other_devices = 0;
  for (const auto& [cpu, e] : FtraceEventsWithCpu(*trace)) {
    if (!e->has_generic() || e->generic().event_name() != "napi_poll") continue;
    std::string name;
    for (const auto& f : e->generic().field())
      if (f.name() == "dev_name") name = f.str_value();
    if (name != dev) {
      ++other_devices;
      continue;
    }
    (cpu == kNapiCpu ? on_chosen : elsewhere) += 1;
  }
  EXPECT_GT(on_chosen, 0u) << log;
  EXPECT_EQ(elsewhere, 0u);
  EXPECT_EQ(other_devices, 0u) << "--net-dev let other devices' polls through";

  // The in-kernel aggregate says the same, per CPU.
  uint64_t polls_on_chosen = 0, polls_elsewhere = 0;
  for (const auto& a : TrackEventArgs(*trace, "napi")) {
    if (a.at("device") != Label(*pair, Side::kReceiver)) continue;
    (ArgU64(a, "cpu") == kNapiCpu ? polls_on_chosen : polls_elsewhere) += ArgU64(a, "polls");
  }
  EXPECT_GT(polls_on_chosen, 0u);
  EXPECT_EQ(polls_elsewhere, 0u);
  EXPECT_FALSE(
      CounterSamples(*trace, Label(*pair, Side::kReceiver) + " cpu1 napi packets/s").empty());
}

TEST(NetIntegration, NapiPollsRunOnTheSendingCpuWithoutThreadedNapi) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  // Without threaded NAPI, veth_xmit schedules the peer's NAPI on the
  // sending CPU: pinning the sender chooses the CPU.
  constexpr int kChosen = 1;
  std::string error;
  auto pair = VethPair::Create({}, &error);
  ASSERT_TRUE(pair) << error;
  Recording rec("napi_softirq", {"-d", "60", "-e", "net"});
  ASSERT_TRUE(rec.WaitStarted());
  UdpFloodOptions flood;
  flood.duration = 1000ms;
  flood.sender_cpu = kChosen;
  flood.receiver_cpu = 0;
  RunUdpFlood(*pair, flood);
  std::string log;
  auto trace = rec.Finish(&log);
  ASSERT_TRUE(trace) << log;
  uint64_t on_chosen = 0, elsewhere = 0;
  for (const auto& a : TrackEventArgs(*trace, "napi")) {
    if (a.at("device") != Label(*pair, Side::kReceiver)) continue;
    (ArgU64(a, "cpu") == kChosen ? on_chosen : elsewhere) += ArgU64(a, "polls");
  }
  EXPECT_GT(on_chosen, 0u) << log;
  EXPECT_EQ(elsewhere, 0u);
}

TEST(NetIntegration, RpsMovesReceiveProcessingToTheChosenCpu) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  // NAPI runs on the sending CPU 0; RPS hands each packet to CPU 1, where
  // netif_receive_skb runs from the backlog.
  VethPairOptions options;
  options.rps_cpu = 1;
  std::string error;
  auto pair = VethPair::Create(options, &error);
  ASSERT_TRUE(pair) << error;
  Recording rec("rps", {"-d", "60", "-e", "net", "--net-packet-counters", "on"});
  ASSERT_TRUE(rec.WaitStarted());
  UdpFloodOptions flood;
  flood.duration = 1000ms;
  flood.sender_cpu = 0;
  flood.receiver_cpu = 1;
  RunUdpFlood(*pair, flood);
  std::string log;
  auto trace = rec.Finish(&log);
  ASSERT_TRUE(trace) << log;
  const std::string label = Label(*pair, Side::kReceiver);
  uint64_t rx_cpu1 = 0, rx_other = 0, napi_cpu0 = 0, napi_other = 0;
  for (const auto& a : TrackEventArgs(*trace, "net queue"))
    if (a.at("device") == label && a.at("direction") == "rx")
      (ArgU64(a, "cpu") == 1 ? rx_cpu1 : rx_other) += ArgU64(a, "packets");
  for (const auto& a : TrackEventArgs(*trace, "napi"))
    if (a.at("device") == label) (ArgU64(a, "cpu") == 0 ? napi_cpu0 : napi_other) += ArgU64(a, "polls");
  EXPECT_GT(rx_cpu1, 1000u) << log;
  EXPECT_EQ(rx_other, 0u);
  EXPECT_GT(napi_cpu0, 0u);
  EXPECT_EQ(napi_other, 0u);
  EXPECT_FALSE(CounterSamples(*trace, label + " cpu1 rx packets/s").empty());
}

TEST(NetIntegration, ProvokedSocketBufferDropsAppearWithTheirReasonAndTheKernelsCount) {
  GN_REQUIRE_REAL_EBPF();
  std::string error;
  auto pair = VethPair::Create({}, &error);
  ASSERT_TRUE(pair) << error;
  Recording rec("drops", {"-d", "60"});
  ASSERT_TRUE(rec.WaitStarted());
  auto udp0 = pair->SnmpCounters(Side::kReceiver, "Udp");
  UdpFloodOptions flood;
  flood.duration = 1500ms;
  flood.receiver_reads = false;      // never reads...
  flood.receive_buffer_bytes = 1;    // ...from the smallest buffer the kernel allows
  UdpFloodResult r = RunUdpFlood(*pair, flood);
  auto udp1 = pair->SnmpCounters(Side::kReceiver, "Udp");
  std::string log;
  auto trace = rec.Finish(&log);
  ASSERT_TRUE(trace) << log;

  const double truth = static_cast<double>(udp1["RcvbufErrors"] - udp0["RcvbufErrors"]);
  ASSERT_GT(truth, 1000) << "the flood did not overflow the receiver (" << r.sent << " sent)";
  auto totals = DeviceTotals(*trace, Label(*pair, Side::kReceiver));
  ASSERT_TRUE(totals) << log;
  // The reason's name comes from the kernel's BTF enum skb_drop_reason.
  const double traced = static_cast<double>(ArgU64(*totals, "drops.SOCKET_RCVBUFF"));
  EXPECT_LT(RelativeError(traced, truth), 0.05) << traced << " vs " << truth;
  double counted = IntegrateRate(
      CounterSamples(*trace, Label(*pair, Side::kReceiver) + " drops/s SOCKET_RCVBUFF"));
  EXPECT_LT(RelativeError(counted, truth), 0.05) << counted << " vs " << truth;
  // And where in the kernel it happened, by symbol.
  bool located = false;
  for (const auto& d : TrackEventArgs(*trace, "net drop"))
    if (d.at("reason_name") == "SOCKET_RCVBUFF" && d.at("device") == Label(*pair, Side::kReceiver))
      located = !d.at("location_symbol").empty() && d.at("location_symbol")[0] != '0';
  EXPECT_TRUE(located);
}

TEST(NetIntegration, NicCollectorSaysPlainlyThatThereAreNoDriverTracepointsAndTheRestWorks) {
  GN_REQUIRE_REAL_EBPF();
  std::string error;
  auto pair = VethPair::Create({}, &error);
  ASSERT_TRUE(pair) << error;
  // The default categories (mlx5, ice, i40e, ...) do not exist on a VM with
  // virtio and veth; on a node with such a NIC this test does not apply.
  Recording rec("nic", {"-d", "60"});
  ASSERT_TRUE(rec.WaitStarted());
  UdpFloodOptions flood;
  flood.duration = 500ms;
  RunUdpFlood(*pair, flood);
  std::string log;
  auto trace = rec.Finish(&log);
  ASSERT_TRUE(trace) << log;
  auto status = TrackEventArgs(*trace, "nic status");
  ASSERT_EQ(status.size(), 1u);
  if (status[0]["state"] != "disabled") GTEST_SKIP() << "this node has NIC-driver tracepoints";
  EXPECT_NE(status[0]["reason"].find("no NIC-driver tracepoints on this node"), std::string::npos);
  EXPECT_NE(log.find("no NIC-driver tracepoints on this node"), std::string::npos) << log;
  // The session summary records the same, and the other collectors ran.
  auto session = TrackEventArgs(*trace, "gpunoise recording");
  ASSERT_EQ(session.size(), 1u);
  EXPECT_EQ(session[0]["collector.nic.state"], "disabled");
  for (const char* c : {"napi", "netdev", "drops"})
    EXPECT_EQ(session[0][std::string("collector.") + c + ".state"], "active") << c;
  // The receiver is in another namespace: its packets count through NAPI.
  auto totals = DeviceTotals(*trace, Label(*pair, Side::kReceiver));
  ASSERT_TRUE(totals);
  EXPECT_GT(ArgU64(*totals, "napi_packets"), 1000u);
}

TEST(NetIntegration, NicCollectorCountsAnyTracepointCategoryPerEventAndDevice) {
  GN_REQUIRE_REAL_EBPF();
  // No NIC driver here has tracepoints, so point the generic path at the
  // "net" category: it finds each event's device-name field in its format
  // file and counts hits per device, like it would for mlx5 or ice.
  std::string error;
  auto pair = VethPair::Create({}, &error);
  ASSERT_TRUE(pair) << error;
  Recording rec("nic_generic", {"-d", "60", "-e", "net-packets", "--net-dev",
                                pair->device(Side::kSender), "--nic-tracepoints", "net"});
  ASSERT_TRUE(rec.WaitStarted());
  auto tx0 = pair->LinkStatistics(Side::kSender);
  UdpFloodOptions flood;
  flood.duration = 1000ms;
  RunUdpFlood(*pair, flood);
  auto tx1 = pair->LinkStatistics(Side::kSender);
  std::string log;
  auto trace = rec.Finish(&log);
  ASSERT_TRUE(trace) << log;
  auto status = TrackEventArgs(*trace, "nic status");
  ASSERT_EQ(status.size(), 1u);
  EXPECT_EQ(status[0]["state"], "active") << status[0]["reason"];
  uint64_t xmits = 0;
  for (const auto& a : TrackEventArgs(*trace, "nic event"))
    if (a.at("event") == "net/net_dev_xmit" && a.at("device") == pair->device(Side::kSender))
      xmits += ArgU64(a, "count");
  const double truth = static_cast<double>(tx1["tx_packets"] - tx0["tx_packets"]);
  ASSERT_GT(truth, 1000);
  EXPECT_LT(RelativeError(static_cast<double>(xmits), truth), 0.02) << xmits << " vs " << truth;
  // Per-event records (net-packets) are generic events, filtered by --net-dev.
  uint64_t records = 0, other_devices = 0;
  for (const auto* e : FtraceEvents(*trace)) {
    if (!e->has_generic() || e->generic().event_name() != "net_dev_xmit") continue;
    for (const auto& f : e->generic().field())
      if (f.name() == "dev") (f.str_value() == pair->device(Side::kSender) ? records : other_devices) += 1;
  }
  EXPECT_GT(records, 0u);
  EXPECT_EQ(other_devices, 0u);
}

TEST(NetIntegration, IrqMapNamesTheDeviceAndQueueOfEachNicIrq) {
  GN_REQUIRE_REAL_EBPF();
  Recording rec("irqmap", {"-d", "60", "-e", "net"});
  ASSERT_TRUE(rec.WaitStarted());
  std::string log;
  auto trace = rec.Finish(&log);
  ASSERT_TRUE(trace) << log;
  auto irqs = TrackEventArgs(*trace, "irq");
  if (irqs.empty()) GTEST_SKIP() << "no network device with its own IRQs on this node";
  bool queue_seen = false;
  for (const auto& a : irqs) {
    EXPECT_FALSE(a.at("device").empty());
    EXPECT_FALSE(a.at("description").empty());
    if (a.at("queue") != "-1") {
      queue_seen = true;
      // "CPU 1 handles eth0 rx queue 0 (IRQ 38)"
      EXPECT_NE(a.at("description").find(a.at("device") + " "), std::string::npos) << a.at("description");
      EXPECT_NE(a.at("description").find("queue " + a.at("queue")), std::string::npos);
    }
  }
  EXPECT_TRUE(queue_seen);
}

// The classic twins against the devices' own statistics; with net-packets
// also the per-packet records (TX is then counted at start_xmit and
// corrected at net_dev_xmit, without them at net_dev_queue).
void ExpectClassicTwinsCountLikeTheDevices(bool packets) {
  std::string error;
  auto pair = VethPair::Create({}, &error);
  ASSERT_TRUE(pair) << error;
  std::vector<std::string> args = {"-d", "60", "--attach", "tracepoint"};
  if (packets) {
    args.insert(args.end(), {"-e", "net-packets", "--net-dev", pair->device(Side::kReceiver)});
  } else {
    args.insert(args.end(), {"-e", "net", "--net-packet-counters", "on"});
  }
  Recording rec("classic", args);
  ASSERT_TRUE(rec.WaitStarted());
  auto rx0 = pair->LinkStatistics(Side::kReceiver);
  auto tx0 = pair->LinkStatistics(Side::kSender);
  auto udp0 = pair->SnmpCounters(Side::kReceiver, "Udp");
  UdpFloodOptions flood;
  flood.duration = 1000ms;
  flood.receiver_reads = false;
  flood.receive_buffer_bytes = 1;
  RunUdpFlood(*pair, flood);
  auto rx1 = pair->LinkStatistics(Side::kReceiver);
  auto tx1 = pair->LinkStatistics(Side::kSender);
  auto udp1 = pair->SnmpCounters(Side::kReceiver, "Udp");
  std::string log;
  auto trace = rec.Finish(&log);
  ASSERT_TRUE(trace) << log;
  auto session = TrackEventArgs(*trace, "gpunoise recording");
  ASSERT_EQ(session.size(), 1u);
  EXPECT_EQ(session[0]["collector.netdev.state"], "active") << session[0]["collector.netdev.reason"];
  auto rx = DeviceTotals(*trace, Label(*pair, Side::kReceiver));
  auto tx = DeviceTotals(*trace, Label(*pair, Side::kSender));
  ASSERT_TRUE(rx && tx) << log;
  const double rx_truth = static_cast<double>(rx1["rx_packets"] - rx0["rx_packets"]);
  const double tx_truth = static_cast<double>(tx1["tx_packets"] - tx0["tx_packets"]);
  const double drop_truth = static_cast<double>(udp1["RcvbufErrors"] - udp0["RcvbufErrors"]);
  ASSERT_GT(rx_truth, 1000);
  EXPECT_LT(RelativeError(ArgU64(*rx, "rx_packets"), rx_truth), 0.02);
  EXPECT_LT(RelativeError(ArgU64(*tx, "tx_packets"), tx_truth), 0.02);
  EXPECT_LT(RelativeError(ArgU64(*rx, "drops.SOCKET_RCVBUFF"), drop_truth), 0.05);
  EXPECT_GT(ArgU64(*rx, "napi_polls"), 0u);
  // Per-packet records come through the classic programs too.
  uint64_t received = 0;
  for (const auto* e : FtraceEvents(*trace))
    if (e->has_netif_receive_skb() && e->netif_receive_skb().name() == pair->device(Side::kReceiver))
      ++received;
  if (packets) {
    EXPECT_GT(received, 0u);
  } else {
    EXPECT_EQ(received, 0u) << "no per-packet records without net-packets";
  }
}

TEST(NetIntegration, ClassicTracepointTwinsCountTheSame) {
  GN_REQUIRE_REAL_EBPF();
  ExpectClassicTwinsCountLikeTheDevices(true);
}

TEST(NetIntegration, ClassicQueueTracepointCountsTransmitsLikeTheDevice) {
  GN_REQUIRE_REAL_EBPF();
  ExpectClassicTwinsCountLikeTheDevices(false);
}

// A TCP stream from a sender without TSO: the stack hands the device GSO
// skbs of up to 64 KiB and segments them in software, so by default TX is
// counted once per GSO skb (net_dev_queue) and with net-packets once per
// segment (net_dev_start_xmit). Either way packets and bytes must be the
// device's: segments, each with its headers. Also, per queue: every TX
// count names its queue.
void ExpectTcpTransmitsCountedLikeTheDevice(std::vector<std::string> args) {
  std::string error;
  auto pair = VethPair::Create({}, &error);
  ASSERT_TRUE(pair) << error;
  args.insert(args.begin(), {"-d", "60"});
  Recording rec("tcp", args);
  ASSERT_TRUE(rec.WaitStarted());
  auto tx0 = pair->LinkStatistics(Side::kSender);
  TcpStreamOptions stream;
  stream.duration = 1500ms;
  TcpStreamResult r = RunTcpStream(*pair, stream);
  auto tx1 = pair->LinkStatistics(Side::kSender);
  std::string log;
  auto trace = rec.Finish(&log);
  ASSERT_TRUE(trace) << log;
  ASSERT_TRUE(r.connected);
  const double packets = static_cast<double>(tx1["tx_packets"] - tx0["tx_packets"]);
  const double bytes = static_cast<double>(tx1["tx_bytes"] - tx0["tx_bytes"]);
  ASSERT_GT(packets, 10000) << "the stream sent too little to check";
  auto tx = DeviceTotals(*trace, Label(*pair, Side::kSender));
  ASSERT_TRUE(tx) << log;
  EXPECT_LT(RelativeError(ArgU64(*tx, "tx_packets"), packets), 0.02) << ArgU64(*tx, "tx_packets") << " vs " << packets;
  EXPECT_LT(RelativeError(ArgU64(*tx, "tx_bytes"), bytes), 0.02) << ArgU64(*tx, "tx_bytes") << " vs " << bytes;
  uint64_t queued = 0;
  for (const auto& q : TrackEventArgs(*trace, "net queue")) {
    if (q.count("device") == 0 || q.at("device") != Label(*pair, Side::kSender) || q.at("direction") != "tx") continue;
    EXPECT_EQ(q.at("queue"), "0") << "veth has one TX queue";
    queued += ArgU64(q, "packets");
  }
  EXPECT_EQ(queued, ArgU64(*tx, "tx_packets"));
}

TEST(NetIntegration, TcpTransmitsAreCountedPerGsoSkbAsTheDeviceCountsThem) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  ExpectTcpTransmitsCountedLikeTheDevice({"-e", "net", "--net-packet-counters", "on"});
}

TEST(NetIntegration, ClassicTcpTransmitsAreCountedPerGsoSkbAsTheDeviceCountsThem) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  ExpectTcpTransmitsCountedLikeTheDevice({"-e", "net", "--attach", "tracepoint", "--net-packet-counters", "on"});
}

TEST(NetIntegration, TcpTransmitsWithNetPacketsAreCountedPerSegmentAsTheDeviceCountsThem) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  ExpectTcpTransmitsCountedLikeTheDevice({"-e", "net-packets", "--net-dev", "none-such"});
}

TEST(NetIntegration, TcpRetransmissionsAreRecordedAsPerfettoRetransmitEvents) {
  GN_REQUIRE_REAL_EBPF();
  // An XDP program on the receiver drops 2% of frames at random, so the
  // sender has to retransmit.
  VethPairOptions options;
  options.napi = VethNapiMode::kXdp;
  options.xdp_drop_percent = 2;
  std::string error;
  auto pair = VethPair::Create(options, &error);
  ASSERT_TRUE(pair) << error;
  Recording rec("retransmit", {"-d", "60", "-e", "net"});
  ASSERT_TRUE(rec.WaitStarted());
  auto tcp0 = pair->SnmpCounters(Side::kSender, "Tcp");
  TcpStreamOptions tcp;
  tcp.duration = 1500ms;
  TcpStreamResult r = RunTcpStream(*pair, tcp);
  auto tcp1 = pair->SnmpCounters(Side::kSender, "Tcp");
  std::string log;
  auto trace = rec.Finish(&log);
  ASSERT_TRUE(trace) << log;
  ASSERT_TRUE(r.connected);
  const uint64_t retrans_segs = tcp1["RetransSegs"] - tcp0["RetransSegs"];
  ASSERT_GT(retrans_segs, 0u) << "no retransmissions were provoked";
  uint64_t events = 0;
  for (const auto* e : FtraceEvents(*trace))
    if (e->has_tcp_retransmit_skb() && e->tcp_retransmit_skb().dport() == tcp.port) ++events;
  // One event per retransmitted skb; RetransSegs counts segments, and an
  // skb can carry several.
  EXPECT_GT(events, 0u);
  EXPECT_LE(events, retrans_segs);
}

TEST(NetIntegration, NetDevWithoutNetPacketsIsAUsageError) {
  ChildProcess p({GpunoiseBinary(), "record", "-d", "1", "--net-dev", "eth0"});
  EXPECT_EQ(p.Wait(10s), 2);
  EXPECT_NE(p.stderr_text().find("usage:"), std::string::npos);
}

TEST(NetIntegration, BadNetworkOptionsAreUsageErrors) {
  const std::vector<std::vector<std::string>> bad = {
      {"-e", "net-packets", "--net-dev", "a-name-far-too-long-for-linux"},
      {"-e", "net-packets", "--net-dev", "a,b,c,d,e"},
      {"--net-interval", "0"},
      {"--net-interval", "soon"},
      {"--nic-interval", "0"},
      {"--nic-interval", "often"},
      {"-e", "net,bogus"},
      {"--net-packet-counters", "sometimes"},
  };
  for (const auto& extra : bad) {
    std::vector<std::string> args = {GpunoiseBinary(), "record", "-d", "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    ChildProcess p(args);
    EXPECT_EQ(p.Wait(10s), 2) << extra.back();
    std::string err = p.stderr_text();
    EXPECT_EQ(err.rfind("usage:", 0), 0u) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  }
}

}  // namespace
}  // namespace gpunoise::testing
