#include "collect/tracefs_format.h"

#include <gtest/gtest.h>

namespace gpunoise::collect {
namespace {

// net/net_dev_xmit_timeout as Linux 6.18 describes it.
constexpr const char* kXmitTimeout = R"(name: net_dev_xmit_timeout
ID: 2305
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:__data_loc char[] name;	offset:8;	size:4;	signed:0;
	field:__data_loc char[] driver;	offset:12;	size:4;	signed:0;
	field:int queue_index;	offset:16;	size:4;	signed:1;

print fmt: "dev=%s driver=%s queue=%d", __get_str(name), __get_str(driver), REC->queue_index
)";

// A driver event with an inline device-name array and an array field.
constexpr const char* kInlineName = R"(name: example_ring_event
ID: 9
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:char devname[16];	offset:8;	size:16;	signed:0;
	field:unsigned long hist[4];	offset:24;	size:32;	signed:0;
)";

TEST(TracefsFormat, ParsesFieldsWithOffsetsAndSizes) {
  auto f = ParseTraceFormat(kXmitTimeout);
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->name, "net_dev_xmit_timeout");
  EXPECT_EQ(f->id, 2305u);
  ASSERT_EQ(f->fields.size(), 7u);
  EXPECT_TRUE(f->fields[0].is_common);
  EXPECT_EQ(f->fields[4].name, "name");
  EXPECT_EQ(f->fields[4].type, "__data_loc char[]");
  EXPECT_EQ(f->fields[4].offset, 8u);
  EXPECT_EQ(f->fields[6].name, "queue_index");
  EXPECT_TRUE(f->fields[6].is_signed);
}

TEST(TracefsFormat, ArraySuffixMovesToTheType) {
  auto f = ParseTraceFormat(kInlineName);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->fields[1].name, "devname");
  EXPECT_EQ(f->fields[1].type, "char[16]");
  EXPECT_EQ(f->fields[2].name, "hist");
  EXPECT_EQ(f->fields[2].type, "unsigned long[4]");
}

TEST(TracefsFormat, FindsADataLocDeviceName) {
  auto f = ParseTraceFormat(kXmitTimeout);
  ASSERT_TRUE(f.ok());
  auto dev = FindDeviceNameField(*f);
  ASSERT_TRUE(dev);
  EXPECT_TRUE(dev->data_loc);
  EXPECT_EQ(dev->offset, 8u);
  EXPECT_EQ(dev->name, "name");
}

TEST(TracefsFormat, PrefersDevnameAndAcceptsInlineArrays) {
  auto f = ParseTraceFormat(kInlineName);
  ASSERT_TRUE(f.ok());
  auto dev = FindDeviceNameField(*f);
  ASSERT_TRUE(dev);
  EXPECT_FALSE(dev->data_loc);
  EXPECT_EQ(dev->offset, 8u);
  EXPECT_EQ(dev->size, 16u);
}

TEST(TracefsFormat, NoDeviceFieldIsNullopt) {
  auto f = ParseTraceFormat("name: x\nID: 1\nformat:\n\tfield:int budget;\toffset:8;\tsize:4;\tsigned:1;\n");
  ASSERT_TRUE(f.ok());
  EXPECT_FALSE(FindDeviceNameField(*f));
}

TEST(TracefsFormat, MalformedFieldLineIsAnError) {
  EXPECT_FALSE(ParseTraceFormat("name: x\nformat:\n\tfield:int budget;\toffset:oops;\tsize:4;\n").ok());
  EXPECT_FALSE(ParseTraceFormat("").ok());
}

}  // namespace
}  // namespace gpunoise::collect
