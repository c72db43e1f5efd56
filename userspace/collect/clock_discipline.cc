#include "collect/clock_discipline.h"

#include <sys/timex.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <string_view>

#include "common/files.h"

namespace gpunoise::collect {
namespace {

constexpr std::string_view kClockDaemons[] = {"chronyd", "ntpd", "ptp4l", "phc2sys"};

// Sorted, so the trace lists PTP clocks in a stable order; empty when the
// directory is absent (no PTP clocks, or no /sys).
std::vector<std::string> ListDir(const std::string& dir) {
  auto names = ListDirectory(dir);
  if (!names.ok()) return {};
  std::sort(names->begin(), names->end());
  return std::move(*names);
}

std::string Trimmed(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

}  // namespace

model::ClockDiscipline ReadClockDiscipline(const std::string& proc, const std::string& sys_ptp) {
  model::ClockDiscipline c;
  timex tx{};  // modes 0: read only
  int state = ::adjtimex(&tx);
  if (state != -1) {
    c.read = true;
    c.synced = !(tx.status & STA_UNSYNC) && state != TIME_ERROR;
    c.maxerror_us = tx.maxerror;
    c.esterror_us = tx.esterror;
    // With STA_NANO the offset is in nanoseconds, else microseconds.
    c.offset_ns = (tx.status & STA_NANO) ? tx.offset : tx.offset * 1000;
  }
  std::set<std::string> daemons;
  for (const auto& pid : ListDir(proc)) {
    if (pid.empty() || !std::all_of(pid.begin(), pid.end(), ::isdigit)) continue;
    auto comm = ReadFileToString(proc + "/" + pid + "/comm");
    if (!comm.ok()) continue;  // the process has exited
    std::string name = Trimmed(*comm);
    for (auto d : kClockDaemons)
      if (name == d) daemons.insert(name);
  }
  c.daemons.assign(daemons.begin(), daemons.end());
  for (const auto& ptp : ListDir(sys_ptp)) {
    auto name = ReadFileToString(sys_ptp + "/" + ptp + "/clock_name");
    c.ptp_clocks.push_back(name.ok() ? ptp + " (" + Trimmed(*name) + ")" : ptp);
  }
  return c;
}

}  // namespace gpunoise::collect
