#include "collect/proc_scanner.h"

#include <unistd.h>

#include <mutex>

#include "collect/environ_identity.h"
#include "collect/crictl_pods.h"
#include "collect/kubelet_pods.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/log.h"
#include "common/strings.h"

namespace gpunoise::collect {
namespace {

std::string ReadComm(const std::string& dir) {
  auto comm = ReadFileToString(dir + "/comm");
  return comm.ok() ? std::string(Trim(*comm)) : std::string();
}

// "NSpid:\t8000\t1": the id in each pid namespace, the host's first.
std::vector<int32_t> ParseNsIds(std::string_view value) {
  std::vector<int32_t> ids;
  for (std::string_view f : Split(Trim(value), '\t'))
    if (auto n = ParseInt64(Trim(f))) ids.push_back(static_cast<int32_t>(*n));
  return ids;
}

}  // namespace

uint64_t ReadPidNsInode(const std::string& proc_pid_dir) {
  // "pid:[4026531836]"
  char buf[64];
  ssize_t n = ::readlink((proc_pid_dir + "/ns/pid").c_str(), buf, sizeof(buf) - 1);
  if (n <= 0) return 0;
  std::string_view link(buf, static_cast<size_t>(n));
  auto open = link.find('['), close = link.rfind(']');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return 0;
  return ParseUint64(link.substr(open + 1, close - open - 1)).value_or(0);
}

std::vector<int32_t> ReadNsTids(const std::string& proc_task_dir) {
  auto status = ReadFileToString(proc_task_dir + "/status");
  if (!status.ok()) return {};
  for (std::string_view line : Split(*status, '\n'))
    if (StartsWith(line, "NSpid:")) return ParseNsIds(line.substr(6));
  return {};
}

namespace {

}  // namespace

model::ProcessSnapshot ScanProcesses(const std::string& proc_root, const std::string& kubelet_log_root) {
  model::ProcessSnapshot snap;
  static const long kTicksPerSecond = ::sysconf(_SC_CLK_TCK);
  auto entries = ListDirectory(proc_root);
  if (!entries.ok()) return snap;
  for (const std::string& name : *entries) {
    auto pid = ParseInt64(name);
    if (!pid) continue;
    std::string dir = proc_root + "/" + name;
    auto status = ReadFileToString(dir + "/status");
    if (!status.ok()) continue;  // exited meanwhile
    model::ProcessInfo p;
    p.pid = static_cast<int32_t>(*pid);
    for (std::string_view line : Split(*status, '\n')) {
      if (StartsWith(line, "PPid:")) p.ppid = static_cast<int32_t>(ParseInt64(line.substr(5)).value_or(0));
      else if (StartsWith(line, "Uid:")) {
        auto fields = Split(Trim(line.substr(4)), '\t');
        if (!fields.empty()) p.uid = static_cast<int32_t>(ParseInt64(fields[0]).value_or(-1));
      } else if (StartsWith(line, "Name:")) {
        p.comm = std::string(Trim(line.substr(5)));
      } else if (StartsWith(line, "NSpid:")) {
        p.identity.nspid = ParseNsIds(line.substr(6));
      }
    }
    p.identity.pid = p.pid;
    // Only processes inside a pid namespace of their own cost the readlink
    // and, below, a status read per thread.
    bool in_ns = p.identity.nspid.size() > 1;
    if (in_ns) p.identity.pid_ns = ReadPidNsInode(dir);
    auto cmdline = ReadFileToString(dir + "/cmdline");
    if (cmdline.ok() && !cmdline->empty()) {
      std::string_view rest = *cmdline;
      if (rest.back() == '\0') rest.remove_suffix(1);
      for (std::string_view arg : Split(rest, '\0')) p.cmdline.emplace_back(arg);
    }
    // Kernel threads have no command line and are children of kthreadd (2).
    p.is_kthread = p.cmdline.empty() && (p.ppid == 2 || p.pid == 2);
    // Its cgroups (container, pod, SLURM job) and its rank and job.
    if (!p.is_kthread) ReadProcessIdentity(dir, &p.identity);
    auto stat = ReadFileToString(dir + "/stat");
    if (stat.ok()) {
      // Field 22 (starttime, clock ticks since boot) comes after the
      // parenthesised comm, which may itself contain spaces.
      auto close = stat->rfind(')');
      if (close != std::string::npos) {
        auto fields = Split(std::string_view(*stat).substr(close + 2), ' ');
        if (fields.size() > 19) {
          if (auto ticks = ParseUint64(fields[19]))
            p.start_from_boot_ns = *ticks * (1000000000ull / static_cast<uint64_t>(kTicksPerSecond));
        }
      }
    }
    auto tasks = ListDirectory(dir + "/task");
    if (tasks.ok()) {
      for (const std::string& t : *tasks) {
        auto tid = ParseInt64(t);
        if (!tid) continue;
        model::ThreadInfo th;
        th.tid = static_cast<int32_t>(*tid);
        th.tgid = p.pid;
        th.name = ReadComm(dir + "/task/" + t);
        if (th.name.empty() && th.tid == p.pid) th.name = p.comm;
        if (in_ns) th.nstid = th.tid == p.pid ? p.identity.nspid : ReadNsTids(dir + "/task/" + t);
        snap.threads.push_back(std::move(th));
      }
    }
    snap.processes.push_back(std::move(p));
  }
  KubeletPods pods = KubeletPods::Read(kubelet_log_root);
  // crictl, where the node has it, names what the log tree does not (a
  // pod whose logs were rotated away, a runtime that logs elsewhere).
  if (Status crictl = AddCrictlNames(&pods); !crictl.ok()) {
    static std::once_flag said;
    std::call_once(said, [&] { log::Warning("pod names from crictl: {}", crictl.error().message); });
  }
  pods.Name(&snap);
  snap.ts = BoottimeNs();
  return snap;
}

}  // namespace gpunoise::collect
