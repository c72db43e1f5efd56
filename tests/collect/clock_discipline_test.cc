#include "collect/clock_discipline.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace gpunoise::collect {
namespace {

class ClockDisciplineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpunoise-clock-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  void File(const std::string& rel, const std::string& text) {
    std::string path = dir_ + "/" + rel;
    for (size_t slash = path.find('/', dir_.size() + 1); slash != std::string::npos;
         slash = path.find('/', slash + 1))
      ::mkdir(path.substr(0, slash).c_str(), 0755);
    std::ofstream(path) << text;
  }

  std::string dir_;
};

TEST_F(ClockDisciplineTest, FindsTheClockDaemonsRunningAndThePtpClocksByName) {
  File("proc/1/comm", "systemd\n");
  File("proc/812/comm", "chronyd\n");
  File("proc/990/comm", "ptp4l\n");
  File("proc/991/comm", "phc2sys\n");
  File("proc/992/comm", "ptp4l\n");  // a second instance counts once
  File("proc/self/comm", "ntpd\n");  // not a pid
  File("ptp/ptp1/clock_name", "kvm-ptp\n");
  File("ptp/ptp0/clock_name", "mlx5_ptp\n");
  model::ClockDiscipline c = ReadClockDiscipline(dir_ + "/proc", dir_ + "/ptp");
  EXPECT_EQ(c.daemons, (std::vector<std::string>{"chronyd", "phc2sys", "ptp4l"}));
  EXPECT_EQ(c.ptp_clocks, (std::vector<std::string>{"ptp0 (mlx5_ptp)", "ptp1 (kvm-ptp)"}));
}

TEST_F(ClockDisciplineTest, NoDaemonsAndNoPtpDirectoryIsEmptyNotAnError) {
  File("proc/1/comm", "init\n");
  model::ClockDiscipline c = ReadClockDiscipline(dir_ + "/proc", dir_ + "/absent");
  EXPECT_TRUE(c.daemons.empty());
  EXPECT_TRUE(c.ptp_clocks.empty());
}

TEST_F(ClockDisciplineTest, ReadsTheKernelsSyncStateWithoutChangingIt) {
  // adjtimex with no modes only reads: any user may call it.
  model::ClockDiscipline c = ReadClockDiscipline(dir_, dir_);
  EXPECT_TRUE(c.read);
  EXPECT_GE(c.maxerror_us, 0);
  EXPECT_GE(c.esterror_us, 0);
}

}  // namespace
}  // namespace gpunoise::collect
