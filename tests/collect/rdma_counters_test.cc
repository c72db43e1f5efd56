#include "collect/rdma_counters.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace gpunoise::collect {
namespace {

namespace fs = std::filesystem;

class RdmaCounters : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpunoise-rdma-test-XXXXXX";
    root_ = mkdtemp(tmpl);
  }
  void TearDown() override { fs::remove_all(root_); }
  void Counter(const std::string& dev, int port, const std::string& dir, const std::string& name, uint64_t v) {
    std::string d = root_ + "/class/infiniband/" + dev + "/ports/" + std::to_string(port) + "/" + dir;
    fs::create_directories(d);
    std::ofstream(d + "/" + name) << v << "\n";
  }
  std::string root_;
};

TEST_F(RdmaCounters, ReadsEveryPortsCountersAndHwCounters) {
  Counter("mlx5_0", 1, "counters", "port_rcv_errors", 3);
  Counter("mlx5_0", 1, "counters", "port_xmit_wait", 1000);
  Counter("mlx5_0", 1, "hw_counters", "out_of_sequence", 7);
  Counter("mlx5_1", 1, "counters", "symbol_error", 0);
  auto ports = ReadRdmaCounters(root_);
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[0].device, "mlx5_0");
  EXPECT_EQ(ports[0].port, 1u);
  EXPECT_EQ(ports[0].counters.at("port_rcv_errors"), 3u);
  EXPECT_EQ(ports[0].counters.at("hw.out_of_sequence"), 7u);
  EXPECT_EQ(ports[1].device, "mlx5_1");
}

TEST_F(RdmaCounters, AMachineWithoutRdmaHasNone) { EXPECT_TRUE(ReadRdmaCounters(root_).empty()); }

TEST_F(RdmaCounters, TheDeltaCountsWhatHappenedAndTreatsAResetAsZero) {
  Counter("mlx5_0", 1, "counters", "port_rcv_errors", 3);
  Counter("mlx5_0", 1, "counters", "link_downed", 5);
  auto before = ReadRdmaCounters(root_);
  Counter("mlx5_0", 1, "counters", "port_rcv_errors", 10);
  Counter("mlx5_0", 1, "counters", "link_downed", 1);  // reset by someone: counts from 0
  Counter("mlx5_0", 1, "hw_counters", "rnr_nak_retry_err", 2);
  auto delta = model::RdmaDelta(before, ReadRdmaCounters(root_));
  ASSERT_EQ(delta.size(), 1u);
  EXPECT_EQ(delta[0].counters.at("port_rcv_errors"), 7u);
  EXPECT_EQ(delta[0].counters.at("link_downed"), 1u);
  EXPECT_EQ(delta[0].counters.at("hw.rnr_nak_retry_err"), 2u);
  EXPECT_TRUE(model::IsRdmaErrorCounter("hw.rnr_nak_retry_err"));
  EXPECT_TRUE(model::IsRdmaErrorCounter("port_rcv_errors"));
  EXPECT_FALSE(model::IsRdmaErrorCounter("port_xmit_data"));
  EXPECT_FALSE(model::IsRdmaErrorCounter("port_xmit_wait")) << "congestion, not an error";
}

}  // namespace
}  // namespace gpunoise::collect
