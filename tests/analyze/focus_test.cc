#include "analyze/focus.h"

#include <gtest/gtest.h>

#include "analyze/synthetic.h"

namespace gpunoise::analyze {
namespace {

using namespace gpunoise::testing;

Timeline Busy() {
  Synth s;
  s.Process(10, "trainer").Thread(10, 10, "trainer").Thread(11, 10, "loader");
  s.Process(20, "sidecar").Thread(20, 20, "sidecar");
  s.Process(2, "kthreadd", true).Thread(30, 2, "kworker/0:1");
  s.Process(40, "gpunoise").Thread(40, 40, "gpunoise");
  // CPU 0: kworker 500 ms, trainer 400 ms, gpunoise 300, sidecar 50 ms.
  s.Switch(kBase, 0, 0, 30).Switch(kBase + 500 * kMs, 0, 30, 10, 1).Switch(kBase + 900 * kMs, 0, 10, 40, 1);
  s.Switch(kBase + 1200 * kMs, 0, 40, 20, 1).Switch(kBase + 1250 * kMs, 0, 20, 0, 1);
  // CPU 1: loader 200 ms.
  s.Switch(kBase, 1, 0, 11).Switch(kBase + 200 * kMs, 1, 11, 0, 1);
  return s.Build();
}

Result<FocusSelection> Select(const Timeline& t, std::vector<std::string> focus, CgroupResolver cg = nullptr) {
  Thresholds th;
  return SelectFocus(t, GpuModel{}, th, focus, cg, t.start_ts, t.end_ts + 1);
}

TEST(Focus, DefaultIsTheBusiestNonKernelThreadsButNeverTheRecorder) {
  Timeline t = Busy();
  auto f = Select(t, {});
  ASSERT_TRUE(f.ok());
  // trainer (400 ms) and loader (200 ms, >= 25% of 400); not the sidecar
  // (50 ms), the kworker or gpunoise.
  EXPECT_EQ(f->tids, (std::set<int32_t>{10, 11}));
  EXPECT_NE(f->how.find("busiest"), std::string::npos);
}

TEST(Focus, ByPidTakesAProcessesThreadsOrOneThread) {
  Timeline t = Busy();
  EXPECT_EQ(Select(t, {"10"})->tids, (std::set<int32_t>{10, 11}));
  EXPECT_EQ(Select(t, {"11"})->tids, (std::set<int32_t>{11}));
}

TEST(Focus, ByNameMatchesThreadOrProcessNames) {
  Timeline t = Busy();
  EXPECT_EQ(Select(t, {"trainer"})->tids, (std::set<int32_t>{10, 11}));
  EXPECT_EQ(Select(t, {"loader", "sidecar"})->tids, (std::set<int32_t>{11, 20}));
}

TEST(Focus, ByCgroupThroughTheResolver) {
  Timeline t = Busy();
  auto resolver = [](std::string_view path) -> Result<std::vector<int32_t>> {
    if (path == "system.slice/side.service") return std::vector<int32_t>{20};
    return MakeError("no cgroup {}", path);
  };
  EXPECT_EQ(Select(t, {"system.slice/side.service"}, resolver)->tids, (std::set<int32_t>{20}));
  auto bad = Select(t, {"no/such"}, resolver);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("no cgroup"), std::string::npos);
}

TEST(Focus, NamesThatMatchNothingAreErrors) {
  Timeline t = Busy();
  auto pid = Select(t, {"4242"});
  ASSERT_FALSE(pid.ok());
  EXPECT_NE(pid.error().message.find("no thread or process 4242"), std::string::npos);
  auto name = Select(t, {"python3"});
  ASSERT_FALSE(name.ok());
  EXPECT_NE(name.error().message.find("'python3'"), std::string::npos);
}

}  // namespace
}  // namespace gpunoise::analyze
