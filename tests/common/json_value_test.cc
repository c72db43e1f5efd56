#include "common/json_value.h"

#include <gtest/gtest.h>

namespace gpunoise {
namespace {

TEST(JsonValue, ParsesObjectsArraysAndScalars) {
  auto v = ParseJson(R"( {"a": [1, -2, 3.5, true, false, null, "x\"\u00e9\ud83d\ude00"], "b": {"c": {}}} )");
  ASSERT_TRUE(v.ok()) << v.error().message;
  const auto& a = (*v)["a"].items();
  ASSERT_EQ(a.size(), 7u);
  EXPECT_EQ(a[0].Int(), 1);
  EXPECT_EQ(a[1].Int(), -2);
  EXPECT_DOUBLE_EQ(a[2].Double(), 3.5);
  EXPECT_TRUE(a[3].Bool());
  EXPECT_FALSE(a[4].Bool(true));
  EXPECT_EQ(a[5].type(), JsonValue::Type::kNull);
  EXPECT_EQ(a[6].String(), "x\"\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_TRUE((*v)["b"]["c"].is_object());
  EXPECT_EQ((*v)["missing"]["deeper"].Int(7), 7) << "missing members give the fallback";
}

TEST(JsonValue, NanosecondIntegersKeepEveryDigit) {
  auto v = ParseJson(R"({"t": 1700000000123456789, "u": 18446744073709551615, "n": -9223372036854775807})");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ((*v)["t"].Uint(), 1700000000123456789ull);
  EXPECT_EQ((*v)["u"].Uint(), 18446744073709551615ull);
  EXPECT_EQ((*v)["n"].Int(), -9223372036854775807ll);
}

TEST(JsonValue, BadInputIsAnErrorNamingTheByte) {
  for (const char* bad : {"", "{", "[1,]", "{\"a\" 1}", "\"abc", "01x", "{} x", "[\"\\q\"]"}) {
    auto v = ParseJson(bad);
    EXPECT_FALSE(v.ok()) << bad;
    if (!v.ok()) {
      EXPECT_NE(v.error().message.find("at byte"), std::string::npos);
    }
  }
  std::string deep(100, '[');
  EXPECT_FALSE(ParseJson(deep).ok()) << "nesting is bounded";
}

}  // namespace
}  // namespace gpunoise
