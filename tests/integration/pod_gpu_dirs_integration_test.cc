// `gpunoise record --gpu-pod-dirs ROOT` as a Kubernetes node's agent, with
// no container runtime: a log tree laid out as the kubelet lays it out, a
// cgroup laid out as a kubelet pod with a containerd-style container
// (created and removed here), and the project's fake CUDA app running as
// uid 65534 in it under the stand-in libcupti. The recorder makes the pod's
// directory (root's, 0700) before the app starts; the app cannot write it
// yet and holds its GPU data back; the recorder hands the directory to uid
// 65534 once it sees the pod's process; the held-back data then reaches the
// directory and the trace.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "export/perfetto/trace_view.h"
#include "integration/support/privileges.h"
#include "integration/support/trace_reader.h"
#include "integration/support/workloads.h"
#include "model/gpu_capture.h"

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;

constexpr const char* kUid = "4d5e6f70-8192-4a3b-9c4d-5e6f70819203";
constexpr const char* kId = "dddd0f52b1c94d6e8f0a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6";

std::string CgroupV2Mount() {
  std::ifstream in("/proc/mounts");
  std::string dev, dir, type, rest;
  while (in >> dev >> dir >> type && std::getline(in, rest))
    if (type == "cgroup2") return dir;
  return {};
}

struct Cleanup {
  std::string cgroup_root, dir;
  ~Cleanup() {
    if (!cgroup_root.empty()) {
      std::string pod = cgroup_root + "/kubepods/burstable/pod" + kUid;
      for (const std::string& d : {pod + "/" + kId, pod, cgroup_root + "/kubepods/burstable",
                                   cgroup_root + "/kubepods", cgroup_root})
        for (int i = 0; i < 50 && ::rmdir(d.c_str()) != 0 && errno == EBUSY; ++i) std::this_thread::sleep_for(20ms);
    }
    if (!dir.empty()) std::system(("rm -rf '" + dir + "'").c_str());
  }
};

TEST(PodGpuDirs, ThePodsDirectoryIsMadeHandedToItsUserAndItsHeldBackDataCollected) {
  GN_REQUIRE_REAL_EBPF();
  std::string v2 = CgroupV2Mount();
  if (v2.empty()) GTEST_SKIP() << "no cgroup2 mount";
  Cleanup cleanup;
  cleanup.dir = MakeTempDir();
  const std::string& dir = cleanup.dir;
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);  // uid 65534 must reach ROOT/<pod>
  cleanup.cgroup_root = v2 + "/gn-podgpudirs-test-" + std::to_string(::getpid());
  std::string container_cg = cleanup.cgroup_root + "/kubepods/burstable/pod" + kUid + "/" + kId;
  std::error_code ec;
  std::filesystem::create_directories(container_cg, ec);
  ASSERT_FALSE(ec) << ec.message();
  // The kubelet's log tree: the pod's directory and its container's link.
  std::string logs = dir + "/var-log", pod_log = std::string("ml_trainer-0_") + kUid;
  std::filesystem::create_directories(logs + "/pods/" + pod_log + "/train", ec);
  std::filesystem::create_directories(logs + "/containers", ec);
  ASSERT_EQ(::symlink((logs + "/pods/" + pod_log + "/train/0.log").c_str(),
                      (logs + "/containers/trainer-0_ml_train-" + kId + ".log").c_str()),
            0);
  std::string root = dir + "/gpu", pod_dir = root + "/" + pod_log, out = dir + "/pods.pftrace";
  ASSERT_EQ(::mkdir(root.c_str(), 0711), 0);

  ChildProcess rec({GpunoiseBinary(), "record", "-d", "4", "--gpu-pod-dirs", root, "--kubelet-log-dir", logs,
                    "-o", out});
  ASSERT_TRUE(rec.WaitForStderr("until it ends", 30s)) << rec.stderr_text();
  struct stat st {};
  ASSERT_EQ(::lstat(pod_dir.c_str(), &st), 0) << "no directory for the pod at the start";
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(st.st_mode & 07777, 0700u);

  // What `gpunoise env` prints, for the pod's directory.
  ChildProcess env_cmd({GpunoiseBinary(), "env", pod_dir, "--flush-ms", "100"});
  ASSERT_EQ(env_cmd.Wait(10s), 0) << env_cmd.stderr_text();
  std::string exports = env_cmd.stdout_text(), vars;
  std::regex line(R"(export (\w+)='([^']*)')");
  for (std::sregex_iterator it(exports.begin(), exports.end(), line), e; it != e; ++it)
    vars += " " + std::string((*it)[1]) + "='" + std::string((*it)[2]) + "'";
  // Into the container's cgroup, then uid 65534, then the CUDA program.
  std::string script = "echo $$ > '" + container_cg + "/cgroup.procs' && exec setpriv --reuid=65534 --regid=65534 "
                       "--clear-groups env" + vars + " " + model::kCuptiPathEnv + "='" + FAKE_CUPTI_LIB + "' '" +
                       FAKE_CUDA_APP + "' --seconds 1";
  ChildProcess app({"sh", "-c", script});
  EXPECT_EQ(app.Wait(30s), 0) << app.stderr_text();
  EXPECT_NE(app.stderr_text().find("cannot write to " + pod_dir + " yet"), std::string::npos) << app.stderr_text();
  ASSERT_EQ(rec.Wait(60s), 0) << rec.stderr_text();
  std::printf("%s%s%s", app.stderr_text().c_str(), rec.stderr_text().c_str(), rec.stdout_text().c_str());  // docs

  ASSERT_EQ(::lstat(pod_dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u) << "not handed to the pod's user";
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_NE(rec.stdout_text().find("GPU: 1 processes"), std::string::npos) << rec.stdout_text();
  EXPECT_NE(rec.stdout_text().find("pod directories: 1 created, 1 handed to their pod's user"), std::string::npos)
      << rec.stdout_text();
  std::string error;
  auto trace = ReadTrace(out, &error);
  ASSERT_TRUE(trace) << error;
  TraceView v(*trace);
  ASSERT_TRUE(v.parsed());
  EXPECT_TRUE(v.SliceNamed("busy()")) << "the app's kernels are not in the trace";
  EXPECT_EQ(app.stderr_text().find("GPU trace data lost"), std::string::npos) << app.stderr_text();
}

// The DaemonSet sidecar's command, one pass: a directory for the pod, a
// planted symlink for another pod refused and said.
TEST(PodGpuDirs, ThePodDirsAgentMakesEachPodsDirectoryAndRefusesAPlantedLink) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (ROOT must be root's)";
  Cleanup cleanup;
  cleanup.dir = MakeTempDir();
  std::string logs = cleanup.dir + "/var-log", root = cleanup.dir + "/gpu";
  std::string a = std::string("ml_trainer-0_") + kUid, b = "ml_trainer-1_00000000-1111-2222-3333-444444444444";
  std::error_code ec;
  std::filesystem::create_directories(logs + "/pods/" + a, ec);
  std::filesystem::create_directories(logs + "/pods/" + b, ec);
  ASSERT_EQ(::mkdir(root.c_str(), 0711), 0);
  ASSERT_EQ(::symlink("/etc", (root + "/" + b).c_str()), 0);
  ChildProcess agent({GpunoiseBinary(), "pod-dirs", root, "--kubelet-log-dir", logs, "--once"});
  ASSERT_EQ(agent.Wait(20s), 0) << agent.stderr_text();
  struct stat st {};
  ASSERT_EQ(::lstat((root + "/" + a).c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_NE(agent.stderr_text().find("refusing " + root + "/" + b + ": it is a symbolic link"), std::string::npos)
      << agent.stderr_text();
  ChildProcess world({GpunoiseBinary(), "pod-dirs", "/tmp", "--once"});
  EXPECT_EQ(world.Wait(20s), 1);
  EXPECT_NE(world.stderr_text().find("lets others create entries in it"), std::string::npos) << world.stderr_text();
}

}  // namespace
}  // namespace gpunoise::testing
