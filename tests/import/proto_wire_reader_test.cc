#include "common/proto_wire_reader.h"

#include <gtest/gtest.h>

#include <string>

#include "import/test_trace.h"

namespace gpunoise {
namespace {

using testing::Wire;

const uint8_t* U(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

TEST(ProtoWire, DecodesVarintsOfEveryLength) {
  for (uint64_t v : {0ull, 1ull, 127ull, 128ull, 300ull, 1ull << 35, ~0ull}) {
    std::string enc = Wire::EncodeVarint(v);
    uint64_t out = 0;
    const uint8_t* end = ReadVarint(U(enc), U(enc) + enc.size(), &out);
    ASSERT_EQ(end, U(enc) + enc.size()) << v;
    EXPECT_EQ(out, v);
  }
}

TEST(ProtoWire, RejectsVarintsThatRunPastTheEndOrAreTooLong) {
  std::string cut = Wire::EncodeVarint(1ull << 40);
  cut.pop_back();
  uint64_t out;
  EXPECT_EQ(ReadVarint(U(cut), U(cut) + cut.size(), &out), nullptr);
  std::string eleven(11, '\x80');
  EXPECT_EQ(ReadVarint(U(eleven), U(eleven) + eleven.size(), &out), nullptr);
}

TEST(ProtoWire, WalksFieldsOfEachWireType) {
  std::string msg = Wire().Varint(1, 150).Bytes(2, "hi").Fixed64(3, 7).str();
  msg += Wire::EncodeVarint(4 << 3 | 5) + std::string("\x01\x00\x00\x00", 4);
  ProtoReader r(U(msg), msg.size());
  ProtoField f;
  ASSERT_TRUE(r.Next(&f));
  EXPECT_EQ(f.id, 1u);
  EXPECT_EQ(f.int_value, 150u);
  ASSERT_TRUE(r.Next(&f));
  EXPECT_EQ(f.as_string(), "hi");
  ASSERT_TRUE(r.Next(&f));
  EXPECT_EQ(f.type, WireType::kFixed64);
  EXPECT_EQ(f.int_value, 7u);
  ASSERT_TRUE(r.Next(&f));
  EXPECT_EQ(f.type, WireType::kFixed32);
  EXPECT_EQ(f.int_value, 1u);
  EXPECT_FALSE(r.Next(&f));
  EXPECT_FALSE(r.error());
}

TEST(ProtoWire, ReportsWhereAMessageBreaks) {
  std::string msg = Wire().Varint(1, 5).str() + Wire::EncodeVarint(2 << 3 | 2) + Wire::EncodeVarint(50) + "short";
  ProtoReader r(U(msg), msg.size());
  ProtoField f;
  ASSERT_TRUE(r.Next(&f));
  EXPECT_FALSE(r.Next(&f));
  EXPECT_TRUE(r.error());
  EXPECT_EQ(r.error_offset(), 2u);
  std::string group = Wire::EncodeVarint(1 << 3 | 3);
  ProtoReader g(U(group), group.size());
  EXPECT_FALSE(g.Next(&f));
  EXPECT_TRUE(g.error());
}

TEST(ProtoWire, IteratesPackedColumns) {
  std::string packed = Wire::EncodeVarint(3) + Wire::EncodeVarint(270) + Wire::EncodeVarint(86942);
  ProtoField f;
  f.data = U(packed);
  f.size = packed.size();
  EXPECT_EQ(CountPackedVarints(f), 3u);
  PackedVarints it(f);
  uint64_t v;
  std::vector<uint64_t> got;
  while (it.Next(&v)) got.push_back(v);
  EXPECT_EQ(got, (std::vector<uint64_t>{3, 270, 86942}));
  EXPECT_FALSE(it.error());
}

}  // namespace
}  // namespace gpunoise
