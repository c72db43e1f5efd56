#include "model/kernel_log_match.h"

#include <algorithm>
#include <limits>

namespace gpunoise::model {
namespace {

bool StartsAt(const std::string& text, size_t pos, const std::string& part) {
  return pos <= text.size() && text.size() - pos >= part.size() && text.compare(pos, part.size(), part) == 0;
}

uint64_t Distance(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

// a + b, stopping at the largest value (no overflow near UINT64_MAX).
uint64_t Plus(uint64_t a, uint64_t b) { return a > std::numeric_limits<uint64_t>::max() - b ? std::numeric_limits<uint64_t>::max() : a + b; }

constexpr uint64_t kConsoleKeyBase = uint64_t{1} << 63;

}  // namespace

void KernelLogMatcher::AddKmsg(std::vector<KernelLogEntry> entries) {
  for (KernelLogEntry& e : entries) kmsg_.push_back(std::move(e));
}

void KernelLogMatcher::AddConsole(std::vector<ConsoleRecord> records) {
  for (ConsoleRecord& r : records) {
    Key key{r.ts, next_console_order_++};
    auto [it, inserted] = console_.emplace(key, Slot{std::move(r), false});
    std::string_view ik = IndexKey(it->second.record.text);
    auto bucket = index_.find(ik);
    if (bucket == index_.end()) bucket = index_.emplace(std::string(ik), std::set<Key>()).first;
    bucket->second.insert(key);
  }
}

void KernelLogMatcher::Unindex(const Key& key, const Slot& slot) {
  auto bucket = index_.find(IndexKey(slot.record.text));
  if (bucket == index_.end()) return;
  bucket->second.erase(key);
  if (bucket->second.empty()) index_.erase(bucket);
}

void KernelLogMatcher::Retire(uint64_t before_ts, bool all) {
  while (!console_.empty()) {
    auto it = console_.begin();
    Slot& s = it->second;
    if (!(all || s.used || Plus(s.record.ts, window_ns_) < before_ts)) break;
    if (!s.used) {
      Unindex(it->first, s);
      ++stats_.console_unmatched;
      ConsoleRecord& c = s.record;
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
      out_.push_back({std::move(e), kConsoleKeyBase + it->first.second});
    }
    console_.erase(it);
  }
}

void KernelLogMatcher::Decide(KernelLogEntry k) {
  // Records left behind by the window are not candidates for this or any
  // later kmsg record (unless the kmsg clock runs backwards; then they
  // stay unmatched, and counted).
  Retire(k.ts, false);
  const uint64_t from = k.ts > window_ns_ ? k.ts - window_ns_ : 0;
  const uint64_t until = Plus(k.ts, window_ns_);
  // The first record in time order whose text starts k's (whole, or the
  // first piece of a pr_cont() record whose pieces make it whole): each
  // prefix length's bucket gives its first such record; the earliest wins.
  bool found = false;
  Key best{};
  std::vector<Key> best_fragments, fragments;
  const std::string_view text = k.text;
  for (size_t len = 1; len <= std::min(text.size(), kIndexBytes); ++len) {
    // Shorter keys hold records of exactly that length; the longest key
    // also those longer.
    auto bucket = index_.find(text.substr(0, len));
    if (bucket == index_.end()) continue;
    for (auto key = bucket->second.lower_bound(Key{from, 0}); key != bucket->second.end() && key->first <= until;
         ++key) {
      if (found && best < *key) break;
      auto slot = console_.find(*key);
      const ConsoleRecord& c = slot->second.record;
      if (slot->second.used || Distance(c.ts, k.ts) > window_ns_ || !StartsAt(k.text, 0, c.text)) continue;
      fragments.clear();
      if (c.len != k.text.size()) {
        if (c.cut() || c.len > k.text.size()) continue;
        size_t pos = c.len;
        for (auto j = std::next(slot); j != console_.end() && pos < k.text.size() && j->first.first <= until; ++j) {
          const ConsoleRecord& f = j->second.record;
          if (j->second.used || f.tid != c.tid || f.cpu != c.cpu) continue;
          if (!StartsAt(k.text, pos, f.text) || f.len > k.text.size() - pos) continue;
          if (f.cut() && f.len != k.text.size() - pos) continue;
          fragments.push_back(j->first);
          pos += f.len;
        }
        if (pos != k.text.size()) continue;
      }
      found = true;
      best = *key;
      best_fragments = fragments;
      break;
    }
  }
  if (found) {
    auto slot = console_.find(best);
    const ConsoleRecord& c = slot->second.record;
    slot->second.used = true;
    Unindex(best, slot->second);
    for (const Key& j : best_fragments) {
      Slot& f = console_.find(j)->second;
      f.used = true;
      Unindex(j, f);
    }
    stats_.continuations += best_fragments.size();
    ++stats_.matched;
    k.source = KernelLogSource::kBoth;
    k.ts = c.ts;
    k.cpu = static_cast<int32_t>(c.cpu);
    k.tid = c.tid;
    k.pid = c.pid;
    k.comm = c.comm;
  } else {
    ++stats_.kmsg_unmatched;
  }
  out_.push_back({std::move(k), next_kmsg_key_++});
}

std::vector<KernelLogEntry> KernelLogMatcher::Take(uint64_t complete_to) {
  const bool end = complete_to == std::numeric_limits<uint64_t>::max();
  // A kmsg record is decided once every console record within the window
  // after it is in (MergeKernelLog takes kmsg records in sequence order).
  while (!kmsg_.empty() && (end || Plus(kmsg_.front().ts, window_ns_) < complete_to)) {
    KernelLogEntry k = std::move(kmsg_.front());
    kmsg_.pop_front();
    Decide(std::move(k));
  }
  // Console records that neither a waiting kmsg record nor one read later
  // (at complete_to or after) can reach.
  uint64_t kmsg_from = complete_to;
  for (const KernelLogEntry& k : kmsg_) kmsg_from = std::min(kmsg_from, k.ts);
  // (The first waiting one is the next MergeKernelLog would take.)
  Retire(kmsg_.empty() ? complete_to : std::min(complete_to, kmsg_.front().ts), end);
  // What comes out later starts at this time or after: a waiting kmsg
  // record can take a console time a window before its own, a waiting
  // console record keeps its own, and records read later come after
  // complete_to.
  uint64_t safe = end ? complete_to : (kmsg_from > window_ns_ ? kmsg_from - window_ns_ : 0);
  if (!console_.empty()) safe = std::min(safe, console_.begin()->first.first);
  std::sort(out_.begin(), out_.end(), [](const Out& a, const Out& b) {
    if (a.entry.ts != b.entry.ts) return a.entry.ts < b.entry.ts;
    return a.key < b.key;
  });
  std::vector<KernelLogEntry> ready;
  size_t n = 0;
  while (n < out_.size() && (end || out_[n].entry.ts < safe)) ready.push_back(std::move(out_[n++].entry));
  out_.erase(out_.begin(), out_.begin() + static_cast<ptrdiff_t>(n));
  return ready;
}

std::vector<KernelLogEntry> MergeKernelLog(std::vector<KernelLogEntry> kmsg, std::vector<ConsoleRecord> console,
                                           uint64_t window_ns, KernelLogMatchStats* stats) {
  KernelLogMatcher matcher(window_ns);
  matcher.AddKmsg(std::move(kmsg));
  matcher.AddConsole(std::move(console));
  std::vector<KernelLogEntry> out = matcher.Take(std::numeric_limits<uint64_t>::max());
  if (stats) *stats = matcher.stats();
  return out;
}

}  // namespace gpunoise::model
