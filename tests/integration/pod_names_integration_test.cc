// Pods by name, and pods that only the v1 hierarchy holds. Without a
// container runtime: processes moved into cgroups laid out as kubelet lays
// out pods with containerd scopes (created and removed here under a unique
// prefix, as kubelet's --cgroup-root allows), and a log tree laid out as the
// kubelet lays out /var/log/pods and /var/log/containers, given to the
// recorder with --kubelet-log-dir.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "integration/support/privileges.h"
#include "integration/support/trace_reader.h"
#include "integration/support/workloads.h"

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;

constexpr const char* kUid = "3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f";
constexpr const char* kId = "cccc0f52b1c94d6e8f0a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6";

std::string FindMount(bool v2) {
  std::ifstream in("/proc/mounts");
  std::string dev, dir, type, opts, rest;
  while (in >> dev >> dir >> type >> opts && std::getline(in, rest)) {
    if (v2 && type == "cgroup2") return dir;
    if (!v2 && type == "cgroup") {
      std::stringstream ss(opts);
      std::string o;
      while (std::getline(ss, o, ','))
        if (o == "cpu") return dir;
    }
  }
  return {};
}

// kubelet's cgroupfs-driver layout: /kubepods/burstable/pod<uid>/<id>.
std::string PodPath(const std::string& root) { return root + "/kubepods/burstable/pod" + kUid + "/" + kId; }

bool WriteFile(const std::string& path, const std::string& value) {
  std::ofstream out(path);
  out << value;
  out.flush();
  return static_cast<bool>(out);
}

// The test's cgroup tree, removed deepest first at the end, failed or not.
struct CgroupTree {
  std::string root;
  ~CgroupTree() {
    if (root.empty()) return;
    std::vector<std::filesystem::path> dirs;
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
      if (it->is_directory()) dirs.push_back(it->path());
    std::sort(dirs.begin(), dirs.end(), [](const auto& a, const auto& b) { return a.native().size() > b.native().size(); });
    dirs.push_back(root);
    for (const auto& d : dirs)
      for (int i = 0; i < 50 && ::rmdir(d.c_str()) != 0 && errno == EBUSY; ++i) std::this_thread::sleep_for(20ms);
  }
};

struct Reaper {
  std::vector<pid_t> pids;
  ~Reaper() {
    for (pid_t p : pids) {
      ::kill(p, SIGKILL);
      ::waitpid(p, nullptr, 0);
    }
  }
};

struct RemoveDir {
  std::string d;
  ~RemoveDir() { std::system(("rm -rf '" + d + "'").c_str()); }
};

// Wakes every 10 ms until `done` exists (bounded). With `child_after`, it
// forks once that file exists: a child born during the recording, which
// wakes the same way.
pid_t StartPolling(const std::string& cgroup, const std::string& child_after, const std::string& done) {
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  if (!cgroup.empty() && !WriteFile(cgroup + "/cgroup.procs", std::to_string(::getpid()))) ::_exit(3);
  auto give_up = std::chrono::steady_clock::now() + 30s;
  bool forked = child_after.empty();
  while (::access(done.c_str(), F_OK) != 0 && std::chrono::steady_clock::now() < give_up) {
    if (!forked && ::access(child_after.c_str(), F_OK) == 0) {
      forked = true;
      pid_t child = ::fork();
      if (child == 0) std::ofstream(child_after + ".pid") << ::getpid();
    }
    std::this_thread::sleep_for(10ms);
  }
  ::_exit(0);
}

TEST(PodNames, PodAndContainerNamesComeFromTheKubeletLogTreeAndSelectThePod) {
  GN_REQUIRE_REAL_EBPF();
  std::string v2 = FindMount(true);
  if (v2.empty()) GTEST_SKIP() << "no cgroup2 mount";
  CgroupTree tree{v2 + "/gn-podnames-test-" + std::to_string(::getpid())};
  std::error_code ec;
  std::filesystem::create_directories(PodPath(tree.root), ec);
  ASSERT_FALSE(ec) << ec.message();
  std::string dir = MakeTempDir();
  RemoveDir remove_dir{dir};
  // The kubelet's log tree: the pod's directory and the container's link.
  std::string logs = dir + "/var-log";
  std::filesystem::create_directories(logs + "/pods/ml_data-loader-7f9c_" + kUid + "/prep", ec);
  std::filesystem::create_directories(logs + "/containers", ec);
  ASSERT_EQ(::symlink((logs + "/pods/ml_data-loader-7f9c_" + kUid + "/prep/0.log").c_str(),
                      (logs + "/containers/data-loader-7f9c_ml_prep-" + kId + ".log").c_str()),
            0);
  std::string done = dir + "/done", out = dir + "/names.pftrace", only = dir + "/only.pftrace";
  Reaper reaper;
  pid_t in_pod = StartPolling(PodPath(tree.root), "", done);
  pid_t outside = StartPolling("", "", done);
  reaper.pids = {in_pod, outside};
  std::this_thread::sleep_for(200ms);

  ChildProcess rec({GpunoiseBinary(), "record", "-d", "2", "--kubelet-log-dir", logs, "-o", out});
  ASSERT_EQ(rec.Wait(60s), 0) << rec.stderr_text();
  // By name, resolved at the start: the pod's v2 directory is the filter.
  ChildProcess by_name({GpunoiseBinary(), "record", "-d", "1", "--kubelet-log-dir", logs, "--cgroup",
                        "pod:ml/data-loader-7f9c", "-o", only});
  ASSERT_EQ(by_name.Wait(60s), 0) << by_name.stderr_text();
  WriteFile(done, "done");

  std::string error;
  auto trace = ReadTrace(out, &error);
  ASSERT_TRUE(trace) << error;
  std::map<std::string, std::string> id;
  for (const auto& args : TrackEventArgs(*trace, "gpunoise process identity"))
    if (args.count("pid") && args.at("pid") == std::to_string(in_pod)) id = args;
  ASSERT_FALSE(id.empty()) << "no identity for pid " << in_pod;
  EXPECT_EQ(id["pod.uid"], kUid);
  EXPECT_EQ(id["pod.name"], "data-loader-7f9c");
  EXPECT_EQ(id["pod.namespace"], "ml");
  EXPECT_EQ(id["container.name"], "prep");

  auto only_trace = ReadTrace(only, &error);
  ASSERT_TRUE(only_trace) << error;
  std::set<int32_t> woken;
  for (const auto& w : CompactWakings(*only_trace)) woken.insert(w.pid);
  EXPECT_TRUE(woken.count(in_pod)) << "the pod's process is missing";
  EXPECT_FALSE(woken.count(outside)) << "a process outside the pod was recorded";

  // The report focuses on the pod by name from the trace alone.
  ChildProcess report({GpunoiseBinary(), "report", "--json", "--focus", "pod:ml/data-loader-7f9c", out});
  EXPECT_EQ(report.Wait(60s), 0) << report.stderr_text();
  // And on its container by name (the names the trace kept).
  ChildProcess by_container({GpunoiseBinary(), "report", "--json", "--focus", "container:ml/data-loader-7f9c/prep", out});
  EXPECT_EQ(by_container.Wait(60s), 0) << by_container.stderr_text();
  ChildProcess wrong({GpunoiseBinary(), "report", "--focus", "pod:ml/no-such-pod", out});
  EXPECT_NE(wrong.Wait(60s), 0);
  ChildProcess no_pod({GpunoiseBinary(), "record", "-d", "1", "--kubelet-log-dir", logs, "--cgroup",
                       "pod:no-such-pod", "-o", dir + "/x.pftrace"});
  EXPECT_NE(no_pod.Wait(60s), 0);
  EXPECT_NE(no_pod.stderr_text().find("no pod of that name"), std::string::npos) << no_pod.stderr_text();
}

// A pod only the v1 cpu hierarchy holds (a v1 kubelet on this hybrid host):
// the kernel's cgroup-id helper sees only v2, so `--cgroup pod-uid:` records
// the pod's processes and the children they start during the recording.
TEST(PodNames, CgroupSelectionOnV1FindsThePodsProcessesAndTheirDescendants) {
  GN_REQUIRE_REAL_EBPF();
  std::string v1 = FindMount(false);
  if (v1.empty()) GTEST_SKIP() << "no v1 cpu hierarchy mounted (not a hybrid or v1 host)";
  CgroupTree tree{v1 + "/gn-podnames-v1-test-" + std::to_string(::getpid())};
  std::error_code ec;
  std::filesystem::create_directories(PodPath(tree.root), ec);
  ASSERT_FALSE(ec) << ec.message();
  std::string dir = MakeTempDir();
  RemoveDir remove_dir{dir};
  std::string go = dir + "/fork-now", done = dir + "/done", out = dir + "/v1.pftrace";
  Reaper reaper;
  pid_t in_pod = StartPolling(PodPath(tree.root), go, done);
  pid_t outside = StartPolling("", "", done);
  reaper.pids = {in_pod, outside};
  std::this_thread::sleep_for(200ms);

  ChildProcess rec({GpunoiseBinary(), "record", "-d", "2", "--cgroup", std::string("pod-uid:") + kUid, "-o", out});
  // Not "recording": the --cgroup line before the attach has that word too.
  ASSERT_TRUE(rec.WaitForStderr("until it ends", 30s)) << rec.stderr_text();
  WriteFile(go, "go");  // the pod's process forks a child now
  ASSERT_EQ(rec.Wait(60s), 0) << rec.stderr_text();
  WriteFile(done, "done");
  EXPECT_NE(rec.stderr_text().find("cgroup v2 does not hold it here"), std::string::npos) << rec.stderr_text();
  int child = 0;
  std::ifstream(go + ".pid") >> child;
  ASSERT_GT(child, 0) << "the pod's process did not fork";
  reaper.pids.push_back(child);

  std::string error;
  auto trace = ReadTrace(out, &error);
  ASSERT_TRUE(trace) << error;
  std::set<int32_t> woken;
  for (const auto& w : CompactWakings(*trace)) woken.insert(w.pid);
  EXPECT_TRUE(woken.count(in_pod)) << "the pod's process is missing";
  EXPECT_TRUE(woken.count(child)) << "the child it started during the recording is missing";
  EXPECT_FALSE(woken.count(outside)) << "a process outside the pod was recorded";
}

}  // namespace
}  // namespace gpunoise::testing
