#include "collect/pod_selection.h"

#include <gtest/gtest.h>

namespace gpunoise::collect {
namespace {

constexpr const char* kUid = "6a1c0f3e-5b2d-4e8f-9a7b-1c2d3e4f5a6b";
const std::string kId(64, 'a');

model::ProcessInfo Proc(int pid, std::vector<std::string> cgroups) {
  model::ProcessInfo p;
  p.pid = pid;
  p.identity.pid = pid;
  p.identity.cgroups = cgroups;
  p.identity.container.pod_uid = kUid;
  p.identity.container.container_id = kId;
  return p;
}

TEST(PodSelection, OnCgroupV2ThePodsOwnDirectoryIsTheFilter) {
  model::ProcessSnapshot snap;
  std::string pod = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod6a1c0f3e_5b2d_4e8f_9a7b_1c2d3e4f5a6b.slice";
  snap.processes = {Proc(10, {pod + "/cri-containerd-" + kId + ".scope"}), Proc(11, {pod + "/cri-containerd-" + kId + ".scope"})};
  snap.processes.push_back(model::ProcessInfo{});  // a host process
  auto sel = SelectPod(snap, std::string("pod-uid:") + kUid);
  ASSERT_TRUE(sel.ok()) << sel.error().message;
  EXPECT_EQ(sel->pids, (std::vector<int>{10, 11}));
  EXPECT_EQ(sel->v2_path, pod);
  auto ctr = SelectPod(snap, "container:" + kId.substr(0, 12));
  ASSERT_TRUE(ctr.ok());
  EXPECT_EQ(ctr->v2_path, pod + "/cri-containerd-" + kId + ".scope");
}

TEST(PodSelection, WhereV2DoesNotHoldThePodItIsThePidSet) {
  // A hybrid host with kubelet on v1: the v2 line is containerd's unit.
  model::ProcessSnapshot snap;
  snap.processes = {Proc(10, {"cpu,cpuacct:/kubepods/burstable/pod" + std::string(kUid) + "/" + kId,
                              "/system.slice/containerd.service"})};
  auto sel = SelectPod(snap, std::string("pod-uid:") + kUid);
  ASSERT_TRUE(sel.ok());
  EXPECT_EQ(sel->pids, (std::vector<int>{10}));
  EXPECT_TRUE(sel->v2_path.empty());
}

TEST(PodSelection, UnknownPodsAndShortIdsAreErrors) {
  model::ProcessSnapshot snap;
  snap.processes = {Proc(10, {"/x"})};
  EXPECT_FALSE(SelectPod(snap, "pod-uid:00000000-0000-0000-0000-000000000000").ok());
  EXPECT_FALSE(SelectPod(snap, "container:aaaa").ok());
  EXPECT_TRUE(IsPodSelector("pod-uid:x"));
  EXPECT_FALSE(IsPodSelector("system.slice/x"));
}

}  // namespace
}  // namespace gpunoise::collect

namespace gpunoise::collect {
namespace {

TEST(PodSelection, APodByNameIsItsUidsProcesses) {
  model::ProcessSnapshot snap;
  std::string pod = "/kubepods/burstable/pod" + std::string(kUid);
  snap.processes = {Proc(10, {pod + "/" + kId}), Proc(11, {pod + "/" + kId})};
  for (auto& p : snap.processes) {
    p.identity.container.pod_name = "trainer-0";
    p.identity.container.pod_namespace = "ml";
  }
  model::ProcessInfo other = Proc(12, {"/kubepods/burstable/pod00000000-0000-0000-0000-000000000000/x"});
  other.identity.container.pod_uid = "00000000-0000-0000-0000-000000000000";
  other.identity.container.pod_name = "trainer-1";
  snap.processes.push_back(other);
  for (const char* spec : {"pod:trainer-0", "pod:ml/trainer-0"}) {
    auto sel = SelectPod(snap, spec);
    ASSERT_TRUE(sel.ok()) << sel.error().message;
    EXPECT_EQ(sel->pids, (std::vector<int>{10, 11})) << spec;
  }
  auto none = SelectPod(snap, "pod:trainer-9");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("no pod of that name"), std::string::npos) << none.error().message;
  // One name in two namespaces: ambiguous without the namespace.
  snap.processes[2].identity.container.pod_name = "trainer-0";
  snap.processes[2].identity.container.pod_namespace = "dev";
  EXPECT_FALSE(SelectPod(snap, "pod:trainer-0").ok());
  auto ml = SelectPod(snap, "pod:ml/trainer-0");
  ASSERT_TRUE(ml.ok());
  EXPECT_EQ(ml->pids, (std::vector<int>{10, 11}));
}

}  // namespace
}  // namespace gpunoise::collect
