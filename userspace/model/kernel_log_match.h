// The kernel log from its two sources, made one: each printk:console
// tracepoint record (exact trace-clock time, CPU and task of the printk;
// text only) is matched to its /dev/kmsg record (level, facility, sequence
// number, DEVICE=/SUBSYSTEM=; a local-clock time in microseconds) by text
// and order, within a time window. A message gets both halves; what only
// one source had stays, marked by its source and counted, never dropped.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/kernel_log.h"

namespace gpunoise::model {

// One printk:console event (bpf/console.h).
struct ConsoleRecord {
  uint64_t ts = 0;  // CLOCK_BOOTTIME ns at the printk
  uint32_t cpu = 0;
  int32_t tid = 0, pid = 0;  // 0: the idle task (an interrupt on an idle CPU)
  std::string comm;
  std::string text;  // possibly cut: the first bytes of a `len`-byte message
  uint32_t len = 0;
  bool cut() const { return text.size() < len; }
};

struct KernelLogMatchStats {
  uint64_t matched = 0;            // kmsg records that got a console record's time and caller
  uint64_t continuations = 0;      // pr_cont() fragments folded into the record they continue
  uint64_t kmsg_unmatched = 0;     // kmsg records no console record matched (their estimated time kept)
  uint64_t console_unmatched = 0;  // console records no kmsg record matched (kept: no level, seq, DEVICE=)
};

// How far apart the two clocks may place one message by default: the kmsg
// time is the kernel's local clock moved onto BOOTTIME by one anchor
// (collect/kmsg_reader.h), good to microseconds on a node that never
// suspended; the window only has to tell repeated messages apart, and the
// order does most of that.
inline constexpr uint64_t kKernelLogMatchWindowNs = 1'000'000'000;

// `kmsg` in sequence order (as read), `console` in any order. Returns every
// message once, in time order: matched ones at the console record's time
// with its caller (source kBoth), the rest with what their source had.
std::vector<KernelLogEntry> MergeKernelLog(std::vector<KernelLogEntry> kmsg, std::vector<ConsoleRecord> console,
                                           uint64_t window_ns, KernelLogMatchStats* stats);

}  // namespace gpunoise::model
