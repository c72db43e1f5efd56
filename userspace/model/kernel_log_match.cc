#include "model/kernel_log_match.h"

#include <algorithm>

namespace gpunoise::model {
namespace {

bool StartsAt(const std::string& text, size_t pos, const std::string& part) {
  return pos <= text.size() && text.size() - pos >= part.size() && text.compare(pos, part.size(), part) == 0;
}

uint64_t Distance(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

}  // namespace

std::vector<KernelLogEntry> MergeKernelLog(std::vector<KernelLogEntry> kmsg, std::vector<ConsoleRecord> console,
                                           uint64_t window_ns, KernelLogMatchStats* stats) {
  KernelLogMatchStats local;
  KernelLogMatchStats& st = stats ? *stats : local;
  std::stable_sort(console.begin(), console.end(),
                   [](const ConsoleRecord& a, const ConsoleRecord& b) { return a.ts < b.ts; });
  std::vector<bool> used(console.size(), false);
  size_t lo = 0;
  std::vector<size_t> fragments;
  for (KernelLogEntry& k : kmsg) {
    // Records left behind by the window are not candidates for this or any
    // later kmsg record (unless the kmsg clock runs backwards; then they
    // stay unmatched, and counted).
    while (lo < console.size() && (used[lo] || console[lo].ts + window_ns < k.ts)) ++lo;
    for (size_t i = lo; i < console.size() && console[i].ts <= k.ts + window_ns; ++i) {
      const ConsoleRecord& c = console[i];
      if (used[i] || Distance(c.ts, k.ts) > window_ns || !StartsAt(k.text, 0, c.text)) continue;
      fragments.clear();
      if (c.len != k.text.size()) {
        // The first piece of a record pr_cont() continued: the following
        // pieces come from the same task, in order, and must make it whole.
        if (c.cut() || c.len > k.text.size()) continue;
        size_t pos = c.len;
        for (size_t j = i + 1; j < console.size() && pos < k.text.size() && console[j].ts <= k.ts + window_ns; ++j) {
          const ConsoleRecord& f = console[j];
          if (used[j] || f.tid != c.tid || f.cpu != c.cpu) continue;
          if (!StartsAt(k.text, pos, f.text) || f.len > k.text.size() - pos) continue;
          if (f.cut() && f.len != k.text.size() - pos) continue;
          fragments.push_back(j);
          pos += f.len;
        }
        if (pos != k.text.size()) continue;
      }
      used[i] = true;
      for (size_t j : fragments) used[j] = true;
      st.continuations += fragments.size();
      ++st.matched;
      k.source = KernelLogSource::kBoth;
      k.ts = c.ts;
      k.cpu = static_cast<int32_t>(c.cpu);
      k.tid = c.tid;
      k.pid = c.pid;
      k.comm = c.comm;
      break;
    }
    if (k.source != KernelLogSource::kBoth) ++st.kmsg_unmatched;
  }
  for (size_t i = 0; i < console.size(); ++i) {
    if (used[i]) continue;
    ++st.console_unmatched;
    ConsoleRecord& c = console[i];
    KernelLogEntry e;
    e.source = KernelLogSource::kConsole;
    e.ts = c.ts;
    e.cpu = static_cast<int32_t>(c.cpu);
    e.tid = c.tid;
    e.pid = c.pid;
    e.comm = std::move(c.comm);
    e.text = std::move(c.text);
    KernelLogMatch m = ClassifyKernelLog(e.text);
    e.cls = m.cls;
    e.about = m.device;
    kmsg.push_back(std::move(e));
  }
  std::stable_sort(kmsg.begin(), kmsg.end(),
                   [](const KernelLogEntry& a, const KernelLogEntry& b) { return a.ts < b.ts; });
  return kmsg;
}

}  // namespace gpunoise::model
