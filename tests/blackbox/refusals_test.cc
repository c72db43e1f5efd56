// What arm and collect refuse, on stand-in tracefs trees (a persistent
// buffer that survived a reboot cannot be made on this VM).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>

#include "blackbox/arm.h"
#include "blackbox/collect.h"

namespace gpunoise::blackbox {
namespace {

class FakeTracefs : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gn-bbfake-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    box_ = root_ + "/instances/gpunoise_blackbox";
  }
  void TearDown() override { std::system(("rm -rf " + root_).c_str()); }
  void Write(const std::string& rel, const std::string& text) {
    std::string path = root_ + "/" + rel;
    std::system(("mkdir -p $(dirname " + path + ")").c_str());
    std::ofstream(path) << text;
  }
  void Previous(uint64_t entries) {
    Write("instances/gpunoise_blackbox/last_boot_info", "trace_clock: boot\nffffffffa2e00000\t[kernel]\n");
    Write("instances/gpunoise_blackbox/tracing_on", "0\n");
    Write("instances/gpunoise_blackbox/buffer_size_kb", "16384\n");
    Write("instances/gpunoise_blackbox/per_cpu/cpu0/stats", "entries: " + std::to_string(entries) + "\noverrun: 0\n");
  }
  std::string root_, box_;
};

TEST_F(FakeTracefs, ArmRefusesToOverwriteUncollectedData) {
  Previous(812);
  ArmOptions o;
  o.tracefs = root_;
  o.state_dir = "";
  auto r = Arm(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("812 records of the previous boot that were not collected"), std::string::npos)
      << r.error().message;
  BlackBoxState s = ReadState(root_, "gpunoise_blackbox", "/dev/null");
  EXPECT_TRUE(s.persistent);
  EXPECT_TRUE(s.uncollected());
  EXPECT_NE(FormatState(s).find("holding uncollected data of the previous boot: 812 records"), std::string::npos)
      << FormatState(s);
}

TEST_F(FakeTracefs, ArmRefusesABootWithoutAPersistentInstance) {
  ArmOptions o;
  o.tracefs = root_;
  auto r = Arm(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("no black-box instance"), std::string::npos) << r.error().message;
  Write("instances/gpunoise_blackbox/tracing_on", "0\n");  // a plain instance of that name
  r = Arm(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not a persistent buffer"), std::string::npos) << r.error().message;
}

TEST_F(FakeTracefs, CollectRefusesWhatIsNotThePreviousBoot) {
  CollectOptions o;
  o.tracefs = root_;
  o.output = root_ + "/out.pftrace";
  auto r = Collect(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("this boot has no black box"), std::string::npos) << r.error().message;

  Write("instances/gpunoise_blackbox/tracing_on", "0\n");
  r = Collect(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("no last_boot_info"), std::string::npos) << r.error().message;

  // The kernel validated the buffer and found it not from the boot before.
  Write("instances/gpunoise_blackbox/last_boot_info", "# Current\n");
  r = Collect(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("holds this boot's data"), std::string::npos) << r.error().message;

  // A previous boot's buffer, but no format files to decode it with.
  Previous(10);
  r = Collect(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("header_page"), std::string::npos) << r.error().message;
  struct stat st {};
  EXPECT_NE(::stat(o.output.c_str(), &st), 0);  // nothing written
}

}  // namespace
}  // namespace gpunoise::blackbox
