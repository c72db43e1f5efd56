#include "common/proto_wire.h"

#include <gtest/gtest.h>

#include <string>

namespace gpunoise {
namespace {

// Reads one varint at `at`, advancing it.
uint64_t ReadVarint(const std::string& s, size_t& at) {
  uint64_t v = 0;
  for (int shift = 0; at < s.size(); shift += 7) {
    uint8_t b = static_cast<uint8_t>(s[at++]);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) break;
  }
  return v;
}

TEST(ProtoWriter, ExactMessagesOfAnyLengthAreFramedWithTheirShortestLength) {
  for (size_t payload : {0u, 1u, 124u, 125u, 126u, 300u, 16380u, 20000u}) {
    std::string out = "x";
    ProtoWriter w(&out);
    size_t token = w.BeginMessage(7);
    w.Bytes(1, std::string(payload, 'a'));
    w.EndMessage(token);
    size_t at = 1;
    ASSERT_EQ(ReadVarint(out, at), (7u << 3) | 2u) << payload;
    size_t length_at = at;
    uint64_t len = ReadVarint(out, at);
    EXPECT_EQ(len, out.size() - at) << payload;
    EXPECT_EQ(at - length_at, len < 128 ? 1u : len < 16384 ? 2u : 3u) << "shortest varint for " << len;
    EXPECT_EQ(ReadVarint(out, at), (1u << 3) | 2u);
    EXPECT_EQ(ReadVarint(out, at), payload);
    EXPECT_EQ(out.substr(at), std::string(payload, 'a'));
  }
}

TEST(FixedProtoWriter, WritesTheBytesProtoWriterWritesForTheSameFields) {
  for (uint64_t ts : {0ull, 127ull, 128ull, 1'000'000'000'000ull, ~0ull}) {
    std::string expected;
    ProtoWriter w(&expected);
    size_t event = w.BeginMessage(2);
    w.Varint(1, ts);
    w.Int(2, -1);  // negative: ten bytes
    size_t body = w.BeginMessage(341);  // a two-byte tag
    w.Varint(1, 3);
    w.EndMessage(body);
    w.EndMessage(event);

    char buffer[64];
    FixedProtoWriter f(buffer);
    char* fixed_event = f.BeginMessage(2);
    f.Varint(1, ts);
    f.Int(2, -1);
    char* fixed_body = f.BeginMessage(341);
    f.Varint(1, 3);
    f.EndMessage(fixed_body);
    f.EndMessage(fixed_event);
    EXPECT_EQ(f.view(), expected) << ts;
  }
}

TEST(ProtoWriter, NestedExactMessagesKeepTheirContentWhenAnOuterOneGrows) {
  std::string out;
  ProtoWriter w(&out);
  size_t outer = w.BeginMessage(1);
  for (int i = 0; i < 50; ++i) {
    size_t inner = w.BeginMessage(2);
    w.Varint(1, static_cast<uint64_t>(i));
    w.EndMessage(inner);
  }
  w.EndMessage(outer);  // 200 bytes: the outer length needs two bytes
  size_t at = 0;
  ASSERT_EQ(ReadVarint(out, at), (1u << 3) | 2u);
  uint64_t len = ReadVarint(out, at);
  ASSERT_EQ(len, out.size() - at);
  for (uint64_t i = 0; i < 50; ++i) {
    ASSERT_EQ(ReadVarint(out, at), (2u << 3) | 2u);
    ASSERT_EQ(ReadVarint(out, at), 2u);
    ASSERT_EQ(ReadVarint(out, at), 1u << 3);
    ASSERT_EQ(ReadVarint(out, at), i);
  }
  EXPECT_EQ(at, out.size());
}

}  // namespace
}  // namespace gpunoise
