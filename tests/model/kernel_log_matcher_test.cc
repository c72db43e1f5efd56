// KernelLogMatcher fed as a recording reads (a drain every 100 ms, each
// Take() up to 10 ms before the drain) hands out exactly what matching the
// whole log at the end gives, in the same order, while holding only the
// last few windows of records. The reference is the one-shot matching the
// recorder used before (kept here as the oracle).
#include "model/kernel_log_match.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>

namespace gpunoise::model {
namespace {

constexpr uint64_t kMs = 1'000'000;

bool StartsAt(const std::string& text, size_t pos, const std::string& part) {
  return pos <= text.size() && text.size() - pos >= part.size() && text.compare(pos, part.size(), part) == 0;
}

// The one-shot algorithm: console records sorted by time, each kmsg record
// in order takes the first console record within the window whose text
// (with its pr_cont pieces) is its own; the rest stay, by source.
std::vector<KernelLogEntry> Reference(std::vector<KernelLogEntry> kmsg, std::vector<ConsoleRecord> console,
                                      uint64_t window, KernelLogMatchStats* st) {
  std::stable_sort(console.begin(), console.end(), [](const auto& a, const auto& b) { return a.ts < b.ts; });
  std::vector<bool> used(console.size(), false);
  size_t lo = 0;
  for (KernelLogEntry& k : kmsg) {
    while (lo < console.size() && (used[lo] || console[lo].ts + window < k.ts)) ++lo;
    for (size_t i = lo; i < console.size() && console[i].ts <= k.ts + window; ++i) {
      const ConsoleRecord& c = console[i];
      uint64_t d = c.ts > k.ts ? c.ts - k.ts : k.ts - c.ts;
      if (used[i] || d > window || !StartsAt(k.text, 0, c.text)) continue;
      std::vector<size_t> fragments;
      if (c.len != k.text.size()) {
        if (c.cut() || c.len > k.text.size()) continue;
        size_t pos = c.len;
        for (size_t j = i + 1; j < console.size() && pos < k.text.size() && console[j].ts <= k.ts + window; ++j) {
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
      st->continuations += fragments.size();
      ++st->matched;
      k.source = KernelLogSource::kBoth;
      k.ts = c.ts;
      k.cpu = static_cast<int32_t>(c.cpu);
      k.tid = c.tid;
      break;
    }
    if (k.source != KernelLogSource::kBoth) ++st->kmsg_unmatched;
  }
  for (size_t i = 0; i < console.size(); ++i) {
    if (used[i]) continue;
    ++st->console_unmatched;
    KernelLogEntry e;
    e.source = KernelLogSource::kConsole;
    e.ts = console[i].ts;
    e.cpu = static_cast<int32_t>(console[i].cpu);
    e.tid = console[i].tid;
    e.text = console[i].text;
    kmsg.push_back(std::move(e));
  }
  std::stable_sort(kmsg.begin(), kmsg.end(), [](const auto& a, const auto& b) { return a.ts < b.ts; });
  return kmsg;
}

struct Log {
  std::vector<KernelLogEntry> kmsg;      // sequence order
  std::vector<ConsoleRecord> console;    // the order the .bss log gives
};

// A minute of a busy node's log: repeated lines from several CPUs, pr_cont
// pieces, long lines the console record cuts, lines only one source has,
// and kmsg times off by up to a millisecond (the anchor's estimate).
Log Generate(uint32_t seed, size_t messages) {
  std::mt19937 rng(seed);
  const std::vector<std::string> texts = {"same line", "eth0: link up", "Modules linked in: a b c",
                                          std::string(300, 'x') + " long", "rcu: INFO: rcu_sched self-detected stall on CPU"};
  Log log;
  uint64_t ts = 1000 * kMs;
  for (size_t i = 0; i < messages; ++i) {
    ts += std::uniform_int_distribution<uint64_t>(0, 40 * kMs)(rng);
    const std::string& text = texts[rng() % texts.size()];
    uint32_t cpu = rng() % 4;
    int32_t tid = static_cast<int32_t>(100 + rng() % 3);
    int kind = static_cast<int>(rng() % 10);  // 0: kmsg only, 1: console only, else both
    if (kind != 1) {
      KernelLogEntry k;
      k.seq = log.kmsg.size();
      int64_t jitter = std::uniform_int_distribution<int64_t>(-1000000, 1000000)(rng);
      k.ts = static_cast<uint64_t>(static_cast<int64_t>(ts) + jitter);
      k.text = text;
      log.kmsg.push_back(std::move(k));
    }
    if (kind != 0) {
      auto piece = [&](uint64_t at, std::string t, uint32_t len) {
        ConsoleRecord c;
        c.ts = at;
        c.cpu = cpu;
        c.tid = tid;
        c.len = len;
        c.text = std::move(t);
        log.console.push_back(std::move(c));
      };
      if (text.starts_with("Modules") && rng() % 2) {
        piece(ts, "Modules linked in:", 18);
        piece(ts + 3, " a b", 4);
        piece(ts + 5, " c", 2);
      } else if (text.size() > 255) {
        piece(ts, text.substr(0, 255), static_cast<uint32_t>(text.size()));
      } else {
        piece(ts, text, static_cast<uint32_t>(text.size()));
      }
    }
  }
  // The .bss log is filled in printk order across CPUs: records printed
  // less than a millisecond apart may come out of time order.
  for (size_t i = 1; i + 1 < log.console.size(); i += 3)
    if (log.console[i + 1].ts - log.console[i].ts < 1 * kMs) std::swap(log.console[i], log.console[i + 1]);
  return log;
}

void ExpectSame(const std::vector<KernelLogEntry>& got, const std::vector<KernelLogEntry>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(got[i].ts, want[i].ts);
    EXPECT_EQ(got[i].text, want[i].text);
    EXPECT_EQ(got[i].source, want[i].source);
    EXPECT_EQ(got[i].seq, want[i].seq);
    EXPECT_EQ(got[i].tid, want[i].tid);
    EXPECT_EQ(got[i].cpu, want[i].cpu);
  }
}

TEST(KernelLogMatcher, FedAsItIsReadItGivesWhatMatchingTheWholeLogGives) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE(seed);
    Log log = Generate(seed, 3000);
    KernelLogMatchStats want_stats;
    std::vector<KernelLogEntry> want =
        Reference(log.kmsg, log.console, kKernelLogMatchWindowNs, &want_stats);

    KernelLogMatcher m(kKernelLogMatchWindowNs);
    std::vector<KernelLogEntry> got;
    size_t next_k = 0, next_c = 0, most_held = 0;
    const uint64_t end = log.console.back().ts + 3000 * kMs;
    for (uint64_t now = 1000 * kMs; now < end; now += 100 * kMs) {
      // What a drain at `now` reads: kmsg records the kernel has stored
      // (their true time is within 1 ms of the estimate), console records
      // printed before now (the generator's small reorderings included).
      std::vector<KernelLogEntry> k;
      while (next_k < log.kmsg.size() && log.kmsg[next_k].ts + 1 * kMs < now) k.push_back(log.kmsg[next_k++]);
      std::vector<ConsoleRecord> c;
      while (next_c < log.console.size() && log.console[next_c].ts + 1 * kMs < now) c.push_back(log.console[next_c++]);
      m.AddKmsg(std::move(k));
      m.AddConsole(std::move(c));
      for (auto& e : m.Take(now - 10 * kMs)) got.push_back(std::move(e));
      most_held = std::max(most_held, m.held());
    }
    std::vector<KernelLogEntry> k(log.kmsg.begin() + static_cast<ptrdiff_t>(next_k), log.kmsg.end());
    std::vector<ConsoleRecord> c(log.console.begin() + static_cast<ptrdiff_t>(next_c), log.console.end());
    m.AddKmsg(std::move(k));
    m.AddConsole(std::move(c));
    for (auto& e : m.Take(std::numeric_limits<uint64_t>::max())) got.push_back(std::move(e));
    ExpectSame(got, want);
    EXPECT_EQ(m.stats().matched, want_stats.matched);
    EXPECT_EQ(m.stats().continuations, want_stats.continuations);
    EXPECT_EQ(m.stats().kmsg_unmatched, want_stats.kmsg_unmatched);
    EXPECT_EQ(m.stats().console_unmatched, want_stats.console_unmatched);
    EXPECT_GT(want_stats.matched, 2000u);  // the generator makes a realistic mix
    EXPECT_GT(want_stats.console_unmatched + want_stats.kmsg_unmatched, 10u);
    EXPECT_GT(want_stats.continuations, 100u);
    // 3000 messages at 50 a second: a few windows' worth held, not the minute.
    EXPECT_LT(most_held, 400u) << "held at most " << most_held;
    EXPECT_EQ(m.held(), 0u);
  }
}

TEST(KernelLogMatcher, NothingIsHandedOutThatALaterRecordCouldChange) {
  KernelLogMatcher m(kKernelLogMatchWindowNs);
  KernelLogEntry k;
  k.seq = 1;
  k.ts = 10'000 * kMs;
  k.text = "late half";
  m.AddKmsg({k});
  // The console record may still come (within a window after it).
  EXPECT_TRUE(m.Take(10'500 * kMs).empty());
  ConsoleRecord c;
  c.ts = 10'000 * kMs - 300;
  c.text = "late half";
  c.len = 9;
  c.tid = 5;
  m.AddConsole({c});
  auto out = m.Take(11'100 * kMs);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].source, KernelLogSource::kBoth);
  EXPECT_EQ(out[0].ts, c.ts);
  EXPECT_EQ(m.held(), 0u);
}

}  // namespace
}  // namespace gpunoise::model
