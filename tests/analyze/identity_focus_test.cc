// --focus by pod, pod UID, container, rank and job, resolved from the
// identities the recorder kept in the trace (no live node), and the
// interference finding's note on a culprit in another pod.
#include <gtest/gtest.h>

#include "analyze/focus.h"
#include "analyze/synthetic.h"
#include "export/perfetto/identity_packets.h"

namespace gpunoise::analyze {
namespace {

using namespace gpunoise::testing;

constexpr const char* kPodA = "6a1c0f3e-5b2d-4e8f-9a7b-1c2d3e4f5a6b";
constexpr const char* kPodB = "7b2d1e4f-6c3e-4f90-8b8c-2d3e4f5a6b7c";
constexpr const char* kCtrA = "aaaa0f52b1c94d6e8f0a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6";

Timeline Pods() {
  Synth s;
  s.Process(10, "trainer").Thread(10, 10, "trainer").Thread(11, 10, "dataloader");
  s.Process(20, "prep").Thread(20, 20, "prep");
  s.Process(30, "sshd").Thread(30, 30, "sshd");
  s.Switch(kBase, 0, 0, 10).Switch(kBase + 100 * kMs, 0, 10, 20, 1).Switch(kBase + 200 * kMs, 0, 20, 0, 1);
  Timeline t = s.Build();
  model::ProcessIdentity a;
  a.pid = 10;
  a.container.pod_uid = kPodA;
  a.container.pod_name = "trainer-0";
  a.container.pod_namespace = "ml";
  a.container.container_id = kCtrA;
  a.container.runtime = model::ContainerRuntime::kContainerd;
  a.job.rank = 3;
  a.job.job_id = "4242";
  a.cgroups = {"/kubepods/burstable/pod" + std::string(kPodA) + "/" + kCtrA, "cpu,cpuacct:/kubepods/burstable/pod" +
                                                                            std::string(kPodA) + "/" + kCtrA};
  model::ProcessIdentity b;
  b.pid = 20;
  b.container.pod_uid = kPodB;
  b.container.pod_name = "data-loader-7f9c";
  b.container.pod_namespace = "ml";
  b.container.container_id = std::string(64, 'b');
  b.cpu_stat_delta = {true, "/sys/fs/cgroup/cpu/kubepods/x/cpu.stat", 100, 40, 1200000000};
  t.identities[10] = a;
  t.identities[20] = b;
  return t;
}

std::set<int32_t> Tids(const Timeline& t, const std::string& focus) {
  Thresholds th;
  auto f = SelectFocus(t, GpuModel{}, th, {focus}, nullptr, t.start_ts, t.end_ts + 1);
  EXPECT_TRUE(f.ok()) << (f.ok() ? "" : f.error().message);
  return f.ok() ? f->tids : std::set<int32_t>{};
}

TEST(IdentityFocus, SelectsByPodUidNameContainerRankAndJob) {
  Timeline t = Pods();
  EXPECT_EQ(Tids(t, std::string("pod-uid:") + kPodA), (std::set<int32_t>{10, 11}));
  EXPECT_EQ(Tids(t, "pod:data-loader-7f9c"), (std::set<int32_t>{20}));
  EXPECT_EQ(Tids(t, "pod:ml/trainer-0"), (std::set<int32_t>{10, 11}));
  EXPECT_EQ(Tids(t, "container:aaaa0f52b1c9"), (std::set<int32_t>{10, 11}));  // a 12-digit prefix
  EXPECT_EQ(Tids(t, "rank:3"), (std::set<int32_t>{10, 11}));
  EXPECT_EQ(Tids(t, "job:4242"), (std::set<int32_t>{10, 11}));
}

TEST(IdentityFocus, AContainerByNameIsResolvedFromTheNamesTheTraceKept) {
  Timeline t = Pods();
  t.identities[10].container.container_name = "train";
  t.identities[20].container.container_name = "prep";
  EXPECT_EQ(Tids(t, "container:train"), (std::set<int32_t>{10, 11}));
  EXPECT_EQ(Tids(t, "container:ml/data-loader-7f9c/prep"), (std::set<int32_t>{20}));
  EXPECT_EQ(Tids(t, "container-name:prep"), (std::set<int32_t>{20}));
  Thresholds th;
  auto wrong_pod = SelectFocus(t, GpuModel{}, th, {"container:trainer-0/prep"}, nullptr, t.start_ts, t.end_ts + 1);
  ASSERT_FALSE(wrong_pod.ok());
  EXPECT_NE(wrong_pod.error().message.find("no process of this trace is in a container trainer-0/prep"),
            std::string::npos)
      << wrong_pod.error().message;
  // 12 hex digits are an id, never a name.
  t.identities[20].container.container_name = "deadbeefcafe";
  EXPECT_FALSE(SelectFocus(t, GpuModel{}, th, {"container:deadbeefcafe"}, nullptr, t.start_ts, t.end_ts + 1).ok());
  EXPECT_EQ(Tids(t, "container-name:deadbeefcafe"), (std::set<int32_t>{20}));
}

TEST(IdentityFocus, ACgroupPathResolvesFromTheTraceBeforeTheLiveNode) {
  Timeline t = Pods();
  EXPECT_EQ(Tids(t, "/kubepods/burstable/pod" + std::string(kPodA)), (std::set<int32_t>{10, 11}));
}

TEST(IdentityFocus, ValuesThatMatchNothingAreErrorsNamingWhy) {
  Timeline t = Pods();
  Thresholds th;
  auto none = SelectFocus(t, GpuModel{}, th, {"rank:9"}, nullptr, t.start_ts, t.end_ts + 1);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("no process of this trace matches"), std::string::npos);
  auto short_id = SelectFocus(t, GpuModel{}, th, {"container:aaaa"}, nullptr, t.start_ts, t.end_ts + 1);
  ASSERT_FALSE(short_id.ok());
  EXPECT_NE(short_id.error().message.find("at least 12 digits"), std::string::npos);
  Timeline bare = Pods();
  bare.identities.clear();
  auto old = SelectFocus(bare, GpuModel{}, th, {"pod:x"}, nullptr, bare.start_ts, bare.end_ts + 1);
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.error().message.find("holds no container, pod or rank data"), std::string::npos);
}

TEST(IdentityFocus, ThreadsAreDescribedWithPodContainerAndRank) {
  Timeline t = Pods();
  EXPECT_EQ(t.DescribeThread(11), "dataloader (tid 11, pid 10 trainer, pod ml/trainer-0, container aaaa0f52b1c9, "
                                  "rank 3, job 4242)");
  EXPECT_EQ(t.DescribeThread(30), "sshd (pid 30)");  // no identity: as before
}

TEST(IdentityFocus, LabelsForTheUiNameThePodFirst) {
  Timeline t = Pods();
  auto labels = perfetto::IdentityLabels(t.identities[10]);
  ASSERT_GE(labels.size(), 4u);
  EXPECT_EQ(labels[0], "pod ml/trainer-0");
  EXPECT_EQ(labels[1], std::string("pod-uid ") + kPodA);
  EXPECT_EQ(labels[2], "container aaaa0f52b1c9 (containerd)");
  EXPECT_EQ(labels[3], "rank 3");
}

}  // namespace
}  // namespace gpunoise::analyze
