// Pod and container names from crictl's JSON (collect/crictl_pods.h), and a
// stand-in crictl on PATH, run bounded.
#include "collect/crictl_pods.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>

#include "collect/fake_kubelet_logs.h"

namespace gpunoise::collect {
namespace {

constexpr const char* kUid = "7b2d1e4f-6c3e-4f90-8b8c-2d3e4f5a6b7c";
const std::string kId(64, 'b');

// As crictl 1.30 prints them (fields gpunoise does not read left out).
const std::string kPodsJson = std::string(R"({"items": [{"id": "5f0c", "metadata": {"name": "trainer-0", "uid": ")") +
                              kUid + R"(", "namespace": "ml", "attempt": 0}, "state": "SANDBOX_READY"},
  {"id": "x", "metadata": {"name": "Bad_Name", "uid": "nope", "namespace": "ml"}}]})";
const std::string kPsJson = R"({"containers": [{"id": ")" + kId +
                            R"(", "podSandboxId": "5f0c", "metadata": {"name": "train", "attempt": 0},
  "labels": {"io.kubernetes.pod.name": "trainer-0", "io.kubernetes.pod.namespace": "ml",
             "io.kubernetes.container.name": "train"}, "state": "CONTAINER_RUNNING"}]})";

TEST(CrictlPods, PodsAndContainersAreNamedFromCrictlsJson) {
  KubeletPods k;
  auto pods = AddCrictlPods(kPodsJson, &k);
  ASSERT_TRUE(pods.ok()) << pods.error().message;
  EXPECT_EQ(*pods, 1u);  // the malformed one is not taken
  auto ctrs = AddCrictlContainers(kPsJson, &k);
  ASSERT_TRUE(ctrs.ok());
  EXPECT_EQ(*ctrs, 1u);
  ASSERT_NE(k.Pod(kUid), nullptr);
  EXPECT_EQ(k.Pod(kUid)->name, "trainer-0");
  ASSERT_NE(k.Container(kId), nullptr);
  EXPECT_EQ(k.Container(kId)->name, "train");
  EXPECT_EQ(k.Container(kId)->pod_namespace, "ml");
  EXPECT_FALSE(AddCrictlPods("{not json", &k).ok());
  EXPECT_FALSE(AddCrictlContainers(R"({"items": []})", &k).ok());
}

TEST_F(FakeKubeletLogs, TheLogTreeWinsOverCrictl) {
  Pod(std::string("ml_trainer-0_") + kUid);
  KubeletPods k = KubeletPods::Read(root_);
  std::string renamed = kPodsJson;
  renamed.replace(renamed.find("trainer-0"), 9, "other-pod");
  ASSERT_TRUE(AddCrictlPods(renamed, &k).ok());
  EXPECT_EQ(k.Pod(kUid)->name, "trainer-0");
}

TEST_F(FakeKubeletLogs, AStandInCrictlOnPathIsRunBoundedAndItsNamesTaken) {
  std::string bin = root_ + "/bin";
  ASSERT_EQ(::mkdir(bin.c_str(), 0755), 0);
  std::ofstream(root_ + "/pods.json") << kPodsJson;
  std::ofstream(root_ + "/ps.json") << kPsJson;
  std::ofstream(bin + "/crictl") << "#!/bin/sh\n[ \"$1\" = pods ] && exec cat '" << root_ << "/pods.json'\n"
                                 << "[ \"$1\" = ps ] && exec cat '" << root_ << "/ps.json'\nexit 1\n";
  ASSERT_EQ(::chmod((bin + "/crictl").c_str(), 0755), 0);
  std::string path = "relative/bin:" + bin + ":/usr/bin:/bin";
  auto found = FindOnPath("crictl", path.c_str());
  ASSERT_TRUE(found);
  EXPECT_EQ(*found, bin + "/crictl");
  EXPECT_FALSE(FindOnPath("crictl", "/nonexistent-gpunoise:/"));
  const char* old = std::getenv("PATH");
  std::string saved = old ? old : "";
  ::setenv("PATH", path.c_str(), 1);
  KubeletPods k;
  Status st = AddCrictlNames(&k);
  ::setenv("PATH", saved.c_str(), 1);
  ASSERT_TRUE(st.ok()) << st.error().message;
  ASSERT_NE(k.Container(kId), nullptr);
  EXPECT_EQ(k.Container(kId)->name, "train");
  // One that hangs is killed at the bound, and said.
  auto slow = RunBounded({"/bin/sleep", "5"}, std::chrono::milliseconds(100));
  ASSERT_FALSE(slow.ok());
  EXPECT_NE(slow.error().message.find("did not finish within 100 ms"), std::string::npos) << slow.error().message;
  auto failing = RunBounded({"/bin/false"}, std::chrono::milliseconds(2000));
  EXPECT_FALSE(failing.ok());
}

}  // namespace
}  // namespace gpunoise::collect
