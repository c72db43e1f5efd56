// The report's NETWORK DEVICES table tells a device whose packets were not
// counted (another network namespace, packets from device statistics) from
// one that counted none: "-" and the NAPI packets, not 0; and a column whose
// collector could not start from one that counted nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "export/perfetto/metadata_packets.h"
#include "export/perfetto/net_tracks.h"
#include "export/perfetto/trace_file_writer.h"
#include "export/perfetto/track_event_writer.h"
#include "analyze/synthetic.h"
#include "import/test_trace.h"
#include "model/net_counters.h"
#include "report/report_of.h"
#include "report/report_session.h"
#include "report/text_report.h"

namespace gpunoise::report {
namespace {

using testing::ScopedTempDir;

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kBase = 7'000'000'000;
constexpr uint32_t kOwnNetns = 100, kPodNetns = 200;

// eth0 in the recorder's namespace (its own statistics), veth0 in a pod's
// (NAPI only), the per-CPU backlog (no device: NAPI only) and an idle lo, as
// `record` writes them by default; with `disabled`, the session summary says
// those collectors could not start, and with `missing` ("collector/category/event")
// that a collector ran without that tracepoint; collectors in `unlisted`
// are left out of the summary (their group not asked for).
std::string WriteTrace(const std::string& dir, const std::vector<std::string>& disabled = {},
                       const std::vector<std::string>& missing = {},
                       const std::vector<std::string>& unlisted = {}) {
  std::string path = dir + "/net.pftrace";
  auto out = perfetto::TraceFileWriter::Create(path, 0);
  EXPECT_TRUE(out.ok());
  std::vector<testing::SwitchSpec> switches = {{kBase, 0, 100}, {kBase + 50 * kMs, 100, 0}};
  EXPECT_TRUE(out->WritePacket(testing::SwitchBundle(0, switches)).ok());
  const model::NetDeviceKey eth0{kOwnNetns, 2}, veth0{kPodNetns, 3}, backlog{kOwnNetns, 0}, lo{kOwnNetns, 1};
  auto snapshot = [&](uint64_t ts, uint64_t n) {
    model::NetSnapshot s;
    s.ts = ts;
    s.devices.push_back({eth0, -1, model::NetDirection::kRx, model::kDeviceWideCpu, n, n * 100, 0});
    s.devices.push_back({eth0, -1, model::NetDirection::kTx, model::kDeviceWideCpu, n / 2, n * 50, 0});
    s.devices.push_back({lo, -1, model::NetDirection::kRx, model::kDeviceWideCpu, 77, 7700, 0});
    model::NapiCount napi;
    napi.dev = veth0;
    napi.cpu = 1;
    napi.polls = n / 4;
    napi.work = n / 2;
    s.napi.push_back(napi);
    napi.dev = backlog;
    napi.work = n / 10;
    s.napi.push_back(napi);
    return s;
  };
  model::NetNames names;
  names.own_netns = kOwnNetns;
  names.devices[eth0] = "eth0";
  names.devices[veth0] = "veth0";
  names.devices[lo] = "lo";
  names.packets_counted_everywhere = false;
  perfetto::TrackEventWriter writer(1, 42);
  perfetto::NetTrackWriter net(writer, [&](const perfetto::TracePacketBuilder& p) { return out->WritePacket(p); });
  EXPECT_TRUE(net.WriteTotals(snapshot(kBase, 1000), snapshot(kBase + 90 * kMs, 9000), names).ok());
  if (!disabled.empty()) {
    model::SessionInfo session;
    for (const std::string name : {"sched", "napi", "netdev", "drops"}) {
      if (std::find(unlisted.begin(), unlisted.end(), name) != unlisted.end()) continue;
      model::CollectorReport c;
      c.name = name;
      c.state = model::CollectorState::kActive;
      if (std::find(disabled.begin(), disabled.end(), name) != disabled.end()) {
        c.state = model::CollectorState::kDisabled;
        c.reason = "required tracepoint of " + name + " is missing on this kernel";
      }
      for (const std::string& m : missing)
        if (m.starts_with(name + "/")) {
          c.state = model::CollectorState::kDegraded;
          c.missing_events.push_back(m.substr(name.size() + 1));
        }
      session.collectors.push_back(c);
    }
    EXPECT_TRUE(perfetto::WriteSessionSummary(writer, session, *out).ok());
  }
  EXPECT_TRUE(out->Commit().ok());
  return path;
}

std::string LineOf(const std::string& text, const std::string& start) {
  size_t at = text.find(start);
  return at == std::string::npos ? "" : text.substr(at, text.find('\n', at) - at);
}

TEST(ReportNetworkDevices, ADeviceWhosePacketsWereNotCountedShowsADashAndItsNapiPacketsNotZero) {
  ScopedTempDir dir;
  const std::string path = WriteTrace(dir.path());
  const std::string text = ReportOf(path, false);
  const std::string eth0 = LineOf(text, "  eth0 ");
  const std::string veth0 = LineOf(text, "  veth0@200 ");
  ASSERT_FALSE(eth0.empty()) << text;
  ASSERT_FALSE(veth0.empty()) << text;
  EXPECT_NE(eth0.find(" 8000 "), std::string::npos) << eth0;  // its own statistics: counted
  EXPECT_NE(veth0.find("          -          - "), std::string::npos) << veth0;
  EXPECT_NE(text.find("rx and tx not counted: device statistics cover the recorder's own network namespace "
                      "(record --net-packet-counters on counts every device); its NAPI polls processed 4000 "
                      "packets"),
            std::string::npos)
      << text;

  // No device, no statistics, nothing to count: not "not counted".
  const std::string backlog = LineOf(text, "  (no-device) ");
  ASSERT_FALSE(backlog.empty()) << text;
  EXPECT_NE(backlog.find("          0          0 "), std::string::npos) << backlog;  // rx, tx: counted, 0
  EXPECT_EQ(text.find("processed 800 packets"), std::string::npos) << text;
  // A device that did nothing in the recording is not listed.
  EXPECT_TRUE(LineOf(text, "  lo ").empty()) << text;

  const std::string json = ReportOf(path, true);
  EXPECT_NE(json.find("\"packets_counted\": false"), std::string::npos) << json;
  // Unknown is null, as for every other figure a collector did not count.
  for (const char* unknown : {"\"rx_packets\": null", "\"rx_bytes\": null", "\"tx_packets\": null", "\"tx_bytes\": null"})
    EXPECT_NE(json.find(unknown), std::string::npos) << unknown << " in " << json;
  EXPECT_NE(json.find("\"packets_counted\": true"), std::string::npos) << json;
  EXPECT_NE(json.find("\"napi_packets\": 4000"), std::string::npos) << json;
}

TEST(ReportNetworkDevices, ColumnsOfACollectorThatCouldNotStartShowADashAndItsReason) {
  ScopedTempDir dir;
  const std::string text = ReportOf(WriteTrace(dir.path(), {"napi", "drops"}), false);
  const std::string eth0 = LineOf(text, "  eth0 ");
  ASSERT_FALSE(eth0.empty()) << text;
  // rx, tx from the device's statistics; napi, full, drops unknown; the
  // netdev collector ran: its timeouts are a count.
  EXPECT_NE(eth0.find(" 8000       4000          -        -        -        0 "), std::string::npos) << eth0;
  EXPECT_NE(text.find("  napi, full: not counted (the napi collector: required tracepoint of napi is missing on "
                      "this kernel)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  drops: not counted (the drops collector: "), std::string::npos) << text;
  EXPECT_EQ(text.find("timeouts: not counted"), std::string::npos) << text;

  // Every collector ran: counts, not dashes.
  const std::string all_ran = LineOf(ReportOf(WriteTrace(dir.path(), {"nothing"}), false), "  eth0 ");
  EXPECT_NE(all_ran.find(" 8000       4000          0        0        0        0 "), std::string::npos) << all_ran;
}

TEST(ReportNetworkDevices, TheJsonReportGivesNullForWhatACollectorThatCouldNotStartCounts) {
  ScopedTempDir dir;
  const std::string path = WriteTrace(dir.path(), {"napi", "drops"});
  const std::string json = ReportOf(path, true);
  for (const char* unknown : {"\"napi_polls\": null", "\"napi_packets\": null", "\"full_budget_polls\": null",
                              "\"dql_stalls\": null", "\"drops\": null", "\"drops_by_reason\": null"})
    EXPECT_NE(json.find(unknown), std::string::npos) << unknown << "\n" << json;
  EXPECT_EQ(json.find("\"napi_polls\": 0"), std::string::npos) << json;
  // The netdev collector ran: its timeouts are a count.
  EXPECT_NE(json.find("\"tx_timeouts\": 0"), std::string::npos) << json;
  EXPECT_EQ(json.find("\"tx_timeouts\": null"), std::string::npos) << json;
  // Nor does the text claim what the NAPI polls of veth0 (another namespace)
  // processed.
  const std::string text = ReportOf(path, false);
  EXPECT_EQ(text.find("its NAPI polls processed"), std::string::npos) << text;

  const std::string all_ran = ReportOf(WriteTrace(dir.path(), {"nothing"}), true);
  EXPECT_NE(all_ran.find("\"napi_polls\": 0"), std::string::npos) << all_ran;
  EXPECT_NE(all_ran.find("\"dql_stalls\": 0"), std::string::npos) << all_ran;
  EXPECT_EQ(all_ran.find("\"drops_by_reason\": null"), std::string::npos) << all_ran;

  // A kernel before 6.10 has no dql_stall_detected: the napi collector ran
  // without it, so its stalls are unknown and its polls are counted.
  const std::string no_dql = ReportOf(
      WriteTrace(dir.path(), {"nothing"}, {"napi/napi/dql_stall_detected"}), true);
  EXPECT_NE(no_dql.find("\"dql_stalls\": null"), std::string::npos) << no_dql;
  EXPECT_NE(no_dql.find("\"napi_polls\": 0"), std::string::npos) << no_dql;
}

TEST(ReportNetworkDevices, TheCountsOfACollectorTheRecordingDidNotRunAreUnknownNotZero) {
  // record --events without net lists its collectors, and napi and drops
  // are not among them.
  ScopedTempDir dir;
  const std::string path = WriteTrace(dir.path(), {"nothing"}, {}, {"napi", "drops"});
  const std::string text = ReportOf(path, false);
  const std::string eth0 = LineOf(text, "  eth0 ");
  ASSERT_FALSE(eth0.empty()) << text;
  EXPECT_NE(eth0.find(" 8000       4000          -        -        -        0 "), std::string::npos) << eth0;
  EXPECT_NE(text.find("  napi, full: not counted (the napi collector did not run: record --events without net)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  drops: not counted (the drops collector did not run"), std::string::npos) << text;
  const std::string json = ReportOf(path, true);
  EXPECT_NE(json.find("\"napi_polls\": null"), std::string::npos) << json;
  EXPECT_NE(json.find("\"drops\": null"), std::string::npos) << json;
  EXPECT_NE(json.find("\"tx_timeouts\": 0"), std::string::npos) << json;
}

TEST(ReportNetworkDevices, ADeviceKnownOnlyFromItsIrqsWithoutTheNetGroupHasUnknownPacketsNotZero) {
  // record --events sched,irq: eth0 is known from its queue IRQ's name.
  namespace t = gpunoise::testing;
  t::Synth s;
  s.Process(100, "trainer").Thread(100, 100, "trainer");
  s.IrqName(45, "eth0-TxRx-1");
  s.Switch(t::kBase, 1, 0, 100);
  s.Switch(t::kBase + 1000 * t::kMs, 1, 100, 0, 1);
  s.PeriodicIrq(0, t::kBase, t::kBase + 1000 * t::kMs, 45, 100 * t::kMs, 2 * t::kUs);
  analyze::Timeline timeline = s.Build();
  model::SessionInfo session;
  for (const char* name : {"sched", "irq"}) {
    model::CollectorReport c;
    c.name = name;
    c.state = model::CollectorState::kActive;
    session.collectors.push_back(c);
  }
  timeline.session = session;
  const analyze::Analysis a = t::AnalyzeOrDie(timeline, {"trainer"});
  const std::string text = report_export::FormatTextReport({"n.pftrace", &a, nullptr, nullptr});
  const std::string eth0 = LineOf(text, "  eth0 ");
  ASSERT_FALSE(eth0.empty()) << text;
  EXPECT_NE(eth0.find("  eth0                      -          -          -        -        -        -       10 "),
            std::string::npos)
      << eth0;
  EXPECT_NE(text.find("  rx, tx, timeouts: not counted (the netdev collector did not run: record --events without "
                      "net)\n"),
            std::string::npos)
      << text;
  // Not the other namespace's reason.
  EXPECT_EQ(text.find("device statistics cover"), std::string::npos) << text;
}

}  // namespace
}  // namespace gpunoise::report
