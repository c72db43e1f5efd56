// The NIC's own counters and link events end to end, as root: a veth pair
// between two network namespaces this test creates, `gpunoise record` run
// inside the receiver's namespace (it samples the devices of its own
// namespace), and the trace checked against `ethtool -S` read by the test
// before and after (exact for cumulative counters) and against the kernel's
// carrier_changes, through both the trace's own fields and Perfetto's
// trace processor.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstring>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string_view>
#include <thread>

#include "common/clock.h"
#include "common/strings.h"
#include "common/unique_fd.h"
#include "integration/support/metrics_scrape.h"
#include "integration/support/net_load.h"
#include "integration/support/privileges.h"
#include "integration/support/trace_reader.h"
#include "integration/support/veth_pair.h"
#include "integration/support/workloads.h"

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;
using Side = VethPair::Side;

// `ethtool -S DEV` inside the namespace, as name -> value.
std::map<std::string, uint64_t> EthtoolS(const VethPair& pair, Side side) {
  std::string out;
  EXPECT_EQ(RunCommand({"ip", "netns", "exec", pair.netns(side), "ethtool", "-S", pair.device(side)}, &out), 0) << out;
  std::map<std::string, uint64_t> values;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    size_t colon = line.rfind(':');
    if (colon == std::string::npos) continue;
    std::string name(Trim(std::string_view(line).substr(0, colon)));
    if (auto v = ParseUint64(Trim(std::string_view(line).substr(colon + 1)))) values[name] = *v;
  }
  return values;
}

uint64_t CarrierChanges(const VethPair& pair, Side side) {
  std::string out;
  RunCommand({"ip", "netns", "exec", pair.netns(side), "cat",
              "/sys/class/net/" + pair.device(side) + "/carrier_changes"},
             &out);
  return ParseUint64(Trim(out)).value_or(0);
}

// gpunoise record inside one side's namespace.
class NsRecording {
 public:
  NsRecording(const VethPair& pair, Side side, const std::string& nic_interval = "50ms") {
    dir_ = MakeTempDir();
    path_ = dir_ + "/nic.pftrace";
    child_ = std::make_unique<ChildProcess>(std::vector<std::string>{
        "ip", "netns", "exec", pair.netns(side), GpunoiseBinary(), "record", "-o", path_, "-e",
        "sched,irq,softirq,net", "--net-interval", "50ms", "--nic-interval", nic_interval, "-d", "20s"});
  }
  ~NsRecording() {
    child_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  bool WaitStarted() { return child_->WaitForStderr("recording", 30s); }
  bool Finish(std::string* log) {
    child_->Signal(SIGINT);
    int rc = child_->Wait(60s);
    *log = child_->stderr_text();
    return rc == 0;
  }
  const std::string& path() const { return path_; }

 private:
  std::string dir_, path_;
  std::unique_ptr<ChildProcess> child_;
};

std::optional<EventArgs> NicCounters(const perfetto::Trace& trace, const std::string& device) {
  for (const auto& a : TrackEventArgs(trace, "nic counters"))
    if (a.count("device") && a.at("device") == device) return a;
  return std::nullopt;
}

// Rows of one trace-processor query, comma-separated fields.
std::vector<std::vector<std::string>> Query(const std::string& trace, const std::string& sql) {
  std::string tp = FindTraceProcessor();
  std::string dir = MakeTempDir();
  std::ofstream(dir + "/q.sql") << sql;
  ChildProcess proc({tp, "-q", dir + "/q.sql", trace});
  EXPECT_EQ(proc.Wait(120s), 0) << proc.stderr_text();
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(proc.stdout_text());
  std::string line;
  bool header = true;
  while (std::getline(lines, line)) {
    if (header) {
      header = false;
      continue;
    }
    std::vector<std::string> fields;
    for (auto f : Split(line, ',')) {
      std::string s(Trim(f));
      if (s.size() >= 2 && s.front() == '"') s = s.substr(1, s.size() - 2);
      fields.push_back(s);
    }
    rows.push_back(std::move(fields));
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return rows;
}

TEST(NicCountersIntegration, VethCountersInTheTraceMatchEthtoolBeforeAndAfterAFlood) {
  GN_REQUIRE_REAL_EBPF();
  std::string error;
  auto pair = VethPair::Create({}, &error);
  ASSERT_TRUE(pair) << error;
  auto before = EthtoolS(*pair, Side::kReceiver);
  ASSERT_FALSE(before.empty());

  NsRecording rec(*pair, Side::kReceiver);
  ASSERT_TRUE(rec.WaitStarted());
  std::this_thread::sleep_for(300ms);
  UdpFloodOptions flood;
  flood.duration = 1000ms;
  UdpFloodResult r = RunUdpFlood(*pair, flood);
  ASSERT_GT(r.sent, 1000u);
  std::this_thread::sleep_for(300ms);  // the counters settle inside the recording
  std::string log;
  ASSERT_TRUE(rec.Finish(&log)) << log;
  auto after = EthtoolS(*pair, Side::kReceiver);

  std::string read_error;
  auto trace = ReadTrace(rec.path(), &read_error);
  ASSERT_TRUE(trace) << read_error;
  const std::string dev = pair->device(Side::kReceiver);
  auto totals = NicCounters(*trace, dev);
  ASSERT_TRUE(totals) << "no 'nic counters' for " << dev << "\n" << log;
  EXPECT_EQ(totals->at("driver"), "veth");
  size_t compared = 0, rose = 0;
  for (const auto& [name, value] : after) {
    if (name == "peer_ifindex") {
      EXPECT_EQ(totals->count("c." + name), 0u) << "a gauge is not a counter";
      continue;
    }
    uint64_t delta = value - before.at(name);
    auto it = totals->find("c." + name);
    uint64_t recorded = it == totals->end() ? 0 : std::stoull(it->second);
    EXPECT_EQ(recorded, delta) << name << ": ethtool -S before " << before.at(name) << " after " << value;
    ++compared;
    rose += delta > 0;
  }
  EXPECT_GE(compared, 8u);
  // veth counts its NAPI path per queue: the flood's packets are there.
  const uint64_t queue_packets = after["rx_queue_0_xdp_packets"] - before["rx_queue_0_xdp_packets"];
  EXPECT_GE(queue_packets, r.sent / 2) << "sent " << r.sent;
  EXPECT_GE(rose, 1u);

  // Perfetto's trace processor builds the per-queue counter track under the
  // device and integrates to the same count.
  if (FindTraceProcessor().empty()) GTEST_SKIP() << kNoTraceProcessor;
  auto rows = Query(rec.path(),
                    "select name, cast(round(sum(v)) as int) from (select t.name as name, c.value * "
                    "((lead(c.ts) over (partition by c.track_id order by c.ts)) - c.ts) / 1e9 as v from counter c "
                    "join counter_track t on c.track_id = t.id where t.name = '" + dev +
                        " nic rx_queue_0_xdp_packets/s') group by name;");
  ASSERT_EQ(rows.size(), 1u) << "no counter track for the queue";
  ASSERT_EQ(rows[0].size(), 2u);
  EXPECT_NEAR(std::stod(rows[0][1]), static_cast<double>(queue_packets), 2.0);
}

// ethtool -S takes the rtnl lock (and some drivers ask their firmware), so
// the NIC's own counters keep their own, slower pace.
TEST(NicCountersIntegration, TheNicsOwnCountersAreReadAtTheNicIntervalTheKernelsAtTheNetInterval) {
  GN_REQUIRE_REAL_EBPF();
  std::string error;
  auto pair = VethPair::Create({}, &error);
  ASSERT_TRUE(pair) << error;
  NsRecording rec(*pair, Side::kReceiver, "1s");
  ASSERT_TRUE(rec.WaitStarted());
  UdpFloodOptions flood;
  flood.duration = 2500ms;
  UdpFloodResult r = RunUdpFlood(*pair, flood);
  ASSERT_GT(r.sent, 1000u);
  std::string log;
  ASSERT_TRUE(rec.Finish(&log)) << log;

  std::string read_error;
  auto trace = ReadTrace(rec.path(), &read_error);
  ASSERT_TRUE(trace) << read_error;
  const std::string dev = pair->device(Side::kReceiver);
  auto nic = CounterSamples(*trace, dev + " nic rx_queue_0_xdp_packets/s");
  size_t kernel = 0;
  for (const std::string& name : TrackNames(*trace))
    if (std::string_view(name).starts_with(dev) && std::string_view(name).ends_with(" rx packets/s") &&
        name.find(" nic ") == std::string::npos)
      kernel = std::max(kernel, CounterSamples(*trace, name).size());
  // About 2.5 s of flood plus the start and stop: a sample a second, and the
  // last reading at the stop.
  EXPECT_GE(nic.size(), 2u) << log;
  EXPECT_LE(nic.size(), 6u) << "sampled at the net interval, not the NIC's";
  EXPECT_GE(kernel, 25u) << "the kernel's counters keep the 50 ms interval";
}

TEST(NicCountersIntegration, LinkDownAndUpDuringARecordingIsALinkFlapAtTheRightTime) {
  GN_REQUIRE_REAL_EBPF();
  std::string error;
  auto pair = VethPair::Create({}, &error);
  ASSERT_TRUE(pair) << error;
  const std::string dev = pair->device(Side::kReceiver);
  const uint64_t changes_before = CarrierChanges(*pair, Side::kReceiver);

  NsRecording rec(*pair, Side::kReceiver);
  ASSERT_TRUE(rec.WaitStarted());
  std::this_thread::sleep_for(400ms);
  uint64_t down_from = BoottimeNs();
  ASSERT_EQ(RunCommand({"ip", "netns", "exec", pair->netns(Side::kReceiver), "ip", "link", "set", dev, "down"}), 0);
  uint64_t down_to = BoottimeNs();
  std::this_thread::sleep_for(400ms);
  uint64_t up_from = BoottimeNs();
  ASSERT_EQ(RunCommand({"ip", "netns", "exec", pair->netns(Side::kReceiver), "ip", "link", "set", dev, "up"}), 0);
  uint64_t up_to = BoottimeNs();
  std::this_thread::sleep_for(400ms);
  std::string log;
  ASSERT_TRUE(rec.Finish(&log)) << log;
  const uint64_t changes_after = CarrierChanges(*pair, Side::kReceiver);
  ASSERT_EQ(changes_after - changes_before, 2u);

  std::string read_error;
  auto trace = ReadTrace(rec.path(), &read_error);
  ASSERT_TRUE(trace) << read_error;
  auto totals = NicCounters(*trace, dev);
  ASSERT_TRUE(totals) << log;
  EXPECT_EQ(totals->at("carrier_changes"), "2");
  EXPECT_EQ(totals->at("link_down_events"), "1");

  // The report finds the flap.
  ChildProcess report({GpunoiseBinary(), "report", "--json", rec.path()});
  ASSERT_EQ(report.Wait(120s), 0) << report.stderr_text();
  std::string json = report.stdout_text();
  EXPECT_NE(json.find("\"link_flap\""), std::string::npos) << json.substr(0, 2000);

  // And the events sit at the right time on the device's track, as the
  // trace processor sees them.
  if (FindTraceProcessor().empty()) GTEST_SKIP() << kNoTraceProcessor;
  auto rows = Query(rec.path(),
                    "select s.ts, s.name, extract_arg(s.arg_set_id, 'debug.device'), extract_arg(s.arg_set_id, "
                    "'debug.source'), t.name from slice s join track t on s.track_id = t.id where s.category = "
                    "'gpunoise.link' and s.name in ('carrier_down', 'carrier_up') order by s.ts;");
  ASSERT_EQ(rows.size(), 2u);
  ASSERT_EQ(rows[0].size(), 5u);
  EXPECT_EQ(rows[0][1], "carrier_down");
  EXPECT_EQ(rows[0][2], dev);
  EXPECT_EQ(rows[0][4], dev);  // on the device's own track
  EXPECT_EQ(rows[1][1], "carrier_up");
  const uint64_t down_ts = std::stoull(rows[0][0]), up_ts = std::stoull(rows[1][0]);
  // Netlink announces the change; the recorder polls it on every drain pass.
  EXPECT_GE(down_ts, down_from);
  EXPECT_LE(down_ts, down_to + 100'000'000) << "source " << rows[0][3];
  EXPECT_GE(up_ts, up_from);
  EXPECT_LE(up_ts, up_to + 100'000'000) << "source " << rows[1][3];
}

// A bridge port taken down and up: the bridge logs what happened to the
// port ("<br>: port 1(<dev>) entered disabled state"), naming the device in
// the text (veth has no parent device, so no DEVICE= field). Those lines
// end up beside the link events on the device's track and in the
// link_flap finding's evidence.
TEST(NicCountersIntegration, ABridgePortFlapCarriesTheKernelLinesForThatDevice) {
  GN_REQUIRE_REAL_EBPF();
  std::string error;
  auto pair = VethPair::Create({}, &error);
  ASSERT_TRUE(pair) << error;
  const std::string ns = pair->netns(Side::kReceiver);
  const std::string dev = pair->device(Side::kReceiver);
  // The bridge lives in the pair's namespace and goes with it.
  const std::string br = dev.substr(0, dev.size() - 1) + "b";
  ASSERT_EQ(RunCommand({"ip", "netns", "exec", ns, "ip", "link", "add", br, "type", "bridge"}), 0);
  ASSERT_EQ(RunCommand({"ip", "netns", "exec", ns, "ip", "link", "set", dev, "master", br}), 0);
  ASSERT_EQ(RunCommand({"ip", "netns", "exec", ns, "ip", "link", "set", br, "up"}), 0);

  NsRecording rec(*pair, Side::kReceiver);
  ASSERT_TRUE(rec.WaitStarted());
  std::this_thread::sleep_for(400ms);
  ASSERT_EQ(RunCommand({"ip", "netns", "exec", ns, "ip", "link", "set", dev, "down"}), 0);
  std::this_thread::sleep_for(400ms);
  ASSERT_EQ(RunCommand({"ip", "netns", "exec", ns, "ip", "link", "set", dev, "up"}), 0);
  // The bridge hears of the carrier through linkwatch, which holds a
  // non-urgent change up to a second after the previous one: its
  // "forwarding state" line can come that much after the netlink event.
  std::this_thread::sleep_for(1500ms);
  std::string log;
  ASSERT_TRUE(rec.Finish(&log)) << log;
  EXPECT_NE(log.find("lines attached to link events"), std::string::npos) << log;

  // In the trace: the bridge's lines as instants on the device's track,
  // each tied to the link event it belongs to.
  std::string read_error;
  auto trace = ReadTrace(rec.path(), &read_error);
  ASSERT_TRUE(trace) << read_error;
  const std::string port = "(" + dev + ")";
  bool down_line = false, up_line = false;
  for (const auto& a : TrackEventArgs(*trace, "kernel log")) {
    // The bridge lost its carrier with its only port: its own events get
    // the same lines (they name the bridge too).
    if (!a.count("text") || a.at("text").find(port) == std::string::npos || a.at("device") != dev) continue;
    if (a.at("link_event") == "carrier_down" && a.at("text").find("entered disabled state") != std::string::npos)
      down_line = true;
    if (a.at("link_event") == "carrier_up" && a.at("text").find("entered forwarding state") != std::string::npos)
      up_line = true;
  }
  EXPECT_TRUE(down_line) << log;
  EXPECT_TRUE(up_line) << log;
  // One down, one up: the bridge's own port notifications (AF_BRIDGE,
  // no carrier attribute) are not link changes of the port.
  size_t downs = 0, ups = 0;
  for (const auto& a : TrackEventArgs(*trace, "carrier_down")) downs += a.count("device") && a.at("device") == dev;
  for (const auto& a : TrackEventArgs(*trace, "carrier_up")) ups += a.count("device") && a.at("device") == dev;
  EXPECT_EQ(downs, 1u);
  EXPECT_EQ(ups, 1u);

  // In the report: the link_flap finding quotes them.
  ChildProcess report({GpunoiseBinary(), "report", "--json", rec.path()});
  ASSERT_EQ(report.Wait(120s), 0) << report.stderr_text();
  std::string json = report.stdout_text();
  size_t flap = json.find("\"link_flap\"");
  ASSERT_NE(flap, std::string::npos) << json.substr(0, 2000);
  EXPECT_NE(json.find("kernel: " + br + ": port 1" + port + " entered disabled state"), std::string::npos)
      << json.substr(flap, 3000);

  if (FindTraceProcessor().empty()) GTEST_SKIP() << kNoTraceProcessor;
  auto rows = Query(rec.path(),
                    "select t.name, extract_arg(s.arg_set_id, 'debug.link_event'), extract_arg(s.arg_set_id, "
                    "'debug.text') from slice s join track t on s.track_id = t.id where s.category = "
                    "'gpunoise.link' and s.name = 'kernel log' order by s.ts;");
  bool seen = false;
  for (const auto& r : rows)
    if (r.size() == 3 && r[0] == dev && r[1] == "carrier_down" && r[2].find(port) != std::string::npos) seen = true;
  EXPECT_TRUE(seen) << rows.size() << " kernel log rows";
}

// A tap device inside namespace `ns`, attached to this process (so it has
// carrier) for as long as the returned descriptor is open; it goes away
// with it. The namespace is entered by a thread of its own (setns changes
// only the calling thread).
UniqueFd TapIn(const std::string& ns, const std::string& name, std::string* error) {
  UniqueFd tap;
  std::thread([&] {
    UniqueFd nsfd(::open(("/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC));
    if (!nsfd.valid() || ::setns(nsfd.get(), CLONE_NEWNET) != 0) {
      *error = "cannot enter namespace " + ns + ": " + std::strerror(errno);
      return;
    }
    UniqueFd fd(::open("/dev/net/tun", O_RDWR | O_CLOEXEC));
    ifreq ifr{};
    std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
    if (!fd.valid() || ::ioctl(fd.get(), TUNSETIFF, &ifr) != 0) {
      *error = "cannot create tap " + name + ": " + std::strerror(errno);
      return;
    }
    tap = std::move(fd);
  }).join();
  return tap;
}

// The tun driver keeps the link settings ethtool gives it and reports them
// back like a NIC: a port "renegotiated" from 100G full duplex to 25G half
// duplex during a recording is a speed and a duplex change with the old and
// new values, and a link_downshift finding.
TEST(NicCountersIntegration, ASpeedAndDuplexDropDuringARecordingIsALinkDownshift) {
  GN_REQUIRE_REAL_EBPF();
  std::string error;
  auto pair = VethPair::Create({}, &error);
  ASSERT_TRUE(pair) << error;
  const std::string ns = pair->netns(Side::kReceiver);
  const std::string dev = pair->device(Side::kReceiver);
  const std::string tap_name = dev.substr(0, dev.size() - 1) + "t";
  UniqueFd tap = TapIn(ns, tap_name, &error);
  ASSERT_TRUE(tap.valid()) << error;
  ASSERT_EQ(RunCommand({"ip", "netns", "exec", ns, "ip", "link", "set", tap_name, "up"}), 0);
  std::string out;
  ASSERT_EQ(RunCommand({"ip", "netns", "exec", ns, "ethtool", "-s", tap_name, "speed", "100000", "duplex", "full",
                        "autoneg", "off"},
                       &out),
            0)
      << out;

  NsRecording rec(*pair, Side::kReceiver);
  ASSERT_TRUE(rec.WaitStarted());
  std::this_thread::sleep_for(400ms);
  uint64_t change_from = BoottimeNs();
  ASSERT_EQ(RunCommand({"ip", "netns", "exec", ns, "ethtool", "-s", tap_name, "speed", "25000", "duplex", "half"},
                       &out),
            0)
      << out;
  uint64_t change_to = BoottimeNs();
  std::this_thread::sleep_for(400ms);
  std::string log;
  ASSERT_TRUE(rec.Finish(&log)) << log;

  std::string read_error;
  auto trace = ReadTrace(rec.path(), &read_error);
  ASSERT_TRUE(trace) << read_error;
  std::optional<EventArgs> speed, duplex;
  for (const auto& a : TrackEventArgs(*trace, "speed_change"))
    if (a.count("device") && a.at("device") == tap_name) speed = a;
  for (const auto& a : TrackEventArgs(*trace, "duplex_change"))
    if (a.count("device") && a.at("device") == tap_name) duplex = a;
  ASSERT_TRUE(speed) << log;
  EXPECT_EQ(speed->at("previous"), "100000");
  EXPECT_EQ(speed->at("current"), "25000");
  ASSERT_TRUE(duplex) << log;
  EXPECT_EQ(duplex->at("previous_duplex"), "full");
  EXPECT_EQ(duplex->at("duplex"), "half");

  ChildProcess report({GpunoiseBinary(), "report", "--json", rec.path()});
  ASSERT_EQ(report.Wait(120s), 0) << report.stderr_text();
  std::string json = report.stdout_text();
  EXPECT_NE(json.find("\"link_downshift\""), std::string::npos) << json.substr(0, 2000);
  EXPECT_NE(json.find(tap_name + ": link speed fell from 100 Gb/s to 25 Gb/s and half duplex"), std::string::npos)
      << json.substr(0, 4000);

  // Seen at the next counter sample (--nic-interval 50ms).
  if (FindTraceProcessor().empty()) GTEST_SKIP() << kNoTraceProcessor;
  auto rows = Query(rec.path(),
                    "select s.ts, t.name from slice s join track t on s.track_id = t.id where s.category = "
                    "'gpunoise.link' and s.name = 'speed_change';");
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_EQ(rows[0].size(), 2u);
  EXPECT_EQ(rows[0][1], tap_name);
  const uint64_t ts = std::stoull(rows[0][0]);
  EXPECT_GE(ts, change_from);
  EXPECT_LE(ts, change_to + 200'000'000);
}

// A link that comes back at another speed (the carrier off, the speed
// changed, the carrier on: what a renegotiating NIC does, with tun's
// TUNSETCARRIER as the cable): the speed change is read when the carrier
// returns, at the netlink event's time, not at the next counter sample.
TEST(NicCountersIntegration, ALinkThatComesBackSlowerHasItsSpeedChangeAtTheCarriersReturn) {
  GN_REQUIRE_REAL_EBPF();
  std::string error;
  auto pair = VethPair::Create({}, &error);
  ASSERT_TRUE(pair) << error;
  const std::string ns = pair->netns(Side::kReceiver);
  const std::string dev = pair->device(Side::kReceiver);
  const std::string tap_name = dev.substr(0, dev.size() - 1) + "t";
  UniqueFd tap = TapIn(ns, tap_name, &error);
  ASSERT_TRUE(tap.valid()) << error;
  ASSERT_EQ(RunCommand({"ip", "netns", "exec", ns, "ip", "link", "set", tap_name, "up"}), 0);
  std::string out;
  ASSERT_EQ(RunCommand({"ip", "netns", "exec", ns, "ethtool", "-s", tap_name, "speed", "100000", "duplex", "full",
                        "autoneg", "off"},
                       &out),
            0)
      << out;
  // Sampled rarely (no periodic reading before the stop), so that only the
  // carrier's return can explain a reading of the new speed at its time.
  std::string dir = MakeTempDir(), path = dir + "/nic.pftrace";
  ChildProcess rec({"ip", "netns", "exec", ns, GpunoiseBinary(), "record", "-o", path, "-e", "net", "--net-interval",
                    "10s", "--nic-interval", "10s", "-d", "20s"});
  ASSERT_TRUE(rec.WaitForStderr("recording", 30s));
  std::this_thread::sleep_for(300ms);
  int off = 0, on = 1;
  ASSERT_EQ(::ioctl(tap.get(), TUNSETCARRIER, &off), 0) << std::strerror(errno);
  std::this_thread::sleep_for(200ms);
  ASSERT_EQ(RunCommand({"ip", "netns", "exec", ns, "ethtool", "-s", tap_name, "speed", "25000"}, &out), 0) << out;
  ASSERT_EQ(::ioctl(tap.get(), TUNSETCARRIER, &on), 0) << std::strerror(errno);
  // linkwatch announces a change up to a second after the previous one.
  std::this_thread::sleep_for(1500ms);
  rec.Signal(SIGINT);
  ASSERT_EQ(rec.Wait(60s), 0) << rec.stderr_text();

  std::string read_error;
  auto trace = ReadTrace(path, &read_error);
  ASSERT_TRUE(trace) << read_error;
  if (FindTraceProcessor().empty()) GTEST_SKIP() << kNoTraceProcessor;
  auto rows = Query(path,
                    "select s.ts, s.name, extract_arg(s.arg_set_id, 'debug.current') from slice s join track t on "
                    "s.track_id = t.id where s.category = 'gpunoise.link' and t.name = '" + tap_name +
                        "' and s.name in ('carrier_up', 'speed_change') order by s.ts;");
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  ASSERT_EQ(rows.size(), 2u) << rec.stderr_text();
  ASSERT_EQ(rows[1].size(), 3u);
  EXPECT_EQ(rows[0][1], "carrier_up");
  EXPECT_EQ(rows[1][1], "speed_change");
  EXPECT_EQ(rows[1][2], "25000");
  // Both from the same pass of the drain loop.
  EXPECT_EQ(rows[0][0], rows[1][0]);
}

// The monitor, run inside the receiver's namespace, exports the device's
// carrier and carrier changes; a down/up shows in both (scraped from inside
// that namespace, where the monitor listens).
TEST(NicCountersIntegration, MonitorExportsLinkStateAndCarrierChanges) {
  GN_REQUIRE_REAL_EBPF();
  std::string error;
  auto pair = VethPair::Create({}, &error);
  ASSERT_TRUE(pair) << error;
  const std::string dev = pair->device(Side::kReceiver);
  ChildProcess monitor({"ip", "netns", "exec", pair->netns(Side::kReceiver), GpunoiseBinary(), "monitor", "--listen",
                        "127.0.0.1:0", "--interval", "200ms"});
  ASSERT_TRUE(monitor.WaitForStderr("listening", 60s)) << monitor.stderr_text();
  auto address = ListeningAddress(monitor.stderr_text());
  ASSERT_TRUE(address) << monitor.stderr_text();
  auto scrape = [&] {
    Series s;
    pair->RunIn(Side::kReceiver, [&] { s = ParseExposition(HttpGet(*address, "/metrics").body); });
    return s;
  };
  // Waits until a series has `value` (the monitor reads every 200 ms).
  auto wait_for = [&](const std::string& name, double value) {
    Series s;
    for (int i = 0; i < 50; ++i) {
      s = scrape();
      if (HasSeries(s, name, {{"device", dev}}) && SumOf(s, name, {{"device", dev}}) == value) return true;
      std::this_thread::sleep_for(100ms);
    }
    ADD_FAILURE() << name << " never reached " << value << "; last " << SumOf(s, name, {{"device", dev}});
    return false;
  };
  EXPECT_TRUE(wait_for("gpunoise_nic_link_up", 1));
  EXPECT_TRUE(wait_for("gpunoise_nic_carrier_changes_total", 0));
  Series s = scrape();
  EXPECT_TRUE(HasSeries(s, "gpunoise_nic_drops_total", {{"device", dev}, {"kind", "rx_missed"}}));
  ASSERT_EQ(RunCommand({"ip", "netns", "exec", pair->netns(Side::kReceiver), "ip", "link", "set", dev, "down"}), 0);
  EXPECT_TRUE(wait_for("gpunoise_nic_link_up", 0));
  ASSERT_EQ(RunCommand({"ip", "netns", "exec", pair->netns(Side::kReceiver), "ip", "link", "set", dev, "up"}), 0);
  EXPECT_TRUE(wait_for("gpunoise_nic_carrier_changes_total", 2));
  EXPECT_TRUE(wait_for("gpunoise_nic_link_up", 1));
  monitor.Signal(SIGTERM);
  EXPECT_EQ(monitor.Wait(30s), 0) << monitor.stderr_text();
  EXPECT_NE(monitor.stderr_text().find(dev + ": carrier_down"), std::string::npos) << monitor.stderr_text();
}

}  // namespace
}  // namespace gpunoise::testing
