// The GPU side's loss, from fragment files to the report's header, the way
// `gpunoise record --gpu-dir` collects them: CUPTI's dropped records, a
// fragment cut short, one unreadable and one that came after the window.
#include <gtest/gtest.h>

#include <fstream>

#include "export/perfetto/metadata_packets.h"
#include "export/perfetto/protos/perfetto_trace_subset.pb.h"
#include "export/perfetto/trace_file_writer.h"
#include "export/perfetto/track_event_writer.h"
#include "import/test_trace.h"
#include "model/gpu_capture.h"
#include "record/gpu_recording.h"
#include "report/report_session.h"

namespace gpunoise::record {
namespace {

using testing::ScopedTempDir;

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kBase = 9'000'000'000;

// A fragment as the CUPTI library flushes it: a slice on a GPU track, and
// the dropped-records counter when `counter` (or the final summary instant
// with the count when `summary`).
std::string Fragment(uint64_t ts, int64_t counter, int64_t summary, int64_t chunks_not_written = -1) {
  perfetto::Trace t;
  auto* d = t.add_packet();
  d->set_trusted_packet_sequence_id(1);
  d->mutable_track_descriptor()->set_uuid(77);
  d->mutable_track_descriptor()->set_name(std::string(model::kCuptiDroppedRecordsTrack));
  d->mutable_track_descriptor()->mutable_counter();
  auto* k = t.add_packet();
  k->set_trusted_packet_sequence_id(1);
  k->set_timestamp(ts - kMs);
  k->mutable_track_event()->set_type(perfetto::TrackEvent::TYPE_INSTANT);
  k->mutable_track_event()->set_track_uuid(77);
  k->mutable_track_event()->set_name("kernel");
  if (counter >= 0) {
    auto* c = t.add_packet();
    c->set_trusted_packet_sequence_id(1);
    c->set_timestamp(ts);
    c->mutable_track_event()->set_type(perfetto::TrackEvent::TYPE_COUNTER);
    c->mutable_track_event()->set_track_uuid(77);
    c->mutable_track_event()->set_counter_value(counter);
  }
  if (summary >= 0) {
    auto* s = t.add_packet();
    s->set_trusted_packet_sequence_id(1);
    s->set_timestamp(ts);
    auto* e = s->mutable_track_event();
    e->set_type(perfetto::TrackEvent::TYPE_INSTANT);
    e->set_track_uuid(77);
    e->set_name(std::string(model::kCuptiCaptureSummaryEvent));
    auto* a = e->add_debug_annotations();
    a->set_name(std::string(model::kCuptiDroppedRecordsArg));
    a->set_uint_value(static_cast<uint64_t>(summary));
    if (chunks_not_written >= 0) {
      auto* c = e->add_debug_annotations();
      c->set_name(std::string(model::kCuptiChunksNotWrittenArg));
      c->set_uint_value(static_cast<uint64_t>(chunks_not_written));
    }
  }
  return t.SerializeAsString();
}

void Put(const std::string& dir, int pid, uint64_t ts, const std::string& bytes) {
  std::ofstream(dir + "/" + model::FragmentFileName(pid, ts), std::ios::binary) << bytes;
}

TEST(GpuLossReport, CuptiDropsATruncatedFragmentAndAnUnreadableOneShowInTheReportHeader) {
  ScopedTempDir fragments, out_dir;
  model::SessionInfo session;
  session.tool_version = "0.test";
  session.start_ts = kBase;
  session.end_ts = kBase + 100 * kMs;
  // Process 10 had dropped 3 records before the recording and 12 by its end.
  Put(fragments.path(), 10, kBase - 50 * kMs, Fragment(kBase - 50 * kMs, 3, -1));
  Put(fragments.path(), 10, kBase + 40 * kMs, Fragment(kBase + 40 * kMs, 5, -1));
  Put(fragments.path(), 10, kBase + 100 * kMs, Fragment(kBase + 100 * kMs, 12, 12));
  // Flushed after the collection window closed: not in the trace.
  Put(fragments.path(), 10, kBase + 100 * kMs + 3000 * kMs, Fragment(kBase + 3100 * kMs, 20, -1));
  // Process 11: one fragment cut short, one of which nothing reads.
  Put(fragments.path(), 11, kBase + 50 * kMs, Fragment(kBase + 50 * kMs, -1, -1) + std::string("\x0a\x40", 2));
  Put(fragments.path(), 11, kBase + 60 * kMs, std::string("\xff\xff\xff", 3));

  GpuRecordingOptions options;
  options.collect_dir = fragments.path();
  options.counters = false;  // no NVML here
  auto gpu = GpuRecording::Create(options, "/nonexistent/gpunoise");
  ASSERT_TRUE(gpu.ok()) << gpu.error().message;

  std::string path = out_dir.path() + "/gpu.pftrace";
  auto out = perfetto::TraceFileWriter::Create(path, 0);
  ASSERT_TRUE(out.ok());
  std::vector<testing::SwitchSpec> switches;
  for (uint64_t t = kBase; t < kBase + 100 * kMs; t += 10 * kMs) {
    switches.push_back({t, 0, 100});
    switches.push_back({t + 5 * kMs, 100, 0});
  }
  ASSERT_TRUE(out->WritePacket(testing::SwitchBundle(0, switches)).ok());
  perfetto::TrackEventWriter writer(1, 42);
  ASSERT_TRUE(perfetto::WriteSessionSummary(writer, session, *out).ok());
  // As record does: the GPU side after the kernel's session summary.
  ASSERT_TRUE((*gpu)->Append(*out, session).ok());
  ASSERT_TRUE(out->Commit().ok());

  const model::GpuLoss& loss = (*gpu)->loss();
  EXPECT_EQ(loss.processes, 2u);
  EXPECT_EQ(loss.fragments, 4u);
  EXPECT_EQ(loss.cupti_dropped_records, 9u);  // 12 by the end, less the 3 before the window
  EXPECT_EQ(loss.fragments_truncated, 1u);
  EXPECT_EQ(loss.fragments_unreadable, 1u);
  EXPECT_EQ(loss.fragments_late, 1u);
  EXPECT_NE((*gpu)->Summary().find("lost: 9 CUPTI records dropped, 1 fragments unreadable, 1 fragments truncated, "
                                   "1 fragments after the end"),
            std::string::npos)
      << (*gpu)->Summary();

  report::ReportOptions o;
  o.trace_path = path;
  auto text = report::RunReport(o);
  ASSERT_TRUE(text.ok()) << text.error().message;
  std::string header = text->output.substr(0, text->output.find("\n\n") + 1);
  EXPECT_NE(header.find("  GPU: 2 processes, 4 fragments; lost: 9 CUPTI records dropped (CUPTI had no buffer space), "
                        "1 fragment unreadable (none of it in the trace), 1 fragment truncated (kept up to the "
                        "damage), 1 fragment after the recording's end (not in the trace)\n"),
            std::string::npos)
      << header;
  o.json = true;
  auto json = report::RunReport(o);
  ASSERT_TRUE(json.ok());
  EXPECT_NE(json->output.find("\"cupti_dropped_records\": 9"), std::string::npos) << json->output;
  EXPECT_NE(json->output.find("\"fragments_truncated\": 1"), std::string::npos);
  EXPECT_NE(json->output.find("\"fragments_unreadable\": 1"), std::string::npos);
  EXPECT_NE(json->output.find("\"fragments_late\": 1"), std::string::npos);
}

// A library whose pod directory was handed over too late dropped chunks it
// held back; its last fragment's summary says how many, and that is loss.
TEST(GpuLossReport, ChunksALibraryCouldNotWriteInTimeAreLossInTheSummaryAndTheReport) {
  ScopedTempDir fragments, out_dir;
  model::SessionInfo session;
  session.tool_version = "0.test";
  session.start_ts = kBase;
  session.end_ts = kBase + 100 * kMs;
  Put(fragments.path(), 20, kBase + 90 * kMs, Fragment(kBase + 90 * kMs, 0, 0, 4));
  GpuRecordingOptions options;
  options.collect_dir = fragments.path();
  options.counters = false;
  auto gpu = GpuRecording::Create(options, "/nonexistent/gpunoise");
  ASSERT_TRUE(gpu.ok()) << gpu.error().message;
  std::string path = out_dir.path() + "/gpu.pftrace";
  auto out = perfetto::TraceFileWriter::Create(path, 0);
  ASSERT_TRUE(out.ok());
  ASSERT_TRUE(out->WritePacket(testing::SwitchBundle(0, {{kBase, 0, 100}, {kBase + 50 * kMs, 100, 0}})).ok());
  perfetto::TrackEventWriter writer(1, 42);
  ASSERT_TRUE(perfetto::WriteSessionSummary(writer, session, *out).ok());
  ASSERT_TRUE((*gpu)->Append(*out, session).ok());
  ASSERT_TRUE(out->Commit().ok());
  EXPECT_EQ((*gpu)->loss().chunks_not_written, 4u);
  EXPECT_NE((*gpu)->Summary().find("lost: 4 chunks not written"), std::string::npos) << (*gpu)->Summary();

  report::ReportOptions o;
  o.trace_path = path;
  auto text = report::RunReport(o);
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_NE(text->output.find("lost: 4 chunks of GPU data not written (the library's directory was not writable in "
                              "time)"),
            std::string::npos)
      << text->output;
  o.json = true;
  auto json = report::RunReport(o);
  ASSERT_TRUE(json.ok());
  EXPECT_NE(json->output.find("\"chunks_not_written\": 4"), std::string::npos) << json->output;
}

}  // namespace
}  // namespace gpunoise::record
