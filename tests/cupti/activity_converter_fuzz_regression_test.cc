// Inputs the activity converter's fuzz target (tests/fuzz) found, kept as
// regression tests: record fields of enum type holding values outside the
// enum (a newer CUPTI, combined flags) are read as bits, not loaded as the
// enum (undefined behaviour UBSan reported at activity_converter.cc:472).
#include <gtest/gtest.h>

#include <cstring>

#include "cupti/activity_converter.h"
#include "export/perfetto/trace_view.h"

namespace gpunoise::cupti {
namespace {

using testing::TraceView;

constexpr uint32_t kTid = 77;

ConverterOptions Options() {
  ConverterOptions o;
  o.pid = 4242;
  o.process_name = "train.py";
  o.node_id = "fuzz";
  o.start_ts = 1000;
  o.api_name = [](bool, uint32_t) { return std::string(); };
  return o;
}

template <typename Field>
void SetBits(Field* field, uint32_t bits) {
  static_assert(sizeof(Field) == sizeof(bits));
  std::memcpy(field, &bits, sizeof(bits));
}

CUpti_ActivityMarker2 Marker(uint32_t flag_bits, uint64_t ts, const char* name) {
  CUpti_ActivityMarker2 m;
  std::memset(&m, 0, sizeof(m));
  m.kind = CUPTI_ACTIVITY_KIND_MARKER;
  SetBits(&m.flags, flag_bits);
  m.id = 1;
  m.timestamp = ts;
  m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  m.objectId.pt.threadId = kTid;
  m.name = name;
  return m;
}

TEST(ActivityConverterFuzzRegression, MarkerFlagsBeyondTheEnumAreReadAsBits) {
  ActivityConverter c(Options());
  // Bit 31 is in no CUpti_ActivityFlag; the START and END bits still count.
  auto start = Marker(0x80000000u | CUPTI_ACTIVITY_FLAG_MARKER_START, 100, "step");
  auto end = Marker(0x80000000u | CUPTI_ACTIVITY_FLAG_MARKER_END, 400, nullptr);
  c.Convert(reinterpret_cast<const CUpti_Activity*>(&start));
  c.Convert(reinterpret_cast<const CUpti_Activity*>(&end));
  TraceView v(c.TakeChunk({1000, 993, 1099}, false));
  auto slices = v.SlicesOn(c.ThreadTrackUuid(kTid));
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0].name, "step");
  EXPECT_EQ(slices[0].end, 400u);
}

TEST(ActivityConverterFuzzRegression, UnknownKindAndOverheadKindBeyondTheirEnumsAreCountedNotLoaded) {
  ActivityConverter c(Options());
  CUpti_ActivityOverhead3 o;
  std::memset(&o, 0, sizeof(o));
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  SetBits(&o.overheadKind, 0xfffffff0u);
  SetBits(&o.objectKind, 0x80000003u);
  o.start = 100;
  o.end = 200;
  c.Convert(reinterpret_cast<const CUpti_Activity*>(&o));
  CUpti_Activity unknown;
  std::memset(&unknown, 0, sizeof(unknown));
  SetBits(&unknown.kind, 0x80000001u);
  c.Convert(&unknown);
  EXPECT_EQ(c.stats().overheads, 1u);
  EXPECT_EQ(c.stats().skipped_records, 1u);
  EXPECT_TRUE(TraceView(c.TakeChunk({1000, 993, 1099}, true)).parsed());
}

}  // namespace
}  // namespace gpunoise::cupti
