#include "blackbox/event_formats.h"

#include <gtest/gtest.h>

#include "blackbox/page_builder.h"
#include "blackbox/record_convert.h"

namespace gpunoise::blackbox {
namespace {

using testing::Payload;
using testing::Put;

// net/net_dev_xmit of Linux 6.18.
constexpr const char* kNetDevXmit = R"(name: net_dev_xmit
ID: 1990
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:void * skbaddr;	offset:8;	size:8;	signed:0;
	field:unsigned int len;	offset:16;	size:4;	signed:0;
	field:int rc;	offset:20;	size:4;	signed:1;
	field:__data_loc char[] name;	offset:24;	size:4;	signed:0;
)";

// A made-up event with a __rel_loc string and an inline char array.
constexpr const char* kRelLoc = R"(name: example
ID: 77
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;
	field:__rel_loc char[] msg;	offset:8;	size:4;	signed:0;
	field:char tag[8];	offset:12;	size:8;	signed:0;
	field:short delta;	offset:20;	size:2;	signed:1;
)";

EventFormat Format(const char* text, std::string group) {
  auto f = collect::ParseTraceFormat(text);
  EXPECT_TRUE(f.ok());
  return EventFormat{std::move(group), f->name, *f};
}

std::vector<uint8_t> XmitRecord(int32_t rc, std::string_view dev) {
  std::vector<uint8_t> fields;
  Put<uint64_t>(fields, 0xffff888012345678ull);
  Put<uint32_t>(fields, 1514);
  Put<int32_t>(fields, rc);
  // __data_loc: offset 28 from the record start, length with the NUL.
  Put<uint32_t>(fields, 28u | (static_cast<uint32_t>(dev.size() + 1) << 16));
  for (char c : dev) fields.push_back(static_cast<uint8_t>(c));
  fields.push_back(0);
  return Payload(1990, 4242, fields, 0x10);
}

TEST(EventFormats, RecordViewReadsNumbersAndDataLocStrings) {
  EventFormat f = Format(kNetDevXmit, "net");
  std::vector<uint8_t> rec = XmitRecord(-16, "veth-tx0");
  RecordView v(f.format, rec);
  EXPECT_EQ(v.type(), 1990);
  EXPECT_EQ(v.pid(), 4242);
  EXPECT_EQ(v.flags(), 0x10);
  EXPECT_EQ(v.Uint("len"), 1514u);
  EXPECT_EQ(v.Int("rc"), -16);  // sign-extended from 4 bytes
  EXPECT_EQ(v.Uint("skbaddr"), 0xffff888012345678ull);
  EXPECT_EQ(v.String("name"), "veth-tx0");
  EXPECT_FALSE(v.Int("nope").has_value());
}

TEST(EventFormats, RecordViewReadsRelLocAndInlineStringsWithinTheRecord) {
  EventFormat f = Format(kRelLoc, "example");
  std::vector<uint8_t> fields;
  Put<uint32_t>(fields, 12u | (6u << 16));  // relative to the field's end (offset 12)
  for (char c : std::string_view("abcdefgh")) fields.push_back(static_cast<uint8_t>(c));
  Put<int16_t>(fields, -2);
  Put<uint16_t>(fields, 0);  // the string starts at 24
  fields.insert(fields.end(), {'h', 'e', 'l', 'l', 'o', 0});
  std::vector<uint8_t> rec = Payload(77, 1, fields);
  RecordView v(f.format, rec);
  EXPECT_EQ(v.String("msg"), "hello");
  EXPECT_EQ(v.String("tag"), "abcdefgh");  // full array, no NUL
  EXPECT_EQ(v.Int("delta"), -2);
  // A length that runs past the record is cut at the record's end.
  std::vector<uint8_t> cut(rec.begin(), rec.end() - 3);
  EXPECT_EQ(RecordView(f.format, cut).String("msg"), "hel");
}

TEST(EventFormats, FingerprintChangesWithTheLayout) {
  EventFormat a = Format(kNetDevXmit, "net");
  EventFormat b = a;
  EXPECT_EQ(LayoutFingerprint(a.format), LayoutFingerprint(b.format));
  b.format.fields.back().offset = 28;
  EXPECT_NE(LayoutFingerprint(a.format), LayoutFingerprint(b.format));
  EXPECT_EQ(LayoutFingerprint(a.format).size(), 16u);
}

TEST(RecordConvert, NetDevXmitBecomesTheModelsTransmit) {
  EventFormat f = Format(kNetDevXmit, "net");
  std::vector<uint8_t> rec = XmitRecord(0, "eth0");
  Converted c = ConvertRecord(f, 123, 1, rec);
  auto* e = std::get_if<model::Event>(&c);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->ts, 123u);
  EXPECT_EQ(e->cpu, 1u);
  EXPECT_EQ(e->tid, 4242);
  EXPECT_EQ(e->common_flags, 0x10);
  auto* t = std::get_if<model::NetTransmit>(&e->payload);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->dev.name.view(), "eth0");
  EXPECT_EQ(t->len, 1514u);
}

TEST(RecordConvert, UnknownTracepointsBecomeGenericRecordsByFieldName) {
  EventFormat f = Format(kRelLoc, "example");
  std::vector<uint8_t> fields;
  Put<uint32_t>(fields, 12u | (4u << 16));
  for (char c : std::string_view("tag\0\0\0\0\0", 8)) fields.push_back(static_cast<uint8_t>(c));
  Put<int16_t>(fields, 9);
  Put<uint16_t>(fields, 0);
  fields.insert(fields.end(), {'h', 'i', '\n', 0});
  std::vector<uint8_t> rec = Payload(77, 5, fields);
  Converted c = ConvertRecord(f, 9, 0, rec);
  auto* g = std::get_if<GenericRecord>(&c);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->event, "example");
  ASSERT_EQ(g->fields.size(), 3u);
  EXPECT_EQ(g->fields[0].name, "msg");
  EXPECT_EQ(g->fields[0].text, "hi");  // the newline is not part of the text
  EXPECT_EQ(g->fields[1].text, "tag");
  EXPECT_EQ(g->fields[2].value, 9);
}

}  // namespace
}  // namespace gpunoise::blackbox
