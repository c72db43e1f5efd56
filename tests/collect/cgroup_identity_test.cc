#include "collect/cgroup_identity.h"

#include <gtest/gtest.h>

namespace gpunoise::collect {
namespace {

using model::ContainerRuntime;
using model::PodQos;

constexpr const char* kId = "3f7e0a52b1c94d6e8f0a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6";
constexpr const char* kUid = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";

std::string Underscored(std::string s) {
  for (char& c : s)
    if (c == '-') c = '_';
  return s;
}

TEST(CgroupIdentity, ContainerdWithTheSystemdDriverOnCgroupV2) {
  auto lines = ParseProcCgroup(std::string("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod") +
                               Underscored(kUid) + ".slice/cri-containerd-" + kId + ".scope\n");
  ASSERT_EQ(lines.size(), 1u);
  auto id = IdentifyContainer(lines);
  EXPECT_EQ(id.runtime, ContainerRuntime::kContainerd);
  EXPECT_EQ(id.container_id, kId);
  EXPECT_EQ(id.pod_uid, kUid);
  EXPECT_EQ(id.qos, PodQos::kBurstable);
  EXPECT_EQ(id.cgroup, lines[0].path);
}

TEST(CgroupIdentity, ContainerdWithTheCgroupfsDriverOnAHybridHost) {
  // v1 controllers plus cgroup2 at /sys/fs/cgroup/unified, as on this VM.
  std::string path = std::string("/kubepods/besteffort/pod") + kUid + "/" + kId;
  auto lines = ParseProcCgroup("12:cpuset:" + path + "\n4:cpu,cpuacct:" + path + "\n3:memory:" + path +
                               "\n1:name=systemd:/system.slice/containerd.service\n0::" + path + "\n");
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[1].controllers, "cpu,cpuacct");
  auto id = IdentifyContainer(lines);
  EXPECT_EQ(id.container_id, kId);
  EXPECT_EQ(id.pod_uid, kUid);
  EXPECT_EQ(id.qos, PodQos::kBestEffort);
  // A bare id says nothing of the runtime.
  EXPECT_EQ(id.runtime, ContainerRuntime::kUnknown);
  auto paths = CgroupPaths(lines);
  EXPECT_EQ(paths[1], "cpu,cpuacct:" + path);
  EXPECT_EQ(paths[4], path);
}

TEST(CgroupIdentity, GuaranteedPodsHaveNoQosLevel) {
  auto id = IdentifyCgroupPath(std::string("/kubepods/pod") + kUid + "/" + kId);
  EXPECT_EQ(id.qos, PodQos::kGuaranteed);
  auto sd = IdentifyCgroupPath(std::string("/kubepods.slice/kubepods-pod") + Underscored(kUid) +
                               ".slice/cri-containerd-" + kId + ".scope");
  EXPECT_EQ(sd.qos, PodQos::kGuaranteed);
  EXPECT_EQ(sd.pod_uid, kUid);
}

TEST(CgroupIdentity, CrioWithTheSystemdDriverAndItsConmonScope) {
  std::string pod = std::string("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod") +
                    Underscored(kUid) + ".slice/";
  auto id = IdentifyCgroupPath(pod + "crio-" + kId + ".scope");
  EXPECT_EQ(id.runtime, ContainerRuntime::kCrio);
  EXPECT_EQ(id.container_id, kId);
  EXPECT_EQ(id.qos, PodQos::kBestEffort);
  // conmon, the container's monitor, is in the pod but no container.
  auto conmon = IdentifyCgroupPath(pod + "crio-conmon-" + kId + ".scope");
  EXPECT_EQ(conmon.runtime, ContainerRuntime::kNone);
  EXPECT_EQ(conmon.pod_uid, kUid);
}

TEST(CgroupIdentity, DockerWithBothDrivers) {
  auto sd = IdentifyCgroupPath(std::string("/system.slice/docker-") + kId + ".scope");
  EXPECT_EQ(sd.runtime, ContainerRuntime::kDocker);
  EXPECT_EQ(sd.container_id, kId);
  EXPECT_TRUE(sd.pod_uid.empty());
  EXPECT_EQ(sd.qos, PodQos::kNone);
  auto fs = IdentifyContainer(ParseProcCgroup(std::string("9:cpu,cpuacct:/docker/") + kId + "\n0::/docker/" + kId + "\n"));
  EXPECT_EQ(fs.runtime, ContainerRuntime::kDocker);
  EXPECT_EQ(fs.container_id, kId);
}

TEST(CgroupIdentity, PodmanRootfulAndRootless) {
  auto rootful = IdentifyCgroupPath(std::string("/machine.slice/libpod-") + kId + ".scope");
  EXPECT_EQ(rootful.runtime, ContainerRuntime::kPodman);
  EXPECT_EQ(rootful.container_id, kId);
  auto rootless = IdentifyCgroupPath(std::string("/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-") +
                                     kId + ".scope/container");
  EXPECT_EQ(rootless.runtime, ContainerRuntime::kPodman);
  EXPECT_EQ(rootless.container_id, kId);
  auto fs = IdentifyCgroupPath(std::string("/libpod_parent/") + kId);
  EXPECT_EQ(fs.runtime, ContainerRuntime::kPodman);
  EXPECT_EQ(IdentifyCgroupPath(std::string("/machine.slice/libpod-conmon-") + kId + ".scope").runtime,
            ContainerRuntime::kNone);
}

TEST(CgroupIdentity, SlurmJobOnV1AndV2) {
  auto v1 = IdentifyContainer(ParseProcCgroup("7:cpuset:/slurm/uid_1000/job_4242/step_0/task_1\n"
                                              "4:memory:/slurm/uid_1000/job_4242/step_0/task_1\n"
                                              "1:name=systemd:/system.slice/slurmd.service\n"));
  EXPECT_EQ(v1.slurm_job_id, "4242");
  EXPECT_EQ(v1.runtime, ContainerRuntime::kNone);
  auto v2 = IdentifyCgroupPath("/system.slice/slurmstepd.scope/job_977/step_batch/user/task_0");
  EXPECT_EQ(v2.slurm_job_id, "977");
}

TEST(CgroupIdentity, V1OnlyHostTakesTheFirstControllerLineThatNamesAContainer) {
  std::string path = std::string("/kubepods/burstable/pod") + kUid + "/" + kId;
  auto id = IdentifyContainer(ParseProcCgroup("11:devices:/\n5:cpu,cpuacct:" + path +
                                              "\n1:name=systemd:/kubepods/burstable/pod" + kUid + "\n"));
  EXPECT_EQ(id.container_id, kId);
  EXPECT_EQ(id.cgroup, path);
}

TEST(CgroupIdentity, HostProcessesAndMalformedLinesNameNothing) {
  EXPECT_TRUE(IdentifyContainer(ParseProcCgroup("0::/user.slice/user-1000.slice/session-3.scope\n")).empty());
  EXPECT_TRUE(IdentifyContainer(ParseProcCgroup("0::/\n")).empty());
  EXPECT_TRUE(ParseProcCgroup("garbage\nx:y\n").empty());
  // Near misses: a 63-digit id, a pod UID of the wrong length.
  EXPECT_TRUE(IdentifyCgroupPath(std::string("/docker/") + std::string(kId).substr(1)).empty());
  EXPECT_TRUE(IdentifyCgroupPath("/kubepods/burstable/pod1234/").pod_uid.empty());
}

}  // namespace
}  // namespace gpunoise::collect
