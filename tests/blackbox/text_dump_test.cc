// The ftrace ring as text (kernels before 6.12): a tracefs `trace` file
// captured on this VM (tests/blackbox/data/ftrace-trace-6.18.txt: Linux
// 6.18, an instance with the black box's events, trace_clock boot, 12 KiB
// per CPU, a loopback UDP exchange, a trace_marker anchor and a /dev/kmsg
// watchdog line; the first 587 event lines cut off and the header's entry
// count set to what is left), the same lines as ftrace_dump_on_oops prints
// them to a console, and the refusals of cut or damaged text.
#include "blackbox/text_dump.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

#include "common/files.h"
#include "common/strings.h"

namespace gpunoise::blackbox {
namespace {

const std::string kFixture = std::string(GPUNOISE_SOURCE_DIR) + "/tests/blackbox/data/ftrace-trace-6.18.txt";

std::string Fixture() {
  auto text = ReadFileToString(kFixture);
  EXPECT_TRUE(text.ok()) << kFixture;
  return text.ok() ? *text : std::string();
}

// What the fixture's lines say, counted without the parser.
struct Counts {
  std::map<std::string, uint64_t> by_event;
  std::map<uint32_t, uint64_t> by_cpu;
  uint64_t lines = 0;
};
Counts Count(const std::string& text) {
  Counts c;
  for (std::string_view line : Split(text, '\n')) {
    if (line.empty() || line[0] == '#') continue;
    size_t open = line.find(" [00");
    c.by_cpu[static_cast<uint32_t>(line[open + 4] - '0')]++;
    size_t colon = line.find(": ", line.find("] ") + 2);
    std::string_view rest = line.substr(colon + 2);
    c.by_event[std::string(rest.substr(0, rest.find(':')))]++;
    ++c.lines;
  }
  return c;
}

TEST(TextDump, AnEventLineGivesItsTaskCpuFlagsTimeAndEvent) {
  TextEventLine l;
  ASSERT_TRUE(ParseTextEventLine("          <idle>-0       [001] d.h1. 123.456789: irq_handler_entry: irq=24 name=virtio0-input.0", &l));
  EXPECT_EQ(l.comm, "<idle>");
  EXPECT_EQ(l.pid, 0);
  EXPECT_EQ(l.cpu, 1u);
  EXPECT_EQ(l.flags, 0x01 | 0x08);  // irqs off, in a hardirq
  EXPECT_EQ(l.ts, 123'456'789'000u);
  EXPECT_EQ(l.event, "irq_handler_entry");
  EXPECT_EQ(l.body, "irq=24 name=virtio0-input.0");
  // A comm with a dash and a space, and the record-tgid column.
  ASSERT_TRUE(ParseTextEventLine(" Web Content-x-4242    (  4200) [000] ..s1. 5.000001: softirq_exit: vec=3 [action=NET_RX]", &l));
  EXPECT_EQ(l.comm, "Web Content-x");
  EXPECT_EQ(l.pid, 4242);
  EXPECT_EQ(l.flags, 0x10);
  EXPECT_EQ(l.ts, 5'000'001'000u);
  EXPECT_FALSE(ParseTextEventLine("[  1.0] e1000e: eth0 NIC Link is Up", &l));
  EXPECT_FALSE(ParseTextEventLine("bash-1 [000] d.... 12: sched_switch: x", &l));  // no fraction
}

TEST(TextDump, TheCapturedTraceFileGivesEveryLineAsItsEvent) {
  std::string text = Fixture();
  Counts want = Count(text);
  auto d = ParseTextDump(text);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_FALSE(d->console_dump);
  EXPECT_EQ(d->lines, want.lines);
  for (const auto& [cpu, n] : want.by_cpu) EXPECT_EQ(d->records[cpu], n) << "cpu " << cpu;
  // Typed: scheduler, irq, softirq, napi and net events; the rest generic.
  uint64_t typed_want = 0;
  for (const char* e : {"sched_switch", "sched_waking", "irq_handler_entry", "irq_handler_exit", "softirq_entry",
                        "softirq_exit", "softirq_raise", "napi_poll", "netif_receive_skb", "net_dev_xmit"})
    typed_want += want.by_event[e];
  uint64_t typed = 0;
  for (const auto& [cpu, events] : d->events) {
    typed += events.size();
    for (size_t i = 1; i < events.size(); ++i) EXPECT_GE(events[i].ts, events[i - 1].ts) << "cpu " << cpu;
  }
  EXPECT_EQ(typed, typed_want);
  EXPECT_GT(want.by_event["napi_poll"], 0u);
  EXPECT_GT(want.by_event["netif_receive_skb"], 0u);
  EXPECT_EQ(d->generic.size(), want.lines - typed_want);
  // A switch's fields, as the line printed them ("cc1plus-22431 [000] d..2.
  // 37564.232825: sched_switch: prev_comm=cc1plus prev_pid=22431
  // prev_prio=130 prev_state=R ==> next_comm=migration/0 next_pid=18
  // next_prio=0", the first on CPU 0).
  const model::Event* at = nullptr;
  for (const model::Event& e : d->events[0])
    if (e.ts == 37564'232'825'000u && std::holds_alternative<model::SchedSwitch>(e.payload)) at = &e;
  ASSERT_NE(at, nullptr);
  const model::Event& first = *at;
  EXPECT_EQ(first.tid, 22431);
  EXPECT_EQ(first.common_flags, 0x01);
  const auto* sw = std::get_if<model::SchedSwitch>(&first.payload);
  ASSERT_NE(sw, nullptr);
  EXPECT_EQ(sw->prev_tid, 22431);
  EXPECT_EQ(sw->prev_state, model::task_state::kRunnable);
  EXPECT_EQ(sw->next_tid, 18);
  EXPECT_EQ(sw->next_prio, 0);
  EXPECT_EQ(sw->next_comm, model::TaskComm("migration/0"));
  uint64_t preempted = 0;
  for (const auto& [cpu, events] : d->events)
    for (const model::Event& e : events)
      if (const auto* s = std::get_if<model::SchedSwitch>(&e.payload); s && s->prev_state == model::task_state::kPreempted)
        ++preempted;
  EXPECT_EQ(preempted, 7u);  // "prev_state=R+"
  bool net = false;
  for (const model::Event& e : d->events[0])
    if (const auto* r = std::get_if<model::NetReceive>(&e.payload)) {
      net = true;
      EXPECT_EQ(r->dev.name, model::NetDevName("lo"));
      EXPECT_EQ(r->len, 92u);
      EXPECT_NE(r->skbaddr, 0u);
    }
  EXPECT_TRUE(net);
  // The printk:console line is the kernel log, classified; the marker the anchor.
  ASSERT_EQ(d->log.size(), 1u);
  EXPECT_EQ(d->log[0].cls, model::KernelLogClass::kTxTimeout);
  EXPECT_EQ(d->log[0].about, "eth9");
  EXPECT_EQ(d->log[0].tid, 24856);
  ASSERT_EQ(d->markers.anchors.size(), 1u);
  EXPECT_EQ(d->markers.anchors[0].boottime_ns, 37563974442806u);
  EXPECT_EQ(d->first_ts, 37564'232'162'000u);
  EXPECT_EQ(d->last_ts, 37564'275'443'000u);
}

// The same formatter as ftrace_dump_on_oops: the fixture's lines as a
// console capture of an oops prints them (a printk time before each, the
// dump's own begin and end lines, another CPU's printk in between, and the
// loss line print_trace_line writes for a CPU whose ring was overwritten).
std::string AsConsoleDump(const std::string& text, bool with_end) {
  std::string out = "[37570.100000] Oops: general protection fault\n[37570.100100] Dumping ftrace buffer:\n"
                    "[37570.100101] ---------------------------------\n[37570.100102] CPU:1 [LOST 12 EVENTS]\n";
  size_t n = 0;
  for (std::string_view line : Split(text, '\n')) {
    if (line.empty() || line[0] == '#') continue;
    out += fmt::format("[37570.{:06}] {}\n", 200 + n, line);
    if (++n == 100) out += "[37570.300000] mlx5_core 0000:3b:00.0: another CPU's message\n";
  }
  if (with_end) out += "[37570.900000] ---------------------------------\n[37570.900001] Kernel panic - not syncing\n";
  return out;
}

TEST(TextDump, AnOopsConsoleDumpOfTheSameLinesGivesTheSameEventsAndItsLoss) {
  std::string text = Fixture();
  auto file = ParseTextDump(text);
  auto dump = ParseTextDump(AsConsoleDump(text, true));
  ASSERT_TRUE(file.ok() && dump.ok()) << (dump.ok() ? "" : dump.error().message);
  EXPECT_TRUE(dump->console_dump);
  EXPECT_EQ(dump->lines, file->lines);
  EXPECT_EQ(dump->records, file->records);
  EXPECT_EQ(dump->generic.size(), file->generic.size());
  EXPECT_EQ(dump->other_lines, 1u);
  EXPECT_EQ(dump->lost[1], 12u);
  EXPECT_EQ(dump->log.size(), 1u);
  for (const auto& [cpu, events] : file->events) {
    ASSERT_EQ(dump->events[cpu].size(), events.size());
    for (size_t i = 0; i < events.size(); ++i) EXPECT_EQ(dump->events[cpu][i].ts, events[i].ts);
  }
}

TEST(TextDump, CutOrDamagedTextIsRefusedWithOneLine) {
  std::string text = Fixture();
  auto one_line = [](const Result<TextDump>& r) {
    EXPECT_FALSE(r.ok());
    if (!r.ok()) {
      EXPECT_EQ(r.error().message.find('\n'), std::string::npos) << r.error().message;
    }
    return r.ok() ? std::string() : r.error().message;
  };
  // Cut in the middle of its last line.
  EXPECT_NE(one_line(ParseTextDump(text.substr(0, text.size() - 30))).find("cut short"), std::string::npos);
  // Cut at a line's end: fewer entries than the header says.
  std::string fewer = text.substr(0, text.rfind('\n', text.size() - 2) + 1);
  EXPECT_NE(one_line(ParseTextDump(fewer)).find("truncated: its header says"), std::string::npos);
  // A damaged line in a trace file.
  std::string damaged = text;
  damaged.insert(damaged.find("\n", damaged.find("sched_switch")) + 1, "\x01\x02garbage 12 34\n");
  EXPECT_NE(one_line(ParseTextDump(damaged)).find("is not an ftrace event line"), std::string::npos);
  // A CPU number no kernel has, on an event line and on a loss line: per-CPU
  // tables are sized by it after the parse.
  std::string far_cpu = damaged;
  const std::string garbage = "\x01\x02garbage 12 34";
  far_cpu.replace(far_cpu.find(garbage), garbage.size(),
                  "ld-24891   [4000000000] d.h.. 37564.243458: irq_handler_entry: irq=36 name=x");
  EXPECT_NE(one_line(ParseTextDump(far_cpu)).find("is not an ftrace event line"), std::string::npos);
  std::string far_loss = text;
  far_loss.insert(far_loss.find("\n", far_loss.find("sched_switch")) + 1, "CPU:99999 [LOST 5 EVENTS]\n");
  EXPECT_NE(one_line(ParseTextDump(far_loss)).find("not one of the 16384 CPUs"), std::string::npos);
  // Not a dump at all; a console dump whose capture stopped mid-dump.
  EXPECT_NE(one_line(ParseTextDump("hello\nworld\n")).find("no ftrace event line"), std::string::npos);
  EXPECT_NE(one_line(ParseTextDump(AsConsoleDump(text, false))).find("stopped mid-dump"), std::string::npos);
}

std::string Binary() {
  const char* env = std::getenv("GPUNOISE_BIN");
  return env ? env : GPUNOISE_BIN_DEFAULT;
}

int Shell(const std::string& cmd, std::string* out, bool with_stderr = true) {
  FILE* p = ::popen((cmd + (with_stderr ? " 2>&1" : " 2>/dev/null")).c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  out->clear();
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out->append(buf, n);
  int status = ::pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(TextDump, ImportTextWritesTheTraceAndTheReportOfIt) {
  char tmpl[] = "/tmp/gn-bbtext-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  std::string dir = tmpl, trace = dir + "/t.pftrace", out;
  ASSERT_EQ(Shell(Binary() + " blackbox import-text " + kFixture + " -o " + trace, &out), 0) << out;
  EXPECT_NE(out.find("black box (ftrace text): " + std::to_string(Count(Fixture()).lines) + " event lines"),
            std::string::npos) << out;
  EXPECT_NE(out.find("placed on REALTIME by the last gpunoise-blackbox anchor marker"), std::string::npos) << out;
  EXPECT_NE(out.find("kernel log: 1 message"), std::string::npos) << out;
  EXPECT_NE(out.find("FINDINGS"), std::string::npos) << out;
  // The trace processor reads it like a recording: CPU, irq and softirq
  // tracks, the log line.
  if (::access("/usr/local/bin/trace_processor_shell", X_OK) == 0) {
    auto query = [&](const std::string& sql) {
      std::ofstream(dir + "/q.sql") << sql;
      std::string rows;
      Shell("/usr/local/bin/trace_processor_shell -q " + dir + "/q.sql " + trace, &rows, false);
      return rows;
    };
    // A slice per switch but each CPU's last (it has no end yet).
    const uint64_t switches = Count(Fixture()).by_event["sched_switch"];
    EXPECT_EQ(query("select count(*) as n from sched"), fmt::format("\"n\"\n{}\n", switches - 2));
    EXPECT_NE(query("select count(*) as n from slice where name = 'NET_RX'"), "\"n\"\n0\n");
    // Named by irq_handler_entry's name field (the irq table goes in before the events).
    EXPECT_NE(query("select count(*) as n from slice where name = 'IRQ (virtio1-req.0)'"), "\"n\"\n0\n");
    EXPECT_NE(query("select msg from android_logs").find("NETDEV WATCHDOG: eth9"), std::string::npos);
  }
  // A damaged text: one line on stderr, exit 1, no trace.
  std::ofstream(dir + "/bad.txt") << "garbage\n";
  EXPECT_EQ(Shell(Binary() + " blackbox import-text " + dir + "/bad.txt -o " + dir + "/bad.pftrace", &out), 1);
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  EXPECT_NE(::access((dir + "/bad.pftrace").c_str(), F_OK), 0);
  std::system(("rm -rf " + dir).c_str());
}

}  // namespace
}  // namespace gpunoise::blackbox
