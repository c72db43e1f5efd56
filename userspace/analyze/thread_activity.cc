#include "analyze/thread_activity.h"

#include <algorithm>

namespace gpunoise::analyze {

uint64_t ThreadActivity::run_ns() const {
  uint64_t sum = 0;
  for (const auto& r : runs) sum += r.end - r.start;
  return sum;
}

uint64_t ThreadActivity::wait_ns() const {
  uint64_t sum = 0;
  for (const auto& w : waits) sum += w.end - w.start;
  return sum;
}

namespace {

// Appends [start, end) on `cpu`, split where the thread migrated, clipped
// to [from, to).
void AddWait(uint64_t start, uint64_t end, uint32_t cpu, bool preempted,
             const std::vector<const Migration*>& migrations, uint64_t from, uint64_t to,
             std::vector<ThreadWait>* out) {
  auto emit = [&](uint64_t a, uint64_t b, uint32_t c) {
    a = std::max(a, from);
    b = std::min(b, to);
    if (b > a) out->push_back({a, b, c, preempted});
  };
  uint64_t at = start;
  for (const Migration* m : migrations) {
    if (m->ts <= start) continue;
    if (m->ts >= end) break;
    emit(at, m->ts, cpu);
    at = m->ts;
    if (m->dest_cpu >= 0) cpu = static_cast<uint32_t>(m->dest_cpu);
  }
  emit(at, end, cpu);
}

}  // namespace

std::unordered_map<int32_t, ThreadActivity> BuildActivities(const Timeline& t,
                                                            const std::set<int32_t>& tids,
                                                            uint64_t from, uint64_t to) {
  std::unordered_map<int32_t, ThreadActivity> out;
  if (tids.empty()) return out;
  for (int32_t tid : tids) out[tid].tid = tid;
  // Runs of every focus thread, from all CPUs, unclipped (the slice around
  // the window's start says what state the thread was in there).
  for (uint32_t cpu = 0; cpu < t.cpus.size(); ++cpu)
    for (const RunSlice& r : t.cpus[cpu].runs)
      if (r.tid > 0 && tids.count(r.tid)) out[r.tid].runs.push_back({r.start, r.end, cpu, r.end_state});
  std::unordered_map<int32_t, std::vector<const Wakeup*>> wakeups;
  for (const Wakeup& w : t.wakeups)
    if (tids.count(w.tid)) wakeups[w.tid].push_back(&w);
  std::unordered_map<int32_t, std::vector<const Migration*>> migrations;
  for (const Migration& m : t.migrations)
    if (tids.count(m.tid)) migrations[m.tid].push_back(&m);

  for (auto& [tid, a] : out) {
    auto& runs = a.runs;
    std::sort(runs.begin(), runs.end(), [](const ThreadRun& x, const ThreadRun& y) { return x.start < y.start; });
    const auto& wk = wakeups[tid];
    const auto& mg = migrations[tid];
    size_t wi = 0;
    // The first wakeup strictly after `ts`.
    auto next_wakeup = [&](uint64_t ts) -> const Wakeup* {
      while (wi < wk.size() && wk[wi]->ts <= ts) ++wi;
      return wi < wk.size() ? wk[wi] : nullptr;
    };
    if (!runs.empty()) {
      // Woken before its first run: waiting from the last wakeup before it.
      const Wakeup* before = nullptr;
      for (const Wakeup* w : wk) {
        if (w->ts >= runs.front().start) break;
        before = w;
      }
      if (before) {
        uint32_t cpu = before->target_cpu >= 0 ? static_cast<uint32_t>(before->target_cpu) : runs.front().cpu;
        AddWait(before->ts, runs.front().start, cpu, false, mg, from, to, &a.waits);
      }
    }
    for (size_t i = 0; i + 1 < runs.size(); ++i) {
      const ThreadRun& r = runs[i];
      const ThreadRun& next = runs[i + 1];
      if (next.start <= r.end) continue;
      if (IsRunnableState(r.end_state)) {
        AddWait(r.end, next.start, r.cpu, true, mg, from, to, &a.waits);
        continue;
      }
      const Wakeup* w = next_wakeup(r.end);
      if (w && w->ts <= next.start) {
        uint32_t cpu = w->target_cpu >= 0 ? static_cast<uint32_t>(w->target_cpu) : next.cpu;
        AddWait(w->ts, next.start, cpu, false, mg, from, to, &a.waits);
      } else if (r.end_state != kStateUnknown) {
        a.unexplained_gaps++;
      }
    }
    // Still runnable at the end of the data after a preemption.
    if (!runs.empty() && IsRunnableState(runs.back().end_state) && runs.back().end < to)
      AddWait(runs.back().end, to, runs.back().cpu, true, mg, from, to, &a.waits);
    // Clip runs to the window and find when the thread was seen.
    std::vector<ThreadRun> clipped;
    uint64_t first = UINT64_MAX, last = 0;
    for (const ThreadRun& r : runs) {
      uint64_t s = std::max(r.start, from), e = std::min(r.end, to);
      if (e <= s) continue;
      clipped.push_back({s, e, r.cpu, r.end_state});
      first = std::min(first, s);
      last = std::max(last, e);
    }
    for (const ThreadWait& w : a.waits) {
      first = std::min(first, w.start);
      last = std::max(last, w.end);
    }
    // A thread that was asleep at the window's edges was still alive there.
    if (!runs.empty() && runs.front().start < from) first = from;
    if (!runs.empty() && runs.back().end_state >= 0 && !IsRunnableState(runs.back().end_state) &&
        runs.back().end < to && last) {
      // It went to sleep and did not run again: it lived on at least until
      // the window ends unless it exited (state X or Z).
      if (!(runs.back().end_state & (16 | 32))) last = to;
    }
    a.runs = std::move(clipped);
    a.first_seen = first == UINT64_MAX ? 0 : first;
    a.last_seen = last;
  }
  return out;
}

}  // namespace gpunoise::analyze
