// Pods without a container runtime: two processes moved into cgroups laid
// out as kubelet lays out pods with containerd scopes, in the cgroup-v2
// hierarchy and in the v1 cpu hierarchy of this hybrid host (mounts found in
// /proc/mounts; created and removed here, under a unique prefix, which
// kubelet's --cgroup-root allows too). A spinning "loader" in pod B, under
// a v1 CFS quota, delays a "trainer" in pod A on the same CPU. The trace
// names both by pod UID and container id (typed, and as process labels the
// trace processor imports); `report --json --focus pod-uid:A FILE` selects
// the trainer from the trace alone, and its interference finding says the
// culprit runs in another pod whose cgroup was throttled.
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
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
#include <tuple>

#include "integration/support/privileges.h"
#include "integration/support/trace_reader.h"
#include "integration/support/workloads.h"

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;

constexpr const char* kUidA = "6a1c0f3e-5b2d-4e8f-9a7b-1c2d3e4f5a6b";
constexpr const char* kUidB = "7b2d1e4f-6c3e-4f90-8b8c-2d3e4f5a6b7c";
constexpr const char* kIdA = "aaaa0f52b1c94d6e8f0a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6";
constexpr const char* kIdB = "bbbb0a52b1c94d6e8f0a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6";

struct Mounts {
  std::string v2, v1_cpu;
};

Mounts FindMounts() {
  Mounts m;
  std::ifstream in("/proc/mounts");
  std::string dev, dir, type, opts, rest;
  while (in >> dev >> dir >> type >> opts && std::getline(in, rest)) {
    if (type == "cgroup2" && m.v2.empty()) m.v2 = dir;
    if (type == "cgroup") {
      std::stringstream ss(opts);
      std::string o;
      while (std::getline(ss, o, ','))
        if (o == "cpu" && m.v1_cpu.empty()) m.v1_cpu = dir;
    }
  }
  return m;
}

std::string Underscored(std::string s) {
  for (char& c : s)
    if (c == '-') c = '_';
  return s;
}

// The pod's container cgroup below `root`, kubelet's systemd-driver names.
std::string PodPath(const std::string& root, const char* uid, const char* id) {
  return root + "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + Underscored(uid) +
         ".slice/cri-containerd-" + id + ".scope";
}

bool WriteFile(const std::string& path, const std::string& value) {
  std::ofstream out(path);
  out << value;
  out.flush();
  return static_cast<bool>(out);
}

// The test's cgroup trees in both hierarchies, removed (deepest first) at
// the end, failed or not.
struct CgroupTrees {
  std::vector<std::string> roots;
  ~CgroupTrees() {
    for (const auto& root : roots) {
      std::vector<std::filesystem::path> dirs;
      std::error_code ec;
      for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
           !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
        if (it->is_directory()) dirs.push_back(it->path());
      std::sort(dirs.begin(), dirs.end(), [](const auto& a, const auto& b) { return a.native().size() > b.native().size(); });
      dirs.push_back(root);
      // A killed task's cgroup can stay busy for a moment after waitpid
      // (the release is asynchronous): retry briefly, bounded.
      for (const auto& d : dirs)
        for (int i = 0; i < 50 && ::rmdir(d.c_str()) != 0 && errno == EBUSY; ++i)
          std::this_thread::sleep_for(20ms);
    }
  }
};

void Pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  ::sched_setaffinity(0, sizeof(set), &set);
}

// A child that joins `cgroups`, names itself, waits for `go`, spins pinned
// to CPU 1 for `spin_ms` and waits for `done` (so both of the recorder's
// scans see it).
pid_t StartInPod(const std::vector<std::string>& cgroups, const char* name, const std::string& go,
                 const std::string& done, int spin_ms) {
  pid_t child = ::fork();
  if (child != 0) return child;
  for (const auto& cg : cgroups)
    if (!WriteFile(cg + "/cgroup.procs", std::to_string(::getpid()))) ::_exit(3);
  ::pthread_setname_np(::pthread_self(), name);
  Pin(1);
  auto give_up = std::chrono::steady_clock::now() + 60s;
  while (::access(go.c_str(), F_OK) != 0 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(10ms);
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(spin_ms);
  volatile uint64_t x = 0;
  while (std::chrono::steady_clock::now() < end) x = x + 1;
  while (::access(done.c_str(), F_OK) != 0 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(10ms);
  ::_exit(0);
}

struct Reaper {
  std::vector<pid_t> pids;
  ~Reaper() {
    for (pid_t p : pids) {
      ::kill(p, SIGKILL);
      ::waitpid(p, nullptr, 0);
    }
  }
};

TEST(PodIdentity, PodsAreNamedByUidAndContainerAndTheNeighboursThrottlingIsInTheFinding) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  Mounts m = FindMounts();
  if (m.v2.empty() || m.v1_cpu.empty())
    GTEST_SKIP() << "needs cgroup2 and the v1 cpu controller mounted (a hybrid host), found v2='" << m.v2
                 << "' v1 cpu='" << m.v1_cpu << "'";
  std::string prefix = "gn-containers-test-" + std::to_string(::getpid());
  CgroupTrees trees;
  trees.roots = {m.v2 + "/" + prefix, m.v1_cpu + "/" + prefix};
  std::vector<std::string> cg_a, cg_b;
  for (const auto& root : trees.roots) {
    std::error_code ec;
    for (auto [uid, id, list] : {std::tuple{kUidA, kIdA, &cg_a}, std::tuple{kUidB, kIdB, &cg_b}}) {
      std::string path = PodPath(root, uid, id);
      std::filesystem::create_directories(path, ec);
      ASSERT_FALSE(ec) << path << ": " << ec.message();
      list->push_back(path);
    }
  }
  // The loader's container may use 2 ms of every 20 ms: throttled in most
  // periods it runs in, even on a machine busy with other work.
  ASSERT_TRUE(WriteFile(cg_b[1] + "/cpu.cfs_period_us", "20000"));
  ASSERT_TRUE(WriteFile(cg_b[1] + "/cpu.cfs_quota_us", "2000"));

  std::string dir = MakeTempDir();
  struct RemoveDir {
    std::string d;
    ~RemoveDir() { std::system(("rm -rf '" + d + "'").c_str()); }
  } remove_dir{dir};
  std::string go = dir + "/go", done = dir + "/done", out = dir + "/pods.pftrace";
  Reaper reaper;
  pid_t trainer = StartInPod(cg_a, "gn-trainer", go, done, 1500);
  pid_t loader = StartInPod(cg_b, "gn-loader", go, done, 1500);
  reaper.pids = {trainer, loader};
  std::this_thread::sleep_for(300ms);

  ChildProcess rec({GpunoiseBinary(), "record", "-d", "3", "-o", out});
  ASSERT_TRUE(rec.WaitForStderr("recording", 30s)) << rec.stderr_text();
  WriteFile(go, "go");
  ASSERT_EQ(rec.Wait(60s), 0) << rec.stderr_text();

  // `record --cgroup pod-uid:A`, resolved at the start: here the v2
  // hierarchy holds the pod, so the kernel filters by its directory.
  std::string only_a = dir + "/only-a.pftrace";
  ChildProcess pod_rec({GpunoiseBinary(), "record", "-d", "1", "--cgroup", std::string("pod-uid:") + kUidA, "-o", only_a});
  ASSERT_EQ(pod_rec.Wait(60s), 0) << pod_rec.stderr_text();
  EXPECT_NE(pod_rec.stderr_text().find("the cgroup-v2 directory /" + prefix + "/kubepods.slice/"), std::string::npos)
      << pod_rec.stderr_text();
  WriteFile(done, "done");
  {
    std::string err;
    auto t = ReadTrace(only_a, &err);
    ASSERT_TRUE(t) << err;
    // Both poll every 10 ms: the filter keeps the trainer's wakeups only
    // (a switch from the trainer to the loader names the loader too).
    std::set<int32_t> woken;
    for (const auto& w : CompactWakings(*t)) woken.insert(w.pid);
    EXPECT_TRUE(woken.count(trainer)) << "the pod's process is missing";
    EXPECT_FALSE(woken.count(loader)) << "the other pod's process was recorded";
  }

  // Typed identities in the trace.
  std::string error;
  auto trace = ReadTrace(out, &error);
  ASSERT_TRUE(trace) << error;
  std::map<std::string, std::string> a, b;
  for (const auto& args : TrackEventArgs(*trace, "gpunoise process identity")) {
    if (args.count("pid") && args.at("pid") == std::to_string(trainer)) a = args;
    if (args.count("pid") && args.at("pid") == std::to_string(loader)) b = args;
  }
  ASSERT_FALSE(a.empty()) << "no identity for the trainer (pid " << trainer << ")";
  ASSERT_FALSE(b.empty()) << "no identity for the loader (pid " << loader << ")";
  EXPECT_EQ(a["pod.uid"], kUidA);
  EXPECT_EQ(a["container.id"], kIdA);
  EXPECT_EQ(a["container.runtime"], "containerd");
  EXPECT_EQ(a["pod.qos"], "Burstable");
  EXPECT_EQ(b["pod.uid"], kUidB);
  EXPECT_EQ(b["container.id"], kIdB);
  // The v1 cpu hierarchy's cpu.stat (where the quota is) saw the throttling.
  EXPECT_NE(b["cpu.stat"].find(m.v1_cpu), std::string::npos) << b["cpu.stat"];
  EXPECT_GT(std::stoull(b["cpu.throttled_periods"]), 3u);
  bool v1_line = false;
  for (const auto& [k, v] : b)
    if (k.rfind("cgroup.", 0) == 0 && v.find("cpu") != std::string::npos && v.find(kIdB) != std::string::npos)
      v1_line = true;
  EXPECT_TRUE(v1_line) << "the v1 cpu line of /proc/PID/cgroup is not in the trace";

  // The report selects the trainer by pod UID from the trace alone, options
  // before the file, and names the culprit with its pod and throttling.
  ChildProcess report({GpunoiseBinary(), "report", "--json", "--focus", std::string("pod-uid:") + kUidA, out});
  ASSERT_EQ(report.Wait(60s), 0) << report.stderr_text();
  std::string json = report.stdout_text();
  EXPECT_NE(json.find("\"culprit_other_pod\": 1"), std::string::npos) << json;
  EXPECT_NE(json.find("runs in another pod (pod-uid " + std::string(kUidB) + "), whose cgroup was CPU-throttled in"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("gn-loader (pid " + std::to_string(loader) + ", pod-uid " + kUidB + ", container " +
                      std::string(kIdB).substr(0, 12)),
            std::string::npos)
      << json;
  ChildProcess wrong({GpunoiseBinary(), "report", "--focus", "pod-uid:00000000-0000-0000-0000-000000000000", out});
  EXPECT_NE(wrong.Wait(60s), 0);
  EXPECT_NE(wrong.stderr_text().find("no process of this trace matches"), std::string::npos) << wrong.stderr_text();

  // Perfetto's importer puts the labels on the process (the UI's details).
  std::string tp = FindTraceProcessor();
  if (tp.empty()) return;
  std::string query = dir + "/q.sql";
  std::ofstream(query) << "select group_concat(display_value, '|') as labels from process join args using(arg_set_id) "
                          "where process.pid = "
                       << trainer << " and key like 'chrome.process_label%';\n";
  ChildProcess shell({tp, "-q", query, out});
  ASSERT_EQ(shell.Wait(120s), 0) << shell.stderr_text();
  EXPECT_NE(shell.stdout_text().find(std::string("pod-uid ") + kUidA), std::string::npos) << shell.stdout_text();
  EXPECT_NE(shell.stdout_text().find(std::string("container ") + std::string(kIdA).substr(0, 12)),
            std::string::npos)
      << shell.stdout_text();
}

}  // namespace
}  // namespace gpunoise::testing
