// Kernel health: lockup, RCU stall, warn and oops counters, hung tasks, and
// kernel log records that name known trouble (NETDEV WATCHDOG transmit
// timeouts, NVIDIA Xid errors, RCU stalls, lockups, hung tasks).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "doctor/check_result.h"
#include "doctor/doctor_inputs.h"

namespace gpunoise::doctor {

// The /sys/kernel/*_count files (kernels 6.2+ for warn/oops, 6.7+ for the rest).
const std::vector<std::string>& KernelCounterNames();

CheckResult CheckKernelCounters(const DoctorInputs& in);  // kernel.counters
CheckResult CheckHungTasks(const DoctorInputs& in);       // kernel.hung_tasks
CheckResult CheckKernelLog(const DoctorInputs& in);       // kernel.log

// One kmsg record: "PRIO,SEQ,USEC,FLAGS;TEXT".
struct KmsgRecord {
  int priority = 0;  // syslog level (facility stripped)
  uint64_t usec = 0; // since boot
  std::string text;
};
std::optional<KmsgRecord> ParseKmsgRecord(std::string_view line);

enum class LogTrouble { kNone, kTxTimeout, kXid, kRcuStall, kSoftLockup, kHardLockup, kHungTask };
struct LogFinding {
  LogTrouble kind = LogTrouble::kNone;
  int xid = -1;  // for kXid
  Verdict verdict = Verdict::kOk;
};
// What a kernel log line says, if anything doctor knows.
LogFinding ClassifyKernelLogLine(std::string_view text);
// Xid codes that mean failing hardware (the GPU needs a reset or service)
// rather than an application fault (NVIDIA's Xid catalog).
bool IsHardwareXid(int xid);

}  // namespace gpunoise::doctor
