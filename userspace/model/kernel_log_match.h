// The kernel log from its two sources, made one: each printk:console
// tracepoint record (exact trace-clock time, CPU and task of the printk;
// text only) is matched to its /dev/kmsg record (level, facility, sequence
// number, DEVICE=/SUBSYSTEM=; a local-clock time in microseconds) by text
// and order, within a time window. A message gets both halves; what only
// one source had stays, marked by its source and counted, never dropped.
#pragma once

#include <cstdint>
#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>
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
// (KernelLogMatcher fed once and taken once.)
std::vector<KernelLogEntry> MergeKernelLog(std::vector<KernelLogEntry> kmsg, std::vector<ConsoleRecord> console,
                                           uint64_t window_ns, KernelLogMatchStats* stats);

// The same matching while a recording runs: records are added as they are
// read, and Take() hands out every message that nothing read later can
// change or come before, so a recording holds about three windows of the
// log, however long it runs. The messages handed out over all calls are
// exactly MergeKernelLog's result for all the records, in the same order,
// provided each Take(complete_to) comes after every record (of either
// source) with a time before complete_to was added.
class KernelLogMatcher {
 public:
  explicit KernelLogMatcher(uint64_t window_ns) : window_ns_(window_ns) {}

  void AddKmsg(std::vector<KernelLogEntry> entries);   // sequence order
  void AddConsole(std::vector<ConsoleRecord> records);  // any order
  // Messages that are final, in time order; complete_to = UINT64_MAX at
  // the end hands out the rest.
  std::vector<KernelLogEntry> Take(uint64_t complete_to);

  const KernelLogMatchStats& stats() const { return stats_; }
  size_t held() const { return kmsg_.size() + console_.size() + out_.size(); }  // records in memory

 private:
  using Key = std::pair<uint64_t, uint64_t>;  // time, arrival: the order a stable sort gives
  struct Slot {
    ConsoleRecord record;
    bool used = false;
  };
  struct Out {
    KernelLogEntry entry;
    uint64_t key = 0;  // kmsg first (sequence order), then console-only ones (arrival order)
  };
  // Console records by their text's first kIndexBytes (all of it when
  // shorter): a kmsg record looks up each prefix of its own text instead of
  // scanning every record of the window (a burst holds tens of thousands).
  static constexpr size_t kIndexBytes = 64;
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  static std::string_view IndexKey(std::string_view text) { return text.substr(0, std::min(text.size(), kIndexBytes)); }
  void Unindex(const Key& key, const Slot& slot);
  void Decide(KernelLogEntry k);
  // Console records no kmsg record left can match (the front of the time
  // order, as MergeKernelLog's window start passes them): used ones go,
  // unused ones become console-only messages. `all`: the end.
  void Retire(uint64_t before_ts, bool all);

  uint64_t window_ns_;
  std::deque<KernelLogEntry> kmsg_;  // undecided, sequence order
  std::map<Key, Slot> console_;      // time order
  std::unordered_map<std::string, std::set<Key>, Hash, std::equal_to<>> index_;  // unused ones only
  std::vector<Out> out_;             // decided, not yet handed out
  uint64_t next_kmsg_key_ = 0, next_console_order_ = 0;
  KernelLogMatchStats stats_;
};

}  // namespace gpunoise::model
