// Inputs the trace reader's fuzz target (tests/fuzz) found, and the review's
// known-bad inputs it starts from, kept as regression tests.
#include <gtest/gtest.h>

#include "analyze/timeline_builder.h"
#include "import/test_trace.h"
#include "import/trace_reader.h"

namespace gpunoise::import {
namespace {

using testing::RecordingSink;
using testing::TestTrace;
using testing::Wire;

Result<ReadStats> Read(const std::string& bytes, model::TraceSink& sink, bool partial) {
  ReadOptions options;
  options.partial = partial;
  TraceReader reader(sink, options);
  return reader.ReadBuffer({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
}

// CPU 4294967295 made the per-CPU table's size wrap to 0 (cpu + 1) and the
// next access ran past it; a CPU of a few billion sized tables by it.
TEST(ReaderFuzzRegression, BundleOnACpuBeyondAnyMachineIsMalformed) {
  TestTrace trace;
  trace.Add(testing::SwitchBundle(0, {{100, 0, 5}}));
  trace.Add(testing::SwitchBundle(4294967295u, {{200, 0, 6}}));
  trace.Add(testing::SwitchBundle(model::kMaxTraceCpus, {{250, 0, 6}}));
  trace.Add(testing::SwitchBundle(1, {{300, 0, 7}}));

  RecordingSink strict_sink;
  auto strict = Read(trace.bytes(), strict_sink, false);
  ASSERT_FALSE(strict.ok());
  EXPECT_NE(strict.error().message.find("CPU 4294967295, beyond any machine"), std::string::npos)
      << strict.error().message;

  RecordingSink sink;
  auto partial = Read(trace.bytes(), sink, true);
  ASSERT_TRUE(partial.ok()) << partial.error().message;
  EXPECT_EQ(partial->malformed_packets, 2u);
  ASSERT_EQ(sink.events.size(), 2u);
  EXPECT_EQ(sink.events[0].cpu, 0u);
  EXPECT_EQ(sink.events[1].cpu, 1u);

  // The report's own sink sees only the two real CPUs.
  analyze::TimelineBuilder builder;
  ASSERT_TRUE(Read(trace.bytes(), builder, true).ok());
  EXPECT_LE(builder.Finish().cpus.size(), 2u);
}

// A process_tree entry with pid 2^31-1 sized the timeline's dense tid
// table by it (8 GiB): out of memory.
TEST(ReaderFuzzRegression, ThreadBeyondPidMaxIsKeptWithoutSizingTheTidTable) {
  analyze::TimelineBuilder builder;
  builder.OnProcess(2147483647, 1, "huge", false);
  builder.OnThread(4242, 4242, "normal");
  analyze::Timeline t = builder.Finish();
  EXPECT_LE(t.thread_slot.size(), analyze::Timeline::kDenseTidLimit + 1);
  ASSERT_NE(t.Thread(2147483647), nullptr);
  EXPECT_EQ(t.Thread(2147483647)->tid, 2147483647);
  ASSERT_NE(t.Thread(4242), nullptr);
  EXPECT_EQ(t.Thread(2147483646), nullptr);
}

// The review's doubled stats: each phase written twice, and a CPU listed
// twice in one packet. The latest END stands, and a CPU counts once.
TEST(ReaderFuzzRegression, DoubledFtraceStatsCountEachCpuOnce) {
  TestTrace trace;
  for (int twice = 0; twice < 2; ++twice) {
    for (auto phase : {perfetto::FtraceStats::START_OF_TRACE, perfetto::FtraceStats::END_OF_TRACE}) {
      perfetto::TracePacket p;
      auto* stats = p.mutable_ftrace_stats();
      stats->set_phase(phase);
      for (uint64_t overrun : {3u, 5u}) {  // CPU 0 twice in one packet
        auto* c = stats->add_cpu_stats();
        c->set_cpu(0);
        c->set_overrun(phase == perfetto::FtraceStats::END_OF_TRACE ? overrun : 0);
      }
      trace.Add(p);
    }
  }
  RecordingSink sink;
  ASSERT_TRUE(Read(trace.bytes(), sink, false).ok());
  ASSERT_EQ(sink.ftrace_stats.size(), 2u);  // one per END
  for (const auto& s : sink.ftrace_stats) {
    ASSERT_EQ(s.cpus.size(), 1u);
    EXPECT_EQ(s.cpus[0].cpu, 0u);
    EXPECT_EQ(s.cpus[0].overrun, 5u);
  }
}

TEST(ReaderFuzzRegression, TruncatedVarintIsAnErrorNamingItsOffset) {
  TestTrace framing;
  framing.AddRaw(std::string("\x0a\xff\xff\xff", 4));  // packet length cut short
  RecordingSink sink;
  auto r = Read(framing.bytes(), sink, false);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("truncated at byte 0"), std::string::npos) << r.error().message;

  Wire inner;
  inner.Raw(std::string("\x08\xff\xff", 3));  // TracePacket.timestamp cut short
  TestTrace content;
  content.AddSerialized(inner.str());
  RecordingSink partial_sink;
  auto p = Read(content.bytes(), partial_sink, true);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->malformed_packets, 1u);
}

}  // namespace
}  // namespace gpunoise::import
