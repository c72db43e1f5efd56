// Inputs the trace reader's fuzz target (tests/fuzz) found in the model's
// types, kept as regression tests (their undefined behaviour shows in the
// sanitizer build, tools/test.sh --sanitize).
#include <gtest/gtest.h>

#include <string_view>

#include "model/events.h"
#include "model/net_events.h"

namespace gpunoise::model {
namespace {

// An empty string_view may have a null data(): memcpy from it is undefined.
TEST(ModelFuzzRegression, NamesFromAnEmptyViewWithNoDataAreEmpty) {
  EXPECT_EQ(TaskComm(std::string_view()).view(), "");
  EXPECT_EQ(NetDevName(std::string_view()).view(), "");
}

}  // namespace
}  // namespace gpunoise::model
