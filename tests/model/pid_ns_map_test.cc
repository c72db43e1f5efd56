#include "model/pid_ns_map.h"

#include <gtest/gtest.h>

#include "model/process_snapshot.h"

namespace gpunoise::model {
namespace {

constexpr uint64_t kNs = 4026532500, kInner = 4026532600;

PidNsChain Chain(uint32_t level, std::initializer_list<PidNsIds> ids) {
  PidNsChain c;
  c.level = level;
  for (const PidNsIds& i : ids) c.at[c.count++] = i;
  return c;
}

TEST(PidNsMap, MapsNamespaceIdsToTheHostTaskAliveThen) {
  PidNsMap map;
  // Process 1 in the namespace is host 5000; its thread 7 is host 5010.
  map.AddTask(5000, 5000, Chain(1, {{kNs, 1, 1, 1}}), 100);
  map.AddTask(5010, 5000, Chain(1, {{kNs, 1, 7, 1}}), 200);
  int32_t host = 0;
  EXPECT_EQ(map.HostPid(kNs, 1, 150, 150, &host), PidNsMap::Match::kFound);
  EXPECT_EQ(host, 5000);
  EXPECT_EQ(map.HostTid(kNs, 7, 5000, 300, 400, &host), PidNsMap::Match::kFound);
  EXPECT_EQ(host, 5010);
  // Before the thread was born, and in another process: nothing.
  EXPECT_EQ(map.HostTid(kNs, 7, 5000, 0, 150, &host), PidNsMap::Match::kUnknown);
  EXPECT_EQ(map.HostTid(kNs, 7, 6000, 300, 400, &host), PidNsMap::Match::kUnknown);
  // Another namespace with the same ids is another task.
  EXPECT_EQ(map.HostPid(kNs + 1, 1, 150, 150, &host), PidNsMap::Match::kUnknown);
  EXPECT_TRUE(map.KnowsNamespace(kNs));
  EXPECT_FALSE(map.KnowsNamespace(kNs + 1));
}

TEST(PidNsMap, ReusedNamespaceTidMapsByLifetimeAndOverlapIsAmbiguous) {
  PidNsMap map;
  map.AddTask(5000, 5000, Chain(1, {{kNs, 1, 1, 1}}), 0);
  map.AddTask(5010, 5000, Chain(1, {{kNs, 1, 7, 1}}), 100);
  map.EndTask(5010, 200);
  map.AddTask(5020, 5000, Chain(1, {{kNs, 1, 7, 1}}), 300);  // tid 7 again
  int32_t host = 0;
  EXPECT_EQ(map.HostTid(kNs, 7, 5000, 110, 190, &host), PidNsMap::Match::kFound);
  EXPECT_EQ(host, 5010);
  EXPECT_EQ(map.HostTid(kNs, 7, 5000, 310, 400, &host), PidNsMap::Match::kFound);
  EXPECT_EQ(host, 5020);
  // A window that saw both lives cannot say which one: never a guess.
  EXPECT_EQ(map.HostTid(kNs, 7, 5000, 150, 350, &host), PidNsMap::Match::kAmbiguous);
  // Between the two lives no task had it.
  EXPECT_EQ(map.HostTid(kNs, 7, 5000, 210, 290, &host), PidNsMap::Match::kUnknown);
}

TEST(PidNsMap, NestedNamespacesMapFromEveryLevel) {
  PidNsMap map;
  // Host 7000 is pid 1 in the inner namespace and pid 3 in the outer one.
  map.AddTask(7000, 7000, Chain(2, {{kInner, 2, 1, 1}, {kNs, 1, 3, 3}}), 10);
  int32_t host = 0;
  EXPECT_EQ(map.HostPid(kInner, 1, 20, 20, &host), PidNsMap::Match::kFound);
  EXPECT_EQ(host, 7000);
  EXPECT_EQ(map.HostPid(kNs, 3, 20, 20, &host), PidNsMap::Match::kFound);
  EXPECT_EQ(host, 7000);
}

TEST(PidNsMap, SnapshotAddsTasksOfOtherNamespacesOnly) {
  ProcessSnapshot snap;
  ProcessInfo in_ns;
  in_ns.pid = 8000;
  in_ns.identity.pid_ns = kNs;
  in_ns.identity.nspid = {8000, 1};
  ProcessInfo host_only;
  host_only.pid = 9000;
  host_only.identity.pid_ns = kInitPidNsInode;
  host_only.identity.nspid = {9000};
  snap.processes = {in_ns, host_only};
  snap.threads = {{8000, 8000, "main", {8000, 1}}, {8001, 8000, "worker", {8001, 2}},
                  {9000, 9000, "host", {}}};
  PidNsMap map;
  map.AddSnapshot(snap);
  EXPECT_EQ(map.tasks(), 2u);
  int32_t host = 0;
  EXPECT_EQ(map.HostPid(kNs, 1, 5, 5, &host), PidNsMap::Match::kFound);
  EXPECT_EQ(host, 8000);
  EXPECT_EQ(map.HostTid(kNs, 2, 8000, 5, 5, &host), PidNsMap::Match::kFound);
  EXPECT_EQ(host, 8001);
  // The worker is not the process: pid 2 names no process.
  EXPECT_EQ(map.HostPid(kNs, 2, 5, 5, &host), PidNsMap::Match::kUnknown);
}

}  // namespace
}  // namespace gpunoise::model
