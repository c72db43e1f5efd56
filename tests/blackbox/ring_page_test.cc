#include "blackbox/ring_page.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "blackbox/page_builder.h"

namespace gpunoise::blackbox {
namespace {

using testing::PageBuilder;
using testing::Payload;

// events/header_page of Linux 6.18 on x86-64.
constexpr const char* kHeaderPage =
    "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
    "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
    "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
    "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

// One page of CPU 0 read from trace_pipe_raw of an instance on this VM
// (trace_clock boot; sched_switch id 372, softirq_entry id 223), the header
// and the 304 committed bytes. The instance's text output for it:
//   python3-31387 [000] d..2. 9172.221548: sched_switch: prev_comm=python3 prev_pid=31387 ... next_comm=cc1plus next_pid=31282
//   cc1plus-31282 [000] .Ns.. 9172.224047: softirq_entry: vec=1 [action=TIMER]
//   cc1plus-31282 [000] .Ns.. 9172.224048: softirq_entry: vec=9 [action=RCU]
//   cc1plus-31282 [000] d..2. 9172.224074: sched_switch: ... next_comm=rcu_preempt next_pid=15
//   rcu_preempt-15 [000] d..2. 9172.224078: sched_switch: ... next_comm=cc1plus next_pid=31235
//   cc1plus-31235 [000] d..2. 9172.224610: sched_switch: ... next_comm=python3 next_pid=31387
// per_cpu/cpu0/stats said "entries: 6".
constexpr const char* kCapturedPage =
    "96d4019357080000300100000000000010000000740101029b7a0000707974686f6e33000000000000000000"
    "9b7a0000780000000100000000000000636331706c7573000000000000000000327a000082000000834ac404"
    "df003400327a000001000000c3b00000df003400327a00000900000010ab0c0074010102327a000063633170"
    "6c7573000000000000000000327a00008200000000000000000000007263755f707265656d70740000000000"
    "0f00000078000000d0c20100740101020f0000007263755f707265656d707400000000000f00000078000000"
    "8000000000000000636331706c7573000000000000000000037a000082000000f0ff030174010102037a0000"
    "636331706c7573000000000000000000037a0000820000000000000000000000707974686f6e330000000000"
    "000000009b7a000078000000";

std::vector<uint8_t> FromHex(std::string_view hex, size_t page_size = 4096) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<uint8_t>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  out.resize(page_size, 0);
  return out;
}

struct Decoded {
  PageResult result;
  std::vector<uint64_t> ts;
  std::vector<uint16_t> types;
  std::vector<size_t> sizes;
};

Decoded Decode(const std::vector<uint8_t>& page, const PageLayout& layout = {}) {
  Decoded d;
  uint64_t clock = 0;
  d.result = DecodePage(layout, page, &clock, [&](const RawRecord& r) {
    d.ts.push_back(r.ts);
    uint16_t t = 0;
    std::memcpy(&t, r.payload.data(), 2);
    d.types.push_back(t);
    d.sizes.push_back(r.payload.size());
  });
  return d;
}

TEST(RingPage, ParsesTheHeaderPageLayout) {
  auto layout = ParsePageLayout(kHeaderPage);
  ASSERT_TRUE(layout.ok()) << layout.error().message;
  EXPECT_EQ(layout->commit_offset, 8u);
  EXPECT_EQ(layout->commit_size, 8u);
  EXPECT_EQ(layout->data_offset, 16u);
  EXPECT_EQ(layout->data_size, 4080u);
  EXPECT_EQ(layout->page_size(), 4096u);
  EXPECT_FALSE(ParsePageLayout("\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n").ok());
}

TEST(RingPage, DecodesAPageCapturedFromThisKernel) {
  Decoded d = Decode(FromHex(kCapturedPage));
  EXPECT_EQ(d.result.error, PageError::kNone);
  EXPECT_EQ(d.result.summary.commit_bytes, 304u);
  EXPECT_FALSE(d.result.summary.missed_events);
  ASSERT_EQ(d.ts.size(), 6u);  // the stats file's entries
  EXPECT_EQ(d.types, (std::vector<uint16_t>{372, 223, 223, 372, 372, 372}));
  EXPECT_EQ(d.ts[0], 9172221547670u);
  // The text output's microseconds (the kernel rounds: ns2usecs adds 500).
  EXPECT_EQ((d.ts[0] + 500) / 1000, 9172221548u);
  EXPECT_EQ((d.ts[1] + 500) / 1000, 9172224047u);
  EXPECT_EQ((d.ts[2] + 500) / 1000, 9172224048u);
  EXPECT_EQ((d.ts[5] + 500) / 1000, 9172224610u);
  for (size_t i = 1; i < d.ts.size(); ++i) EXPECT_GE(d.ts[i], d.ts[i - 1]);
}

TEST(RingPage, DeltasAndTimeExtendsAddUp) {
  PageBuilder b(1000);
  b.Data(5, Payload(7, 1, {}));
  b.TimeExtend((1ull << 27) * 3 + 11);  // beyond what a 27-bit delta holds
  b.Data(0, Payload(7, 1, {}));
  b.Data(2, Payload(7, 1, {}));
  Decoded d = Decode(b.Build());
  EXPECT_EQ(d.result.error, PageError::kNone);
  EXPECT_EQ(d.ts, (std::vector<uint64_t>{1005, 1005 + (1ull << 27) * 3 + 11, 1007 + (1ull << 27) * 3 + 11}));
  EXPECT_EQ(d.result.summary.time_extends, 1u);
}

TEST(RingPage, AbsoluteTimestampReplacesTheClockAndKeepsItsTopBits) {
  uint64_t base = (3ull << 59) + 500;  // top bits a 59-bit stamp cannot carry
  PageBuilder b(base);
  b.Data(1, Payload(7, 1, {}));
  b.TimeStamp(900);
  b.Data(4, Payload(7, 1, {}));
  Decoded d = Decode(b.Build());
  EXPECT_EQ(d.ts, (std::vector<uint64_t>{base + 1, (3ull << 59) + 904}));
  EXPECT_EQ(d.result.summary.time_stamps, 1u);
}

TEST(RingPage, DiscardedRecordsAreSkippedAndPaddingEndsThePage) {
  PageBuilder b(0);
  b.Data(1, Payload(7, 1, {}));
  b.Discarded(3, 24);
  b.Data(1, Payload(8, 1, {}));
  Decoded d = Decode(b.Build());
  EXPECT_EQ(d.types, (std::vector<uint16_t>{7, 8}));
  EXPECT_EQ(d.ts, (std::vector<uint64_t>{1, 5}));
  EXPECT_EQ(d.result.summary.discarded, 1u);
}

TEST(RingPage, LongRecordsCarryTheirLengthWord) {
  std::vector<uint8_t> fields(200, 0xab);
  PageBuilder b(0);
  b.Data(1, Payload(9, 1, fields));
  b.Data(1, Payload(9, 1, {1, 2, 3, 4}), /*force_long=*/true);
  Decoded d = Decode(b.Build());
  ASSERT_EQ(d.sizes.size(), 2u);
  EXPECT_EQ(d.sizes[0], 208u);
  EXPECT_EQ(d.sizes[1], 12u);
}

TEST(RingPage, MissedEventsAreCountedWhenTheKernelStoredTheCount) {
  PageBuilder stored(0);
  stored.Data(1, Payload(7, 1, {})).Missed(1234, true);
  Decoded d = Decode(stored.Build());
  EXPECT_TRUE(d.result.summary.missed_events);
  EXPECT_TRUE(d.result.summary.missed_stored);
  EXPECT_EQ(d.result.summary.missed_count, 1234u);
  EXPECT_EQ(d.ts.size(), 1u);  // the count is not a record

  PageBuilder flagged(0);
  flagged.Data(1, Payload(7, 1, {})).Missed(0, false);
  d = Decode(flagged.Build());
  EXPECT_TRUE(d.result.summary.missed_events);
  EXPECT_FALSE(d.result.summary.missed_stored);
}

TEST(RingPage, DamagedPagesStopAtTheFaultAndSayWhy) {
  std::vector<uint8_t> page = PageBuilder(0).Data(1, Payload(7, 1, {})).Build();
  uint64_t commit = 5000;  // past the data area
  std::memcpy(page.data() + 8, &commit, 8);
  EXPECT_EQ(Decode(page).result.error, PageError::kCommitTooLarge);

  // A long record whose length word runs past the commit: the record
  // before it is still delivered.
  PageBuilder b(0);
  b.Data(1, Payload(7, 1, {}));
  std::vector<uint8_t> cut = b.Data(1, Payload(9, 1, std::vector<uint8_t>(40, 1)), true).Build();
  uint64_t short_commit = 12 + 8;  // the first record and the long one's header and length
  std::memcpy(cut.data() + 8, &short_commit, 8);
  Decoded d = Decode(cut);
  EXPECT_EQ(d.result.error, PageError::kRecordOverflow);
  EXPECT_EQ(d.ts.size(), 1u);

  EXPECT_EQ(Decode(std::vector<uint8_t>(10, 0)).result.error, PageError::kShortPage);
}

TEST(RingPage, SmallerSubBuffersUseTheirOwnDataSize) {
  PageLayout layout;
  layout.data_size = 2048 - 16;
  std::vector<uint8_t> page = PageBuilder(0, 2048).Data(1, Payload(7, 1, {})).Build();
  Decoded d = Decode(page, layout);
  EXPECT_EQ(d.result.error, PageError::kNone);
  EXPECT_EQ(d.ts.size(), 1u);
}

}  // namespace
}  // namespace gpunoise::blackbox
