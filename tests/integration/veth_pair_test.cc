// The network test harness itself: namespaces, veth, NAPI, loads, cleanup.
#include "integration/support/veth_pair.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "integration/support/net_load.h"
#include "integration/support/privileges.h"

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;

bool NamespaceExists(const std::string& name) {
  struct stat st {};
  return ::stat(("/run/netns/" + name).c_str(), &st) == 0;
}

#define GN_REQUIRE_ROOT()                                              \
  do {                                                                 \
    if (!IsRoot()) {                                                   \
      if (RootTestsRequired()) FAIL() << "needs root";                 \
      GTEST_SKIP() << "needs root to create network namespaces";       \
    }                                                                  \
  } while (0)

TEST(VethPair, UdpFloodArrivesAndDeviceStatisticsCountIt) {
  GN_REQUIRE_ROOT();
  std::string error;
  auto pair = VethPair::Create({}, &error);
  ASSERT_TRUE(pair) << error;
  auto rx0 = pair->LinkStatistics(VethPair::Side::kReceiver);
  UdpFloodOptions flood;
  flood.duration = 500ms;
  UdpFloodResult r = RunUdpFlood(*pair, flood);
  auto rx1 = pair->LinkStatistics(VethPair::Side::kReceiver);
  ASSERT_GT(r.sent, 1000u);
  // Nothing but the flood crosses the link (no ARP, no IPv6).
  EXPECT_EQ(rx1["rx_packets"] - rx0["rx_packets"], r.sent);
  // A reading receiver can still fall behind on 2 CPUs; what it did not
  // read it lost to its buffer, and the kernel counted that.
  auto udp = pair->SnmpCounters(VethPair::Side::kReceiver, "Udp");
  EXPECT_EQ(r.received + udp["RcvbufErrors"], r.sent);
}

TEST(VethPair, TcpStreamDeliversEveryByte) {
  GN_REQUIRE_ROOT();
  std::string error;
  auto pair = VethPair::Create({}, &error);
  ASSERT_TRUE(pair) << error;
  TcpStreamOptions tcp;
  tcp.duration = 500ms;
  TcpStreamResult r = RunTcpStream(*pair, tcp);
  ASSERT_TRUE(r.connected);
  EXPECT_GT(r.bytes_sent, 1u << 20);
  EXPECT_EQ(r.bytes_received, r.bytes_sent);
}

TEST(VethPair, ThreadedNapiRunsInAPinnedKernelThread) {
  GN_REQUIRE_ROOT();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  VethPairOptions options;
  options.napi_cpu = 1;
  std::string error;
  auto pair = VethPair::Create(options, &error);
  ASSERT_TRUE(pair) << error;
  ASSERT_GT(pair->napi_thread(), 0);
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(pair->napi_thread(), sizeof(set), &set), 0);
  EXPECT_EQ(CPU_COUNT(&set), 1);
  EXPECT_TRUE(CPU_ISSET(1, &set));
}

TEST(VethPair, DestructorRemovesBothNamespaces) {
  GN_REQUIRE_ROOT();
  std::string sender, receiver;
  {
    auto pair = VethPair::Create();
    ASSERT_TRUE(pair);
    sender = pair->netns(VethPair::Side::kSender);
    receiver = pair->netns(VethPair::Side::kReceiver);
    EXPECT_TRUE(NamespaceExists(sender));
    EXPECT_TRUE(NamespaceExists(receiver));
  }
  EXPECT_FALSE(NamespaceExists(sender));
  EXPECT_FALSE(NamespaceExists(receiver));
}

TEST(VethPair, StaleNamespacesOfDeadProcessesAreRemoved) {
  GN_REQUIRE_ROOT();
  // A PID that certainly ran and is gone: a child that already exited.
  pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_GT(child, 0);
  waitpid(child, nullptr, 0);
  std::string stale = "gnt-" + std::to_string(child) + "-0-s";
  ASSERT_EQ(RunCommand({"ip", "netns", "add", stale}), 0);
  ASSERT_TRUE(NamespaceExists(stale));
  EXPECT_GE(CleanupStaleNetworkNamespaces(), 1);
  EXPECT_FALSE(NamespaceExists(stale));
}

}  // namespace
}  // namespace gpunoise::testing
