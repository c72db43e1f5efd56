// Inputs the trace reader's fuzz target (tests/fuzz) found in the model's
// types, kept as regression tests (their undefined behaviour shows in the
// sanitizer build, tools/test.sh --sanitize).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string_view>

#include "model/events.h"
#include "model/net_events.h"
#include "model/track_events.h"

namespace gpunoise::model {
namespace {

// An empty string_view may have a null data(): memcpy from it is undefined.
TEST(ModelFuzzRegression, NamesFromAnEmptyViewWithNoDataAreEmpty) {
  EXPECT_EQ(TaskComm(std::string_view()).view(), "");
  EXPECT_EQ(NetDevName(std::string_view()).view(), "");
}

// A debug annotation's double that has no int64 (found as a NaN).
TEST(ModelFuzzRegression, ADoubleArgWithoutAnIntegerValueIsNotAnInteger) {
  TrackArg arg;
  arg.type = TrackArg::Type::kDouble;
  int64_t out = 7;
  for (double v : {std::nan(""), std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                   0x1p63, -0x1p64}) {
    arg.double_value = v;
    EXPECT_FALSE(arg.AsInt64(&out)) << v;
  }
  arg.double_value = -0x1p63;
  EXPECT_TRUE(arg.AsInt64(&out));
  EXPECT_EQ(out, std::numeric_limits<int64_t>::min());
  arg.double_value = 42.9;
  EXPECT_TRUE(arg.AsInt64(&out));
  EXPECT_EQ(out, 42);
}

}  // namespace
}  // namespace gpunoise::model
