#include "collect/proc_scanner.h"

#include <unistd.h>

#include "common/clock.h"
#include "common/files.h"
#include "common/strings.h"

namespace gpunoise::collect {
namespace {

std::string ReadComm(const std::string& dir) {
  auto comm = ReadFileToString(dir + "/comm");
  return comm.ok() ? std::string(Trim(*comm)) : std::string();
}

}  // namespace

model::ProcessSnapshot ScanProcesses(const std::string& proc_root) {
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
      } else if (StartsWith(line, "Name:")) p.comm = std::string(Trim(line.substr(5)));
    }
    auto cmdline = ReadFileToString(dir + "/cmdline");
    if (cmdline.ok() && !cmdline->empty()) {
      std::string_view rest = *cmdline;
      if (rest.back() == '\0') rest.remove_suffix(1);
      for (std::string_view arg : Split(rest, '\0')) p.cmdline.emplace_back(arg);
    }
    // Kernel threads have no command line and are children of kthreadd (2).
    p.is_kthread = p.cmdline.empty() && (p.ppid == 2 || p.pid == 2);
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
        snap.threads.push_back(std::move(th));
      }
    }
    snap.processes.push_back(std::move(p));
  }
  snap.ts = BoottimeNs();
  return snap;
}

}  // namespace gpunoise::collect
