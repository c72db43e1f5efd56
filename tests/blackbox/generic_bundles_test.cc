// One CPU's generic records as GenericFtraceBundle packets: what a live
// black-box collect and a text import both write at the end of a trace.
#include "blackbox/generic_bundles.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "export/perfetto/protos/perfetto_trace_subset.pb.h"

namespace gpunoise::blackbox {
namespace {

std::vector<GenericRecord> Records(size_t n) {
  std::vector<GenericRecord> out(n);
  for (size_t i = 0; i < n; ++i) {
    out[i].ts = 1000 + i;
    out[i].tid = 7;
    out[i].event = "workqueue_execute_start";
    out[i].fields = {GenericField{"work", false, static_cast<int64_t>(i), ""},
                     GenericField{"function_sym", true, 0, "vmstat_update"}};
  }
  return out;
}

std::vector<const GenericRecord*> Pointers(const std::vector<GenericRecord>& records) {
  std::vector<const GenericRecord*> out;
  for (const GenericRecord& g : records) out.push_back(&g);
  return out;
}

TEST(GenericBundles, SplitsRecordsIntoBundlesOfAtMost512InOrder) {
  auto records = Records(2 * kGenericRecordsPerBundle + 1);
  std::vector<std::string> packets;
  Status st = WriteGenericBundles(3, Pointers(records), [&](std::string_view p) {
    packets.emplace_back(p);
    return OkStatus();
  });
  ASSERT_TRUE(st.ok());
  ASSERT_EQ(packets.size(), 3u);
  uint64_t next_ts = 1000;
  for (size_t b = 0; b < packets.size(); ++b) {
    perfetto::TracePacket packet;
    ASSERT_TRUE(packet.ParseFromString(packets[b]));
    const auto& bundle = packet.ftrace_events();
    EXPECT_EQ(bundle.cpu(), 3u);
    ASSERT_EQ(static_cast<size_t>(bundle.event_size()), b < 2 ? kGenericRecordsPerBundle : 1u);
    for (const auto& e : bundle.event()) {
      EXPECT_EQ(e.timestamp(), next_ts++);
      EXPECT_EQ(e.pid(), 7u);
      ASSERT_EQ(e.generic().field_size(), 2);
      EXPECT_EQ(e.generic().event_name(), "workqueue_execute_start");
      EXPECT_EQ(e.generic().field(1).str_value(), "vmstat_update");
    }
  }
  EXPECT_EQ(next_ts, 1000 + records.size());
}

TEST(GenericBundles, StopsAtTheFirstWriteError) {
  auto records = Records(3 * kGenericRecordsPerBundle);
  int calls = 0;
  Status st = WriteGenericBundles(0, Pointers(records), [&](std::string_view) -> Status {
    ++calls;
    return MakeError("disk full");
  });
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(calls, 1);
}

TEST(GenericBundles, NoRecordsWriteNothing) {
  int calls = 0;
  EXPECT_TRUE(WriteGenericBundles(0, {}, [&](std::string_view) {
                ++calls;
                return OkStatus();
              }).ok());
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace gpunoise::blackbox
