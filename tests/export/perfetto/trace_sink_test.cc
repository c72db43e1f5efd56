#include "export/perfetto/trace_sink.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <vector>

#include "export/perfetto/event_at.h"
#include "export/perfetto/sequence_ids.h"
#include "export/perfetto/trace_view.h"
#include "import/test_trace.h"

namespace gpunoise::perfetto {
namespace {

model::Event At(uint64_t ts, model::Payload p) { return gpunoise::testing::EventAt(ts, std::move(p), 1, 0); }

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(TraceSink, SystemVectorsAreSlicesWithInternedNamesOnTheirCpusVectorTrack) {
  testing::ScopedTempDir dir;
  const std::string path = dir.path() + "/t.pftrace";
  auto sink = TraceSink::Create(path);
  ASSERT_TRUE(sink.ok()) << sink.error().message;
  using model::VectorKind;
  std::vector<model::Event> first = {
      At(100, model::VectorEntry{VectorKind::kCallFunctionSingle, 251}),
      At(110, model::VectorExit{VectorKind::kCallFunctionSingle, 251}),
      At(120, model::SoftirqEntry{3}),  // has an ftrace form: goes to the bundle
      At(130, model::SoftirqExit{3}),
      At(200, model::VectorEntry{VectorKind::kReschedule, 253}),
      At(205, model::VectorExit{VectorKind::kReschedule, 253}),
  };
  std::vector<model::Event> second = {
      At(300, model::VectorEntry{VectorKind::kCallFunctionSingle, 251}),
      At(320, model::VectorExit{VectorKind::kCallFunctionSingle, 251}),
  };
  ASSERT_TRUE((*sink)->WriteCpuBatch(1, first, false).ok());
  ASSERT_TRUE((*sink)->WriteCpuBatch(1, second, false).ok());
  ASSERT_TRUE((*sink)->Commit().ok());

  gpunoise::testing::TraceView view(ReadAll(path));
  ASSERT_TRUE(view.parsed());
  const auto* track = view.TrackNamed("Vectors Cpu 1");
  ASSERT_NE(track, nullptr);
  auto slices = view.SlicesOn(track->uuid());
  ASSERT_EQ(slices.size(), 3u);
  const struct {
    const char* name;
    uint64_t start, end;
    int64_t vector;
  } want[] = {{"call_function_single", 100, 110, 251}, {"reschedule", 200, 205, 253},
              {"call_function_single", 300, 320, 251}};
  for (size_t i = 0; i < slices.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(slices[i].name, want[i].name);
    EXPECT_EQ(slices[i].start, want[i].start);
    EXPECT_EQ(slices[i].end, want[i].end);
    EXPECT_EQ(slices[i].categories, std::vector<std::string>{"irq_vectors"});
    const auto* vector = slices[i].Arg("vector");
    ASSERT_NE(vector, nullptr);
    EXPECT_EQ(vector->int_value(), want[i].vector);
    // Spelled out nowhere in the event itself.
    EXPECT_FALSE(slices[i].begin->has_name());
    EXPECT_EQ(slices[i].begin->categories_size(), 0);
  }
  // Each string is defined once, in the packet of its first use.
  int definitions = 0;
  for (const auto& p : view.trace().packet())
    for (const auto& n : p.interned_data().event_names()) definitions += n.name() == "call_function_single";
  EXPECT_EQ(definitions, 1);
}

TEST(TraceSink, EachCpusVectorSlicesAreOnASequenceOfTheirOwnWhoseDefaultTrackIsTheCpus) {
  testing::ScopedTempDir dir;
  const std::string path = dir.path() + "/t.pftrace";
  auto sink = TraceSink::Create(path);
  ASSERT_TRUE(sink.ok()) << sink.error().message;
  using model::VectorKind;
  std::vector<model::Event> cpu0 = {At(100, model::VectorEntry{VectorKind::kCallFunctionSingle, 251}),
                                    At(110, model::VectorExit{VectorKind::kCallFunctionSingle, 251})};
  std::vector<model::Event> cpu3 = {At(105, model::VectorEntry{VectorKind::kCallFunctionSingle, 251}),
                                    At(130, model::VectorExit{VectorKind::kCallFunctionSingle, 251})};
  ASSERT_TRUE((*sink)->WriteCpuBatch(0, cpu0, false).ok());
  ASSERT_TRUE((*sink)->WriteCpuBatch(3, cpu3, false).ok());
  ASSERT_TRUE((*sink)->Commit().ok());

  gpunoise::testing::TraceView view(ReadAll(path));
  ASSERT_TRUE(view.parsed());
  std::map<uint32_t, int> events_by_sequence, names_by_sequence;
  for (const auto& p : view.trace().packet()) {
    if (!p.has_track_event()) continue;
    EXPECT_FALSE(p.track_event().has_track_uuid());
    ++events_by_sequence[p.trusted_packet_sequence_id()];
    names_by_sequence[p.trusted_packet_sequence_id()] += p.interned_data().event_names_size();
  }
  // Interning is per sequence: each CPU's defines its own names.
  const std::map<uint32_t, int> want = {{CpuVectorSequenceId(0), 2}, {CpuVectorSequenceId(3), 2}};
  EXPECT_EQ(events_by_sequence, want);
  EXPECT_EQ(names_by_sequence, (std::map<uint32_t, int>{{CpuVectorSequenceId(0), 1}, {CpuVectorSequenceId(3), 1}}));
  for (uint32_t cpu : {0u, 3u}) {
    SCOPED_TRACE(cpu);
    const auto* track = view.TrackNamed("Vectors Cpu " + std::to_string(cpu));
    ASSERT_NE(track, nullptr);
    auto slices = view.SlicesOn(track->uuid());
    ASSERT_EQ(slices.size(), 1u);
    EXPECT_EQ(slices[0].name, "call_function_single");
    EXPECT_EQ(slices[0].start, cpu == 0 ? 100u : 105u);
    EXPECT_EQ(slices[0].end, cpu == 0 ? 110u : 130u);
  }
}

TEST(TraceSink, ACpuNumberNoKernelHasIsRefusedBeforeAnyTableGrows) {
  testing::ScopedTempDir dir;
  auto sink = TraceSink::Create(dir.path() + "/t.pftrace");
  ASSERT_TRUE(sink.ok()) << sink.error().message;
  std::vector<model::Event> events = {At(100, model::SoftirqEntry{3})};
  Status far = (*sink)->WriteCpuBatch(4'000'000'000u, events, false);
  ASSERT_FALSE(far.ok());
  EXPECT_NE(far.error().message.find("CPU 4000000000 is past the 16384 CPUs"), std::string::npos);
  EXPECT_TRUE((*sink)->WriteCpuBatch(model::kMaxTraceCpus - 1, events, false).ok());
  EXPECT_TRUE((*sink)->Commit().ok());
}

}  // namespace
}  // namespace gpunoise::perfetto
