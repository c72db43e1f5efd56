#include "collect/kernel_health.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "import/test_trace.h"

namespace gpunoise::collect {
namespace {

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// The reader keeps the counters it found open: a counter that moves is
// read anew, and one this kernel lacks is left out, not zero.
TEST(KernelHealthReader, RereadsTheCountersThisKernelHasAndLeavesOutTheRest) {
  gpunoise::testing::ScopedTempDir dir;
  std::filesystem::create_directories(dir.path() + "/kernel");
  Write(dir.path() + "/kernel/warn_count", "3\n");
  Write(dir.path() + "/kernel/oops_count", "0\n");
  KernelHealthReader reader(dir.path());
  model::KernelHealthCounters first = reader.Read();
  EXPECT_EQ(first.size(), 2u);
  EXPECT_EQ(first["warn_count"], 3u);
  EXPECT_EQ(first["oops_count"], 0u);
  EXPECT_FALSE(first.contains("softlockup_count"));
  Write(dir.path() + "/kernel/warn_count", "5\n");  // the same file, rewritten in place
  EXPECT_EQ(reader.Read()["warn_count"], 5u);
  EXPECT_EQ(ReadKernelHealth(dir.path()), reader.Read());
}

}  // namespace
}  // namespace gpunoise::collect
