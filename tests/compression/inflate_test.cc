#include "compression/inflate.h"

#include <gtest/gtest.h>

#include <string>

#include "compression/zlib_deflater.h"

namespace gpunoise::compression {
namespace {

std::span<const uint8_t> Bytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::string Deflated(std::string_view in) {
  auto deflater = ZlibDeflater::Create(6);
  EXPECT_TRUE(deflater.ok());
  std::string out;
  EXPECT_TRUE(deflater->Compress(in, &out).ok());
  return out;
}

TEST(InflateZlib, GivesBackExactlyTheDeflatedBytes) {
  std::string in(500000, 'x');
  for (size_t i = 0; i < in.size(); i += 7) in[i] = static_cast<char>(i);
  std::vector<uint8_t> out = {1, 2, 3};
  ASSERT_TRUE(InflateZlib(Bytes(Deflated(in)), &out).ok());
  EXPECT_EQ(std::string(out.begin(), out.end()), in);
}

TEST(InflateZlib, AStreamCutShortIsAnError) {
  std::string d = Deflated(std::string(100000, 'a') + "tail");
  std::vector<uint8_t> out;
  Status st = InflateZlib(Bytes(std::string_view(d).substr(0, d.size() / 2)), &out);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("cut short"), std::string::npos) << st.error().message;
}

TEST(InflateZlib, CorruptBytesAreAnError) {
  std::string d = Deflated("some packets");
  d[0] = 0x12;  // not a zlib header
  std::vector<uint8_t> out;
  Status st = InflateZlib(Bytes(d), &out);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("corrupt"), std::string::npos) << st.error().message;
}

}  // namespace
}  // namespace gpunoise::compression
