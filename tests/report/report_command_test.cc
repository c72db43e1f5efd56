// `gpunoise report` as a user runs it, on trace files written the way
// `gpunoise record` writes them (compact sched bundles, a process tree).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <optional>

#include "export/perfetto/ftrace_bundle_encoder.h"
#include "export/perfetto/metadata_packets.h"
#include "export/perfetto/trace_file_writer.h"
#include "merge/trace_merger.h"
#include "import/test_trace.h"
#include "integration/support/trace_reader.h"
#include "integration/support/workloads.h"
#include "export/perfetto/parsed_packet.h"

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kBase = 5'000'000'000;

class NoIrqNames : public perfetto::IrqNameSource {
 public:
  std::string_view IrqName(int32_t) override { return "irq"; }
};

model::Event Switch(uint64_t ts, uint32_t cpu, int32_t prev, int32_t next, int64_t state, const char* comm) {
  model::SchedSwitch s;
  s.prev_tid = prev;
  s.prev_state = state;
  s.next_tid = next;
  s.next_comm = model::TaskComm(comm);
  return {ts, cpu, prev, s};
}

// 1 s on CPU 1: "trainer" (pid 100) and, when `hog`, "hog" (pid 200)
// taking turns every 4 ms; CPU 0 idles with a short task now and then.
std::string WriteTrace(const std::string& dir, bool hog) {
  std::map<uint32_t, std::vector<model::Event>> by_cpu;
  by_cpu[1].push_back(Switch(kBase, 1, 0, 100, 0, "trainer"));
  for (uint64_t t = kBase; t + 8 * kMs <= kBase + 1000 * kMs; t += 8 * kMs) {
    if (!hog) continue;
    by_cpu[1].push_back(Switch(t + 4 * kMs, 1, 100, 200, 256, "hog"));
    by_cpu[1].push_back(Switch(t + 8 * kMs, 1, 200, 100, 256, "trainer"));
  }
  by_cpu[1].push_back(Switch(kBase + 1000 * kMs, 1, 100, 0, 1, "swapper/1"));
  for (uint64_t t = kBase; t < kBase + 1000 * kMs; t += 50 * kMs) {
    by_cpu[0].push_back(Switch(t + kMs, 0, 0, 300, 0, "cron"));
    by_cpu[0].push_back(Switch(t + kMs + 100000, 0, 300, 0, 1, "swapper/0"));
  }
  TestTrace trace;
  perfetto::TracePacket packet;
  perfetto::TracePacketBuilder built;
  model::ProcessSnapshot processes;
  processes.ts = kBase;
  for (auto [pid, name] : std::vector<std::pair<int32_t, std::string>>{{100, "trainer"}, {200, "hog"}, {300, "cron"}}) {
    model::ProcessInfo p;
    p.pid = pid;
    p.ppid = 1;
    p.comm = name;
    p.cmdline = {"/usr/bin/" + name};
    processes.processes.push_back(p);
    processes.threads.push_back({pid, pid, name});
  }
  perfetto::FillProcessTree(&built, processes);
  packet = perfetto::Parsed(built);
  trace.Add(packet);
  perfetto::FtraceBundleEncoder encoder;
  NoIrqNames names;
  // Two drains per CPU, as the recorder writes them.
  for (int half = 0; half < 2; ++half) {
    for (auto& [cpu, events] : by_cpu) {
      size_t mid = events.size() / 2;
      std::vector<model::Event> part(events.begin() + (half ? mid : 0), half ? events.end() : events.begin() + mid);
      packet.Clear();
      encoder.Encode({cpu, false, 0}, part, names, &packet);
      trace.Add(packet);
    }
  }
  return trace.Write(dir, hog ? "hog.pftrace" : "quiet.pftrace");
}

struct CommandRun {
  int rc;
  std::string out, err;
};

CommandRun Report(std::vector<std::string> args) {
  args.insert(args.begin(), {GpunoiseBinary(), "report"});
  ChildProcess p(args);
  int rc = p.Wait(60s);
  return {rc, p.stdout_text(), p.stderr_text()};
}

int Lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

TEST(ReportCommand, NamesTheHogFirstWithWhenWhereAndHowMuch) {
  ScopedTempDir dir;
  std::string path = WriteTrace(dir.path(), true);
  CommandRun r = Report({path, "--focus", "trainer"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("FINDINGS (1,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" 1. [interference] hog (pid 200) kept trainer (pid 100) waiting"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("    where: CPU 1"), std::string::npos);
  EXPECT_NE(r.out.find("    when:  +0.004 s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("TOP RUN-QUEUE DELAYS OF FOCUS THREADS"), std::string::npos);
  EXPECT_NE(r.out.find("ran instead: hog (pid 200) 4 ms"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("LOST EVENTS"), std::string::npos);
}

// The same packets in zlib blocks, the way `gpunoise record` writes them by
// default.
std::string CompressedCopy(const std::string& path, const std::string& out) {
  auto reader = perfetto::TracePacketReader::Open(path);
  auto writer = perfetto::TraceFileWriter::Create(out, 0, perfetto::TraceCompression::kZlib);
  EXPECT_TRUE(reader.ok() && writer.ok());
  std::string packet;
  uint64_t offset = 0;
  while (true) {
    auto more = reader->Next(&packet, &offset);
    EXPECT_TRUE(more.ok());
    if (!more.ok() || !*more) break;
    EXPECT_TRUE(writer->WriteSerializedPacket(packet).ok());
  }
  EXPECT_TRUE(writer->Commit().ok());
  return out;
}

TEST(ReportCommand, ACompressedTraceGivesTheSameFindings) {
  ScopedTempDir dir;
  std::string path = WriteTrace(dir.path(), true);
  std::string compressed = CompressedCopy(path, dir.path() + "/hog-zlib.pftrace");
  CommandRun plain = Report({path, "--json", "--focus", "trainer"});
  CommandRun zlib = Report({compressed, "--json", "--focus", "trainer"});
  ASSERT_EQ(plain.rc, 0) << plain.err;
  ASSERT_EQ(zlib.rc, 0) << zlib.err;
  std::ofstream(dir.path() + "/plain.json") << plain.out;
  std::ofstream(dir.path() + "/zlib.json") << zlib.out;
  // Everything but the file's own name, size and packet count (a block
  // counts as a packet too) must be the same.
  std::string check =
      "import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); "
      "assert a['findings'], 'the hog is found'; "
      "[r['trace'].pop(k) for r in (a,b) for k in ('path',)]; "
      "[r['trace']['read'].pop(k) for r in (a,b) for k in ('bytes','packets')]; "
      "assert a == b, (a, b)";
  ChildProcess py({"python3", "-c", check, dir.path() + "/plain.json", dir.path() + "/zlib.json"});
  EXPECT_EQ(py.Wait(30s), 0) << py.stderr_text();
  // The text report's findings read the same.
  CommandRun plain_text = Report({path, "--focus", "trainer"});
  CommandRun zlib_text = Report({compressed, "--focus", "trainer"});
  auto findings = [](const std::string& out) { return out.substr(out.find("FINDINGS")); };
  ASSERT_NE(plain_text.out.find("FINDINGS"), std::string::npos) << plain_text.out;
  ASSERT_NE(zlib_text.out.find("FINDINGS"), std::string::npos) << zlib_text.out;
  std::string a = findings(plain_text.out), b = findings(zlib_text.out);
  // Cut the trace's size line, the one place the files differ.
  auto cut = [](std::string s) {
    auto at = s.find("  read ");
    if (at != std::string::npos) s.erase(at, s.find('\n', at) - at);
    return s;
  };
  EXPECT_EQ(cut(a), cut(b));
}

// Runs --annotate on `path` into `out` and checks the output begins with the
// input's packets, unchanged, and adds some.
void AnnotateKeepingTheTrace(const std::string& path, const std::string& out,
                             std::optional<perfetto::Trace>* annotated) {
  CommandRun r = Report({path, "--focus", "trainer", "--annotate", out});
  ASSERT_EQ(r.rc, 0) << r.err;
  std::string error;
  auto original = ReadTrace(path, &error);
  *annotated = ReadTrace(out, &error);
  ASSERT_TRUE(original && *annotated) << error;
  ASSERT_GT((*annotated)->packet_size(), original->packet_size());
  for (int i = 0; i < original->packet_size(); ++i)
    ASSERT_EQ((*annotated)->packet(i).SerializeAsString(), original->packet(i).SerializeAsString());
}

TEST(ReportCommand, AnnotatingACompressedTraceKeepsItsBlocks) {
  ScopedTempDir dir;
  std::string path = CompressedCopy(WriteTrace(dir.path(), true), dir.path() + "/hog-zlib.pftrace");
  std::string out = dir.path() + "/annotated.pftrace";
  std::optional<perfetto::Trace> annotated;
  ASSERT_NO_FATAL_FAILURE(AnnotateKeepingTheTrace(path, out, &annotated));
  bool findings_track = false;
  for (const auto& p : annotated->packet())
    findings_track |= p.has_track_descriptor() && p.track_descriptor().name() == "gpunoise findings";
  EXPECT_TRUE(findings_track);
}

TEST(ReportCommand, AnnotatedTraceIsOwnerOnly) {
  ScopedTempDir dir;
  std::string path = WriteTrace(dir.path(), true);
  std::string out = dir.path() + "/annotated.pftrace";
  std::optional<perfetto::Trace> annotated;
  ASSERT_NO_FATAL_FAILURE(AnnotateKeepingTheTrace(path, out, &annotated));
  struct stat st {};
  ASSERT_EQ(::stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST(ReportCommand, AnnotatingOntoASymlinkIsRefusedAndItsTargetUntouched) {
  ScopedTempDir dir;
  std::string path = WriteTrace(dir.path(), true);
  std::string target = dir.path() + "/precious";
  std::ofstream(target) << "precious";
  std::string out = dir.path() + "/annotated.pftrace";
  ASSERT_EQ(::symlink(target.c_str(), out.c_str()), 0);
  CommandRun r = Report({path, "--focus", "trainer", "--annotate", out});
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.err.find("refusing to write " + out + ": " + out + " is a symbolic link"), std::string::npos)
      << r.err;
  std::ifstream in(target);
  std::string contents((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(contents, "precious");
}

TEST(ReportCommand, AQuietTraceHasNoFindings) {
  ScopedTempDir dir;
  std::string path = WriteTrace(dir.path(), false);
  CommandRun r = Report({path});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("No findings"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("focus (no GPU data: the 1 busiest non-kernel thread)"), std::string::npos) << r.out;
}

TEST(ReportCommand, JsonFollowsTheDocumentedSchema) {
  ScopedTempDir dir;
  std::string path = WriteTrace(dir.path(), true);
  CommandRun r = Report({path, "--json", "--focus", "100"});
  ASSERT_EQ(r.rc, 0) << r.err;
  std::string json_path = dir.path() + "/r.json";
  std::ofstream(json_path) << r.out;
  // Python's json module as an independent parser; the checks mirror
  // docs/report.md's schema.
  std::string check =
      "import json,sys; r=json.load(open(sys.argv[1])); "
      "assert r['schema']=='gpunoise.report/1'; f=r['findings'][0]; "
      "assert f['detector']=='interference' and f['culprit']['tid']==200 and f['cpus']==[1]; "
      "assert abs(f['cost_ns']-500e6)<10e6, f['cost_ns']; "
      "assert r['focus']['threads'][0]['tid']==100; "
      "assert {'cpus','top_run_queue_delays','network_devices','lost_events','thresholds','window','trace'} <= set(r); "
      "assert r['top_run_queue_delays'][0]['ran_instead'][0]['kind']=='task'";
  ChildProcess py({"python3", "-c", check, json_path});
  EXPECT_EQ(py.Wait(30s), 0) << py.stderr_text() << r.out;
}

TEST(ReportCommand, AnnotateAddsTheFindingsAsTracksAndKeepsTheTrace) {
  ScopedTempDir dir;
  std::string path = WriteTrace(dir.path(), true);
  std::string out = dir.path() + "/annotated.pftrace";
  std::optional<perfetto::Trace> annotated;
  ASSERT_NO_FATAL_FAILURE(AnnotateKeepingTheTrace(path, out, &annotated));
  uint64_t root = 0, finding_track = 0;
  int begins = 0, ends = 0;
  std::string title;
  for (const auto& p : annotated->packet()) {
    if (p.has_track_descriptor() && p.track_descriptor().name() == "gpunoise findings") root = p.track_descriptor().uuid();
    if (p.has_track_descriptor() && root && p.track_descriptor().parent_uuid() == root)
      finding_track = p.track_descriptor().uuid();
    if (p.has_track_event() && p.track_event().track_uuid() == finding_track) {
      if (p.track_event().type() == perfetto::TrackEvent::TYPE_SLICE_BEGIN) {
        if (!begins) title = p.track_event().name();
        ++begins;
        EXPECT_GE(p.timestamp(), kBase);
      }
      if (p.track_event().type() == perfetto::TrackEvent::TYPE_SLICE_END) ++ends;
    }
  }
  EXPECT_NE(root, 0u);
  EXPECT_NE(finding_track, 0u);
  EXPECT_GE(begins, 2) << "the span and its worst windows";
  EXPECT_EQ(begins, ends);
  EXPECT_NE(title.find("hog (pid 200)"), std::string::npos) << title;
}

TEST(ReportCommand, ATruncatedTraceIsAOneLineErrorAndPartialReportsWhatItCan) {
  ScopedTempDir dir;
  std::string path = WriteTrace(dir.path(), true);
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::string cut_path = dir.path() + "/cut.pftrace";
  std::ofstream(cut_path, std::ios::binary) << bytes.substr(0, bytes.size() - 10);
  CommandRun r = Report({cut_path});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("truncated at byte " + std::to_string(bytes.size() - 10)), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());

  CommandRun p = Report({cut_path, "--partial", "--focus", "trainer"});
  EXPECT_EQ(p.rc, 3) << p.err;
  EXPECT_NE(p.out.find("DAMAGED TRACE"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("[interference] hog (pid 200)"), std::string::npos) << p.out;
  EXPECT_NE(p.err.find("truncated at byte"), std::string::npos);
}

TEST(ReportCommand, TheWindowLimitsWhatIsAnalyzed) {
  ScopedTempDir dir;
  std::string path = WriteTrace(dir.path(), true);
  CommandRun r = Report({path, "--json", "--focus", "trainer", "--window", "0:0.5"});
  ASSERT_EQ(r.rc, 0) << r.err;
  std::string json_path = dir.path() + "/w.json";
  std::ofstream(json_path) << r.out;
  ChildProcess py({"python3", "-c",
                   "import json,sys; r=json.load(open(sys.argv[1])); c=r['findings'][0]['cost_ns']; "
                   "assert abs(c-250e6)<10e6, c; assert r['window']['end_offset_ns']==500000000",
                   json_path});
  EXPECT_EQ(py.Wait(30s), 0) << py.stderr_text();
}

TEST(ReportCommand, OptionsBeforeTheFileTakeOneValueEach) {
  ScopedTempDir dir;
  std::string path = WriteTrace(dir.path(), true);
  // Once "--focus trainer FILE" read FILE as a second focus value.
  CommandRun r = Report({"--json", "--focus", "trainer", path});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("\"how\": \"--focus trainer\""), std::string::npos) << r.out;
  CommandRun two = Report({"--focus", "trainer", "--focus", "hog", path});
  ASSERT_EQ(two.rc, 0) << two.err;
  CommandRun threshold = Report({"--threshold", "interference.min_share=0.5", path});
  EXPECT_EQ(threshold.rc, 0) << threshold.err;
}

TEST(ReportCommand, MisuseIsAUsageErrorAndBadInputAnError) {
  EXPECT_EQ(Report({}).rc, 2);
  ScopedTempDir dir;
  std::string path = WriteTrace(dir.path(), false);
  CommandRun th = Report({path, "--threshold", "softirq.bogus=1"});
  EXPECT_EQ(th.rc, 2);
  EXPECT_EQ(th.err.rfind("usage:", 0), 0u) << th.err;
  EXPECT_EQ(Report({path, "--window", "5"}).rc, 2);
  EXPECT_EQ(Report({path, "--window", "3:1"}).rc, 2);
  CommandRun focus = Report({path, "--focus", "nosuchthing"});
  EXPECT_EQ(focus.rc, 1);
  EXPECT_EQ(Lines(focus.err), 1) << focus.err;
  CommandRun missing = Report({dir.path() + "/none.pftrace"});
  EXPECT_EQ(missing.rc, 1);
  EXPECT_NE(missing.err.find("failed to open trace"), std::string::npos);
  std::string junk = dir.path() + "/junk.pftrace";
  std::ofstream(junk) << "this is not a trace at all";
  CommandRun j = Report({junk});
  EXPECT_EQ(j.rc, 1);
  EXPECT_EQ(Lines(j.err), 1) << j.err;
  EXPECT_NE(j.err.find("byte"), std::string::npos) << j.err;
  CommandRun list = Report({"--list-thresholds"});
  EXPECT_EQ(list.rc, 0);
  EXPECT_NE(list.out.find("softirq.share"), std::string::npos);
}

}  // namespace
}  // namespace gpunoise::testing
