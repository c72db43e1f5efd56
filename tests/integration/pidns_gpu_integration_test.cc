// GPU capture of a process in its own pid namespace (a container without a
// container runtime: unshare(1)), recorded from the host with --gpu-dir:
// the library writes the namespace's ids, the recorder translates them with
// what the kernel's fork records and /proc told it, and every launch lands
// on the host thread the scheduling data has for it. Threads: the main
// thread and a worker that exist before the recording (mapped from /proc),
// one created during it and one that exits before the next flush (mapped
// from the fork records). A fragment from a namespace never seen is counted
// and kept off every thread.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <thread>

#include "export/perfetto/trace_view.h"
#include "integration/support/privileges.h"
#include "integration/support/trace_reader.h"
#include "integration/support/workloads.h"
#include "model/gpu_capture.h"

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;

constexpr uint64_t kUnseenNamespace = 4026500001;  // below any inode the kernel hands out here

struct RemoveWhenDone {
  std::string dir;
  ~RemoveWhenDone() { std::system(("rm -rf '" + dir + "'").c_str()); }
};

class ScopedEnv {
 public:
  void Set(const std::string& key, const std::string& value) {
    keys_.push_back(key);
    setenv(key.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    for (const auto& k : keys_) unsetenv(k.c_str());
  }

 private:
  std::vector<std::string> keys_;
};

bool HaveUnshare() { return std::system("unshare --pid --fork --mount-proc true >/dev/null 2>&1") == 0; }

uint64_t BoottimeNs() {
  timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// A fragment as a library inside a namespace nobody saw would write it.
void WriteUnseenFragment(const std::string& dir) {
  perfetto::Trace t;
  auto* p = t.add_packet();
  p->set_trusted_packet_sequence_id(1);
  p->mutable_track_descriptor()->set_uuid(0xfeed01);
  p->mutable_track_descriptor()->mutable_process()->set_pid(1);
  auto* th = t.add_packet();
  th->set_trusted_packet_sequence_id(1);
  th->mutable_track_descriptor()->set_uuid(0xfeed02);
  th->mutable_track_descriptor()->mutable_thread()->set_pid(1);
  th->mutable_track_descriptor()->mutable_thread()->set_tid(2);
  uint64_t now = BoottimeNs();
  auto* e = t.add_packet();
  e->set_trusted_packet_sequence_id(1);
  e->set_timestamp(now - 1000);
  e->mutable_track_event()->set_track_uuid(0xfeed02);
  e->mutable_track_event()->set_type(perfetto::TrackEvent::TYPE_INSTANT);
  e->mutable_track_event()->set_name("unseen launch");
  std::string path = dir + "/" + model::FragmentFileName(1, now, kUnseenNamespace);
  std::ofstream(path, std::ios::binary) << t.SerializeAsString();
  chmod(path.c_str(), 0600);
}

void RunInNamespace(bool nested) {
  GN_REQUIRE_REAL_EBPF();
  if (!HaveUnshare()) GTEST_SKIP() << "unshare --pid --fork --mount-proc does not work here";
  std::string dir = MakeTempDir();
  RemoveWhenDone cleanup{dir};
  std::string frag_dir = dir + "/fragments", go = dir + "/go", out = dir + "/ns.pftrace";
  ChildProcess env_cmd({GpunoiseBinary(), "env", frag_dir, "--flush-ms", "100"});
  ASSERT_EQ(env_cmd.Wait(10s), 0) << env_cmd.stderr_text();
  std::string exports = env_cmd.stdout_text();
  ScopedEnv env;
  std::regex line(R"(export (\w+)='([^']*)')");
  for (std::sregex_iterator it(exports.begin(), exports.end(), line), e; it != e; ++it)
    env.Set((*it)[1], (*it)[2]);
  env.Set(model::kCuptiPathEnv, FAKE_CUPTI_LIB);

  std::vector<std::string> argv = {"unshare", "--pid", "--fork", "--mount-proc"};
  if (nested) argv.insert(argv.end(), {"unshare", "--pid", "--fork", "--mount-proc"});
  argv.insert(argv.end(), {FAKE_CUDA_APP, "--seconds", "2.5", "--threads", "1", "--late-ms", "300",
                           "--short-ms", "200", "--go-file", go});
  // Main thread and worker exist before the recording starts.
  ChildProcess app(argv);
  std::this_thread::sleep_for(700ms);
  ChildProcess rec({GpunoiseBinary(), "record", "-d", "5", "--gpu-dir", frag_dir, "-o", out});
  ASSERT_TRUE(rec.WaitForStderr("recording", 30s)) << rec.stderr_text();
  std::ofstream(go) << "go";  // the late and the short-lived thread start now
  ASSERT_EQ(app.Wait(30s), 0) << app.stderr_text();
  WriteUnseenFragment(frag_dir);
  int rc = rec.Wait(60s);
  std::string rec_err = rec.stderr_text();
  ASSERT_EQ(rc, 0) << rec_err;

  // What each thread's own gettid() said, inside its namespace.
  std::map<std::string, int32_t> ns_tid;
  std::string app_out = app.stdout_text();
  std::regex announce(R"(thread (\S+) tid (\d+))");
  for (std::sregex_iterator it(app_out.begin(), app_out.end(), announce), e; it != e; ++it)
    ns_tid[(*it)[1]] = std::stoi((*it)[2]);
  const std::vector<std::string> names = {"fake_cuda_app", "gn-worker-0", "gn-late", "gn-short"};
  for (const auto& n : names) ASSERT_TRUE(ns_tid.count(n)) << n << " not announced: " << app_out;
  EXPECT_EQ(ns_tid["fake_cuda_app"], 1);  // the namespace's init

  std::string error;
  auto trace = ReadTrace(out, &error);
  ASSERT_TRUE(trace) << error;
  TraceView v(*trace);
  ASSERT_TRUE(v.parsed());

  // The app's host pid, from the process tree's namespace ids.
  int32_t host_pid = 0;
  for (const auto& p : trace->packet()) {
    if (!p.has_process_tree()) continue;
    for (const auto& proc : p.process_tree().processes()) {
      if (proc.cmdline_size() == 0 || proc.cmdline(0).find("fake_cuda_app") == std::string::npos) continue;
      ASSERT_EQ(proc.nspid_size(), nested ? 3 : 2);
      EXPECT_EQ(proc.nspid(0), proc.pid());
      EXPECT_EQ(proc.nspid(proc.nspid_size() - 1), 1);
      host_pid = proc.pid();
    }
  }
  ASSERT_GT(host_pid, 1) << "no fake_cuda_app with namespace ids in the process tree";

  // Host tids by name, from what the kernel side recorded of them: the
  // process tree, switch-ins and renames (the short-lived thread may never
  // be switched in under its new name).
  std::map<std::string, std::set<int32_t>> host_tids;
  for (const auto& p : trace->packet())
    if (p.has_process_tree())
      for (const auto& th : p.process_tree().threads())
        if (th.tgid() == host_pid) host_tids[th.name()].insert(th.tid());
  for (const auto& s : CompactSwitches(*trace)) host_tids[s.next_comm].insert(s.next_pid);
  for (const auto* ev : FtraceEvents(*trace))
    if (ev->has_task_rename()) host_tids[ev->task_rename().newcomm()].insert(ev->task_rename().pid());
  std::map<int32_t, std::string> name_of;
  for (const auto& n : names) {
    ASSERT_FALSE(host_tids[n].empty()) << n << " is not in the kernel-side data";
    for (int32_t tid : host_tids[n]) name_of[tid] = n;
  }

  // Every thread track of the app is on a host tid of one of its threads,
  // and every launch flow starts there.
  std::map<std::string, size_t> launches_by_name;
  for (const auto& [uuid, d] : v.tracks()) {
    if (!d->has_thread() || d->thread().pid() != host_pid) continue;
    int32_t tid = d->thread().tid();
    ASSERT_TRUE(name_of.count(tid)) << "thread track on tid " << tid << ", which is no thread of the app";
    const std::string& n = name_of[tid];
    EXPECT_NE(tid, ns_tid[n]) << n << ": the host tid equals the namespace's";
    for (const auto& s : v.SlicesOn(uuid))
      if (!s.flows.empty()) ++launches_by_name[n];
  }
  for (const auto& n : names) EXPECT_GT(launches_by_name[n], 0u) << "no launch flow on " << n;
  // Nothing of the app was left on namespace-local ids.
  for (const auto& [uuid, d] : v.tracks())
    if (d->has_thread()) {
      EXPECT_NE(d->thread().pid(), 1) << "a thread track kept the namespace's pid";
    }

  // The recorder's accounting, in the trace and on stderr: the app mapped,
  // the unseen namespace counted and its track bound to nothing.
  auto loss = TrackEventArgs(*trace, "gpunoise GPU collection");
  ASSERT_EQ(loss.size(), 1u);
  EXPECT_EQ(loss[0]["gpu.pidns.processes_translated"], "1");
  EXPECT_EQ(loss[0]["gpu.pidns.processes_unmapped"], "1");
  EXPECT_EQ(loss[0]["gpu.pidns.threads_unmapped"], "1");
  EXPECT_NE(rec_err.find("pid 1 in pid namespace " + std::to_string(kUnseenNamespace)), std::string::npos)
      << rec_err;
  bool unbound = false;
  for (const auto& name : TrackNames(*trace))
    if (name.find("in pid namespace " + std::to_string(kUnseenNamespace)) != std::string::npos) unbound = true;
  EXPECT_TRUE(unbound);

  // The report says so in its loss lines.
  ChildProcess report({GpunoiseBinary(), "report", out});
  EXPECT_EQ(report.Wait(60s), 0) << report.stderr_text();
  EXPECT_NE(report.stdout_text().find("1 process and 1 thread in pid namespaces with no host task known"),
            std::string::npos)
      << report.stdout_text();
}

TEST(PidNamespaceGpu, LaunchFlowsStartOnTheHostThreadsOfAContainerizedProcess) { RunInNamespace(false); }

// CUPTI allows one client: with torch.profiler (or Nsight) already in the
// process, the library stays out and the recorder names the process.
TEST(CuptiSubscriber, AnotherClientKeepsCaptureOffAndTheRecorderSaysWhichProcess) {
  GN_REQUIRE_REAL_EBPF();
  std::string dir = MakeTempDir();
  RemoveWhenDone cleanup{dir};
  std::string out = dir + "/taken.pftrace";
  ScopedEnv env;
  env.Set(model::kCuptiPathEnv, FAKE_CUPTI_LIB);
  env.Set("FAKE_CUPTI_OTHER_SUBSCRIBER", "1");
  ChildProcess rec({GpunoiseBinary(), "record", "-d", "20", "-o", out, "--", FAKE_CUDA_APP, "--seconds", "0.5"});
  int rc = rec.Wait(60s);
  std::string err = rec.stderr_text();
  ASSERT_EQ(rc, 0) << err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(err, m, std::regex(R"(fake_cuda_app \(pid (\d+)\))"))) << err;
  std::string pid = m[1];
  // The program's own line, and the recorder's.
  EXPECT_NE(err.find("GPU capture off: another CUPTI client already runs in this process"), std::string::npos) << err;
  EXPECT_NE(err.find("GPU capture of pid " + pid + ": another CUPTI client"), std::string::npos) << err;
  std::string error;
  auto trace = ReadTrace(out, &error);
  ASSERT_TRUE(trace) << error;
  auto loss = TrackEventArgs(*trace, "gpunoise GPU collection");
  ASSERT_EQ(loss.size(), 1u);
  EXPECT_EQ(loss[0]["gpu.processes_not_captured"], "1");
  TraceView v(*trace);
  EXPECT_FALSE(v.SliceNamed("busy()")) << "nothing of CUPTI's was taken";
  ChildProcess report({GpunoiseBinary(), "report", out});
  EXPECT_EQ(report.Wait(60s), 0) << report.stderr_text();
  EXPECT_NE(report.stdout_text().find("1 process not captured (another CUPTI client"), std::string::npos)
      << report.stdout_text();
}

TEST(PidNamespaceGpu, NestedNamespacesMapToHostThreadsToo) { RunInNamespace(true); }

}  // namespace
}  // namespace gpunoise::testing
