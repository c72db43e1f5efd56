// Kernel log messages that matter on a GPU training node, by class: the ONE
// set of patterns that doctor, the report, the monitor and the black box
// use, and from which docs/deploy/node-problem-detector's kernel monitor
// config is generated (RenderNpdKernelMonitorConfig; a test keeps the
// checked-in file equal to it). Patterns stay in the regular-expression
// subset that ECMAScript (std::regex) and RE2 (node-problem-detector, Go)
// read alike, and match up to the end of the message as
// node-problem-detector's log buffer does (pattern + "$").
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace gpunoise::model {

enum class KernelLogClass : uint8_t {
  kNone = 0,
  kTxTimeout,         // NETDEV WATCHDOG, a driver's TX timeout
  kLinkDown,
  kLinkUp,
  kNicReset,
  kSoftLockup,
  kHardLockup,
  kRcuStall,
  kHungTask,
  kPageAllocFailure,
  kPcieAer,
  kMachineCheck,
  kThermal,
  kGpuXid,            // NVRM text (NVML's event API is the better source where present)
};
inline constexpr size_t kKernelLogClasses = 14;

enum class KernelLogSeverity : uint8_t { kInfo, kWarning, kSevere };

enum class KernelLogSource : uint8_t { kKmsg = 0, kConsole = 1, kBoth = 2 };
std::string_view KernelLogSourceName(KernelLogSource source);  // "kmsg", "console", "both"
std::optional<KernelLogSource> ParseKernelLogSource(std::string_view name);

struct KernelLogPattern {
  KernelLogClass cls;
  std::string_view name;      // "tx_timeout": metric label, JSON value
  std::string_view reason;    // "NetdevTxTimeout": node-problem-detector reason
  KernelLogSeverity severity;
  std::string_view pattern;   // the regular expression
  // Capture groups (1-based; 0: none) that name the device, the CPU and
  // the task the message is about.
  int device_group = 0, cpu_group = 0, task_group = 0;
  // Literals a matching text has at least one of ('|' between them):
  // checked before the regular expression, which most lines then skip.
  std::string_view literals;
};

std::span<const KernelLogPattern> KernelLogPatterns();
std::string_view KernelLogClassName(KernelLogClass cls);
const KernelLogPattern* FindKernelLogPattern(KernelLogClass cls);

struct KernelLogMatch {
  KernelLogClass cls = KernelLogClass::kNone;
  KernelLogSeverity severity = KernelLogSeverity::kInfo;
  std::string device;  // from the text ("eth0", "0000:3b:00.0"), if the pattern names one
  int cpu = -1;
  std::string task;
  explicit operator bool() const { return cls != KernelLogClass::kNone; }
};

// One kernel log record, as /dev/kmsg gives it (include/linux/printk.h,
// Documentation/ABI/testing/dev-kmsg), placed on the trace clock.
struct KernelLogEntry {
  uint64_t ts = 0;          // CLOCK_BOOTTIME ns (estimated from the record's local-clock usec)
  uint64_t seq = 0;
  uint64_t usec = 0;        // the kernel's own timestamp: local clock, not BOOTTIME
  uint8_t level = 6;        // 0 emerg .. 7 debug
  uint8_t facility = 0;     // 0 kernel; user writes to /dev/kmsg are 1
  std::string text;
  std::string subsystem;    // SUBSYSTEM= ("pci", "net")
  std::string device;       // DEVICE= ("+pci:0000:3b:00.0", "n3" for ifindex 3, "b8:0", "c1:3")
  KernelLogClass cls = KernelLogClass::kNone;
  std::string about;        // the device the message names (DEVICE= or its text)
  // Where the record comes from: /dev/kmsg alone (ts estimated, no caller),
  // the printk:console tracepoint alone (exact ts and caller; no level,
  // sequence number or DEVICE=), or both, matched (model/kernel_log_match.h).
  KernelLogSource source = KernelLogSource::kKmsg;
  // The caller of printk (console tracepoint): CPU, thread, its process and
  // name; -1 / empty when only /dev/kmsg had the record.
  int32_t cpu = -1;
  int32_t tid = -1, pid = -1;
  std::string comm;
};

// The first pattern that matches `text` (the message without the
// "PRIO,SEQ,USEC,FLAGS;" prefix), in table order.
KernelLogMatch ClassifyKernelLog(std::string_view text);

// The node-problem-detector kernel monitor (plugin "kmsg") config for the
// patterns: one temporary event per class.
std::string RenderNpdKernelMonitorConfig();

}  // namespace gpunoise::model
