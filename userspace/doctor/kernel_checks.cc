#include "doctor/kernel_checks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "common/strings.h"
#include "doctor/check_util.h"
#include "model/kernel_log.h"

namespace gpunoise::doctor {
namespace {

std::string_view TroubleName(LogTrouble t) {
  switch (t) {
    case LogTrouble::kNone: return "none";
    case LogTrouble::kTxTimeout: return "NETDEV WATCHDOG transmit timeout";
    case LogTrouble::kXid: return "NVIDIA Xid";
    case LogTrouble::kRcuStall: return "RCU stall";
    case LogTrouble::kSoftLockup: return "soft lockup";
    case LogTrouble::kHardLockup: return "hard lockup";
    case LogTrouble::kHungTask: return "hung task";
  }
  return "";
}

std::string Shorten(std::string_view text, size_t max = 160) {
  if (text.size() <= max) return std::string(text);
  return std::string(text.substr(0, max - 3)) + "...";
}

}  // namespace

const std::vector<std::string>& KernelCounterNames() {
  static const std::vector<std::string> kNames = {"softlockup_count", "hardlockup_count", "rcu_stall_count",
                                                  "warn_count", "oops_count"};
  return kNames;
}

bool IsHardwareXid(int xid) {
  // 48 double-bit ECC, 62 internal micro-controller halt, 64 page
  // retirement/row remap failure, 74 NVLink error, 79 fallen off the bus,
  // 92 high single-bit ECC rate, 95 uncontained ECC, 119/120 GSP errors.
  static constexpr int kHardware[] = {48, 62, 64, 74, 79, 92, 95, 119, 120};
  return std::find(std::begin(kHardware), std::end(kHardware), xid) != std::end(kHardware);
}

std::optional<KmsgRecord> ParseKmsgRecord(std::string_view line) {
  auto semi = line.find(';');
  if (semi == std::string_view::npos) return std::nullopt;
  auto fields = Split(line.substr(0, semi), ',');
  if (fields.size() < 3) return std::nullopt;
  auto prio = ParseInt64(fields[0]);
  auto usec = ParseUint64(fields[2]);
  if (!prio || !usec) return std::nullopt;
  KmsgRecord r;
  r.priority = static_cast<int>(*prio & 7);
  r.usec = *usec;
  r.text = std::string(line.substr(semi + 1));
  return r;
}

LogFinding ClassifyKernelLogLine(std::string_view text) {
  // The one table of kernel log patterns (model/kernel_log.h), shared with
  // the report, the monitor and the node-problem-detector config.
  model::KernelLogMatch m = model::ClassifyKernelLog(text);
  switch (m.cls) {
    case model::KernelLogClass::kTxTimeout: return {LogTrouble::kTxTimeout, -1, Verdict::kWarn};
    case model::KernelLogClass::kRcuStall: return {LogTrouble::kRcuStall, -1, Verdict::kWarn};
    case model::KernelLogClass::kSoftLockup: return {LogTrouble::kSoftLockup, -1, Verdict::kWarn};
    case model::KernelLogClass::kHardLockup: return {LogTrouble::kHardLockup, -1, Verdict::kFail};
    case model::KernelLogClass::kHungTask: return {LogTrouble::kHungTask, -1, Verdict::kWarn};
    case model::KernelLogClass::kGpuXid: {
      // "NVRM: Xid (PCI:0000:17:00): 79, pid=...": the code after the "): ".
      int xid = -1;
      if (auto colon = text.find("): ", text.find("Xid")); colon != std::string_view::npos) {
        std::string_view rest = text.substr(colon + 3);
        size_t digits = 0;
        while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
        if (auto n = ParseInt64(rest.substr(0, digits))) xid = static_cast<int>(*n);
      }
      return {LogTrouble::kXid, xid, IsHardwareXid(xid) ? Verdict::kFail : Verdict::kWarn};
    }
    default: return {};
  }
}

CheckResult CheckKernelCounters(const DoctorInputs& in) {
  const std::string id = "kernel.counters";
  const char* why = "lockups and RCU stalls mean CPUs stopped scheduling for seconds; a WARN or an oops leaves "
                    "the kernel in a state nobody tested, and a node that oopsed should not take jobs";
  const auto& last = in.Last().kernel_counters;
  if (last.empty())
    return Unknown(id, "no /sys/kernel/*_count files (kernel older than 6.2, or /sys/kernel unreadable)", why);
  CheckResult r;
  r.id = id;
  r.why = why;
  r.verdict = Verdict::kOk;
  std::vector<std::string> parts;
  for (const auto& name : KernelCounterNames()) {
    auto it = last.find(name);
    if (it == last.end()) continue;
    uint64_t grew = 0;
    if (in.HasGrowth()) {
      auto before = in.First().kernel_counters.find(name);
      if (before != in.First().kernel_counters.end() && it->second > before->second) grew = it->second - before->second;
    }
    std::string short_name = name.substr(0, name.size() - 6);  // drop "_count"
    parts.push_back(grew ? fmt::format("{} {} (+{} now)", short_name, it->second, grew)
                         : fmt::format("{} {}", short_name, it->second));
    if (it->second == 0) continue;
    bool severe = name == "oops_count" || name == "hardlockup_count" || grew > 0;
    r.verdict = Worse(r.verdict, severe ? Verdict::kFail : Verdict::kWarn);
  }
  r.saw = fmt::format("since boot: {}", fmt::join(parts, ", "));
  if (r.verdict != Verdict::kOk)
    r.fix = "read why in dmesg -T (grep -iE 'lockup|stall|WARNING|Oops'); reboot the node, and check its hardware "
            "and firmware if it recurs";
  return r;
}

CheckResult CheckHungTasks(const DoctorInputs& in) {
  const std::string id = "kernel.hung_tasks";
  const char* why = "a task stuck in uninterruptible sleep for minutes (a dead NFS server, a hung GPU driver "
                    "call) blocks whatever waits on it, often the training process itself";
  auto count = in.view->ReadInt("/proc/sys/kernel/hung_task_detect_count");
  size_t log_lines = 0;
  if (in.kernel_log.ok())
    for (const auto& line : *in.kernel_log)
      if (auto rec = ParseKmsgRecord(line); rec && ClassifyKernelLogLine(rec->text).kind == LogTrouble::kHungTask)
        ++log_lines;
  if (!count && !in.kernel_log.ok())
    return Unknown(id,
                   "no /proc/sys/kernel/hung_task_detect_count (kernel without the hung task detector) and "
                   "kernel log unreadable: " + in.kernel_log.error().message,
                   why);
  CheckResult r;
  r.id = id;
  r.why = why;
  std::string timeout = in.view->ReadTrimmed("/proc/sys/kernel/hung_task_timeout_secs").value_or("?");
  r.saw = count ? fmt::format("hung_task_detect_count {} (timeout {} s), {} 'blocked for more than' log records",
                              *count, timeout, log_lines)
                : fmt::format("{} 'blocked for more than' kernel log records (no hung_task_detect_count)", log_lines);
  if ((count && *count > 0) || log_lines > 0) {
    r.verdict = Verdict::kWarn;
    r.fix = "dmesg -T | grep -A20 'blocked for more than' shows the stuck task and its stack; fix or fence what it "
            "waits on";
  } else {
    r.verdict = Verdict::kOk;
  }
  return r;
}

CheckResult CheckKernelLog(const DoctorInputs& in) {
  const std::string id = "kernel.log";
  const char* why = "the kernel log names trouble the counters do not: NIC transmit timeouts, GPU Xid errors "
                    "(79: fallen off the bus, 48/94/95: ECC), RCU stalls";
  if (!in.kernel_log.ok()) return Unknown(id, "kernel log unreadable: " + in.kernel_log.error().message, why);
  std::optional<uint64_t> since_usec;
  if (in.log_since_ns && in.uptime_s) {
    double now_usec = *in.uptime_s * 1e6;
    double window = static_cast<double>(*in.log_since_ns) / 1e3;
    since_usec = now_usec > window ? static_cast<uint64_t>(now_usec - window) : 0;
  }
  std::map<std::string, size_t> counts;
  std::vector<std::string> samples;
  std::map<int, size_t> xids;
  Verdict worst = Verdict::kOk;
  size_t records = 0;
  for (const auto& line : *in.kernel_log) {
    auto rec = ParseKmsgRecord(line);
    if (!rec) continue;
    if (since_usec && rec->usec < *since_usec) continue;
    ++records;
    LogFinding f = ClassifyKernelLogLine(rec->text);
    if (f.kind == LogTrouble::kNone) continue;
    worst = Worse(worst, f.verdict);
    ++counts[std::string(TroubleName(f.kind))];
    if (f.kind == LogTrouble::kXid) ++xids[f.xid];
    samples.push_back(fmt::format("[{:.1f}] {}", static_cast<double>(rec->usec) / 1e6, Shorten(rec->text)));
  }
  CheckResult r;
  r.id = id;
  r.why = why;
  r.verdict = worst;
  std::string window = since_usec ? fmt::format(" from the last {:.0f} s", static_cast<double>(*in.log_since_ns) / 1e9)
                                  : std::string();
  if (counts.empty()) {
    r.saw = fmt::format("{} kernel log records{}; none names a transmit timeout, Xid, RCU stall, lockup or hung task",
                        records, window);
    return r;
  }
  std::vector<std::string> parts;
  for (const auto& [name, n] : counts) {
    if (name == TroubleName(LogTrouble::kXid)) {
      std::vector<std::string> codes;
      for (const auto& [xid, n2] : xids) codes.push_back(fmt::format("{} x{}", xid, n2));
      parts.push_back(fmt::format("{} {} ({})", n, name, fmt::join(codes, ", ")));
    } else {
      parts.push_back(fmt::format("{} {}", n, name));
    }
  }
  r.saw = fmt::format("{} in {} kernel log records{}; last: {}", fmt::join(parts, ", "), records, window,
                      samples.back());
  // Keep the most recent few as evidence.
  size_t keep = std::min<size_t>(samples.size(), 10);
  r.details.assign(samples.end() - static_cast<std::ptrdiff_t>(keep), samples.end());
  r.fix = "dmesg -T shows the context; hardware Xids (48, 62, 64, 74, 79, 92, 95, 119, 120): drain the node and "
          "reset or service the GPU; transmit timeouts: update NIC firmware/driver";
  return r;
}

}  // namespace gpunoise::doctor
