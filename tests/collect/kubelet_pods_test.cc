#include "collect/kubelet_pods.h"
#include "collect/pod_selection.h"
#include "collect/fake_kubelet_logs.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace gpunoise::collect {
namespace {

constexpr const char* kUid = "7b2d1e4f-6c3e-4f90-8b8c-2d3e4f5a6b7c";
const std::string kId(64, 'b');

model::ProcessSnapshot OneProcessIn(const std::string& pod_uid, const std::string& container_id) {
  model::ProcessSnapshot snap;
  model::ProcessInfo p;
  p.pid = 4411;
  p.identity.pid = 4411;
  p.identity.container.runtime = model::ContainerRuntime::kContainerd;
  p.identity.container.pod_uid = pod_uid;
  p.identity.container.container_id = container_id;
  snap.processes.push_back(p);
  return snap;
}

TEST_F(FakeKubeletLogs, PodAndContainerNamesComeFromTheKubeletsLogDirectories) {
  Pod(std::string("ml_data-loader-7f9c_") + kUid);
  // The link points at the pod's log; only its name is read (a dangling
  // target is fine).
  ContainerLink("data-loader-7f9c_ml_prep-" + kId + ".log", "/nonexistent/prep/0.log");
  KubeletPods k = KubeletPods::Read(root_);
  model::ProcessSnapshot snap = OneProcessIn(kUid, kId);
  k.Name(&snap);
  const model::ContainerIdentity& c = snap.processes[0].identity.container;
  EXPECT_EQ(c.pod_name, "data-loader-7f9c");
  EXPECT_EQ(c.pod_namespace, "ml");
  EXPECT_EQ(c.container_name, "prep");
}

TEST_F(FakeKubeletLogs, KubeletsNamesWinOverTheProcessHostname) {
  Pod(std::string("ml_trainer-0_") + kUid);
  model::ProcessSnapshot snap = OneProcessIn(kUid, "");
  snap.processes[0].identity.container.pod_name = "custom-hostname";
  KubeletPods::Read(root_).Name(&snap);
  EXPECT_EQ(snap.processes[0].identity.container.pod_name, "trainer-0");
}

TEST_F(FakeKubeletLogs, ContainerLinkAloneNamesThePodToo) {
  ContainerLink("trainer-0_ml_train-" + kId + ".log", "x");
  model::ProcessSnapshot snap = OneProcessIn(kUid, kId);
  KubeletPods::Read(root_).Name(&snap);
  const model::ContainerIdentity& c = snap.processes[0].identity.container;
  EXPECT_EQ(c.pod_name, "trainer-0");
  EXPECT_EQ(c.pod_namespace, "ml");
  EXPECT_EQ(c.container_name, "train");
}

TEST_F(FakeKubeletLogs, ALinkOfAnotherPodsContainerNamesNothing) {
  Pod(std::string("ml_trainer-0_") + kUid);
  ContainerLink("other-pod_ml_evil-" + kId + ".log", "x");
  model::ProcessSnapshot snap = OneProcessIn(kUid, kId);
  KubeletPods::Read(root_).Name(&snap);
  EXPECT_EQ(snap.processes[0].identity.container.pod_name, "trainer-0");
  EXPECT_EQ(snap.processes[0].identity.container.container_name, "");
}

TEST_F(FakeKubeletLogs, ProcessesOutsidePodsAndUnknownPodsAreLeftAlone) {
  Pod(std::string("ml_trainer-0_") + kUid);
  model::ProcessSnapshot snap = OneProcessIn("", kId);
  model::ProcessSnapshot other = OneProcessIn("00000000-0000-0000-0000-000000000000", "");
  KubeletPods k = KubeletPods::Read(root_);
  k.Name(&snap);
  k.Name(&other);
  EXPECT_EQ(snap.processes[0].identity.container.pod_name, "");
  EXPECT_EQ(other.processes[0].identity.container.pod_name, "");
}

// `record --cgroup container:NAME`: the names the log tree gives select
// the container's processes at the start, as pod: does.
TEST_F(FakeKubeletLogs, AContainerByNameSelectsItsProcesses) {
  const std::string other_uid = "00000000-1111-2222-3333-444444444444";
  const std::string other_id(64, 'c');
  Pod(std::string("ml_data-loader-7f9c_") + kUid);
  Pod("dev_data-loader-9x_" + other_uid);
  ContainerLink("data-loader-7f9c_ml_prep-" + kId + ".log", "x");
  ContainerLink("data-loader-9x_dev_prep-" + other_id + ".log", "x");
  std::string pod = "/kubepods/burstable/pod" + std::string(kUid);
  model::ProcessSnapshot snap = OneProcessIn(kUid, kId);
  snap.processes[0].identity.cgroups = {pod + "/" + kId};
  model::ProcessSnapshot other = OneProcessIn(other_uid, other_id);
  other.processes[0].pid = 5522;
  other.processes[0].identity.cgroups = {"/kubepods/burstable/pod" + other_uid + "/" + other_id};
  snap.processes.push_back(other.processes[0]);
  KubeletPods::Read(root_).Name(&snap);
  auto one = SelectPod(snap, "container:ml/data-loader-7f9c/prep");
  ASSERT_TRUE(one.ok()) << one.error().message;
  EXPECT_EQ(one->pids, std::vector<int>{4411});
  EXPECT_EQ(one->v2_path, pod + "/" + kId);
  EXPECT_EQ(SelectPod(snap, "container:data-loader-7f9c/prep")->pids, std::vector<int>{4411});
  // One name in two pods: both, by their processes (no one v2 directory).
  auto both = SelectPod(snap, "container:prep");
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->pids, (std::vector<int>{4411, 5522}));
  EXPECT_EQ(both->containers, 2u);
  EXPECT_TRUE(both->v2_path.empty());
  // An id still selects by id.
  EXPECT_EQ(SelectPod(snap, "container:" + other_id.substr(0, 12))->pids, std::vector<int>{5522});
  auto none = SelectPod(snap, "container:train");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("no process of this node is in a container train"), std::string::npos)
      << none.error().message;
  EXPECT_FALSE(SelectPod(snap, "container:Prep").ok());
}

TEST(KubeletPods, NoKubeletTreeGivesAnEmptyIndex) {
  EXPECT_TRUE(KubeletPods::Read("/nonexistent-gpunoise-root").empty());
}

TEST(KubeletPods, EntriesNotLaidOutAsTheKubeletDoesAreRefused) {
  KubeletPods k;
  EXPECT_TRUE(k.AddPodDirectory(std::string("kube-system_coredns-5d78c9869d-abcde_") + kUid));
  EXPECT_FALSE(k.AddPodDirectory("ml_trainer-0"));                          // no uid
  EXPECT_FALSE(k.AddPodDirectory(std::string("ml_") + kUid));               // no name
  EXPECT_FALSE(k.AddPodDirectory(std::string("ML_trainer-0_") + kUid));     // not a DNS name
  EXPECT_FALSE(k.AddPodDirectory("ml_trainer-0_7b2d1e4f-6c3e-4f90-8b8c"));  // short uid
  EXPECT_FALSE(k.AddPodDirectory(std::string("ml_a_b_") + kUid));           // '_' inside a name
  EXPECT_TRUE(k.AddContainerLog("trainer-0_ml_train-" + kId + ".log"));
  EXPECT_FALSE(k.AddContainerLog("trainer-0_ml_train-" + kId));           // no .log
  EXPECT_FALSE(k.AddContainerLog("trainer-0_ml_train" + kId + ".log"));   // no '-' before the id
  EXPECT_FALSE(k.AddContainerLog("trainer-0_train-" + kId + ".log"));     // no namespace
  EXPECT_FALSE(k.AddContainerLog("trainer-0_ml_train-" + std::string(64, 'Z') + ".log"));
  ASSERT_NE(k.Pod(kUid), nullptr);
  EXPECT_EQ(k.Pod(kUid)->name, "coredns-5d78c9869d-abcde");
  EXPECT_EQ(k.Pod(kUid)->pod_namespace, "kube-system");
}

}  // namespace
}  // namespace gpunoise::collect
