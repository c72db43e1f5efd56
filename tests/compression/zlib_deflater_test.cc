#include "compression/zlib_deflater.h"

#include <gtest/gtest.h>

#include <random>
#include <span>
#include <string>
#include <vector>

#include "compression/inflate.h"

namespace gpunoise::compression {
namespace {

std::string Inflated(std::string_view deflated) {
  std::vector<uint8_t> out;
  Status st = InflateZlib(std::span(reinterpret_cast<const uint8_t*>(deflated.data()), deflated.size()), &out);
  EXPECT_TRUE(st.ok()) << st.error().message;
  return std::string(out.begin(), out.end());
}

// Trace-like bytes: repetitive structure with varying small numbers.
std::string TraceLikeBytes(size_t n) {
  std::mt19937 rng(7);
  std::string s;
  while (s.size() < n) {
    s += "\x0a\x10\x08";
    s.push_back(static_cast<char>(rng() % 4));
    s += "comm-";
    s.push_back(static_cast<char>('a' + rng() % 8));
  }
  s.resize(n);
  return s;
}

TEST(ZlibDeflater, ABlockInflatesToTheSameBytes) {
  auto deflater = ZlibDeflater::Create(1);
  ASSERT_TRUE(deflater.ok()) << deflater.error().message;
  std::string in = TraceLikeBytes(300000);
  std::string out = "prefix";
  ASSERT_TRUE(deflater->Compress(in, &out).ok());
  ASSERT_EQ(out.substr(0, 6), "prefix") << "appends, keeps what was there";
  EXPECT_LT(out.size(), in.size() / 3);
  EXPECT_EQ(Inflated(std::string_view(out).substr(6)), in);
}

TEST(ZlibDeflater, EachBlockIsAStreamOfItsOwn) {
  auto deflater = ZlibDeflater::Create(6);
  ASSERT_TRUE(deflater.ok());
  std::string a = TraceLikeBytes(1000), b = "second block, different bytes";
  std::string da, db;
  ASSERT_TRUE(deflater->Compress(a, &da).ok());
  ASSERT_TRUE(deflater->Compress(b, &db).ok());
  // The second inflates alone: no state of the first leaks into it.
  EXPECT_EQ(Inflated(db), b);
  EXPECT_EQ(Inflated(da), a);
}

TEST(ZlibDeflater, IncompressibleAndEmptyBlocksStillRoundTrip) {
  auto deflater = ZlibDeflater::Create(1);
  ASSERT_TRUE(deflater.ok());
  std::mt19937 rng(1);
  std::string noise(200000, '\0');
  for (char& c : noise) c = static_cast<char>(rng());
  std::string out;
  ASSERT_TRUE(deflater->Compress(noise, &out).ok());
  EXPECT_LT(out.size(), noise.size() + noise.size() / 100 + 64) << "deflate's stored blocks bound the growth";
  EXPECT_EQ(Inflated(out), noise);
  std::string empty;
  ASSERT_TRUE(deflater->Compress("", &empty).ok());
  EXPECT_EQ(Inflated(empty), "");
}

TEST(ZlibDeflater, LevelsOutsideOneToNineAreRejected) {
  EXPECT_FALSE(ZlibDeflater::Create(0).ok());
  EXPECT_FALSE(ZlibDeflater::Create(10).ok());
  auto nine = ZlibDeflater::Create(9);
  ASSERT_TRUE(nine.ok());
  EXPECT_EQ(nine->level(), 9);
}

TEST(ZlibDeflater, AMovedDeflaterKeepsWorking) {
  auto created = ZlibDeflater::Create(1);
  ASSERT_TRUE(created.ok());
  ZlibDeflater moved = std::move(*created);
  std::string out;
  ASSERT_TRUE(moved.Compress("abc", &out).ok());
  EXPECT_EQ(Inflated(out), "abc");
}

}  // namespace
}  // namespace gpunoise::compression
