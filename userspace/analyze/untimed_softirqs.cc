#include "analyze/untimed_softirqs.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "model/events.h"
#include "model/track_identity.h"

namespace gpunoise::analyze {
namespace {

constexpr int32_t kNetRx = static_cast<int32_t>(model::SoftirqVec::kNetRx);

// The task on the CPU at `ts` (0: idle or unknown): the one a softirq then
// interrupted.
int32_t TaskAt(const CpuTimeline& c, uint64_t ts) {
  auto it = std::upper_bound(c.runs.begin(), c.runs.end(), ts,
                             [](uint64_t t, const RunSlice& r) { return t < r.start; });
  if (it == c.runs.begin()) return 0;
  --it;
  return ts < it->end ? it->tid : 0;
}

// Mean length of up to 16 NET_RX slices at or before index `before`
// (exclusive); 0: none.
uint64_t RecentNetRxLength(const CpuTimeline& c, size_t before) {
  uint64_t sum = 0, n = 0;
  for (size_t i = before; i > 0 && n < 16; --i) {
    const IntrSlice& s = c.softirqs[i - 1];
    if (s.id != kNetRx) continue;
    sum += s.end - s.start;
    ++n;
  }
  return n ? sum / n : 0;
}

class CpuEstimate {
 public:
  explicit CpuEstimate(CpuTimeline& c) : c_(c) {}

  // The counter's samples in time order.
  void Run(const std::vector<CounterSample>& samples) {
    double prev_value = 0;
    uint64_t prev_ts = 0;
    size_t first = 0;  // the first softirq starting after prev_ts
    std::vector<size_t> timed;
    for (const CounterSample& s : samples) {
      // Cumulative: a value that does not rise adds nothing (a damaged
      // trace's smaller value is not a negative count).
      if (!(s.value > prev_value)) {
        prev_ts = std::max(prev_ts, s.ts);
        continue;
      }
      const auto delta = static_cast<uint64_t>(std::llround(s.value - prev_value));
      prev_value = s.value;
      while (first < c_.softirqs.size() && c_.softirqs[first].start <= prev_ts) ++first;
      size_t last = first;
      timed.clear();
      for (; last < c_.softirqs.size() && c_.softirqs[last].start <= s.ts; ++last)
        if (c_.softirqs[last].id == kNetRx) timed.push_back(last);
      UntimedSpan span;
      span.count = delta;
      span.to = s.ts;
      if (timed.empty()) {
        // After the last timed one (the end of the recording): the gap
        // before the sample.
        uint64_t from = std::max(prev_ts, last > 0 ? c_.softirqs[last - 1].end : c_.first_ts);
        span.from = std::min(from, s.ts);
        span.placed = Place(from, s.ts, delta, RecentNetRxLength(c_, last));
      } else {
        uint64_t sum = 0;
        for (size_t i : timed) sum += c_.softirqs[i].end - c_.softirqs[i].start;
        const uint64_t length = sum / timed.size();
        const uint64_t each = delta / timed.size(), extra = delta % timed.size();
        span.from = UINT64_MAX;
        for (size_t k = 0; k < timed.size(); ++k) {
          const size_t i = timed[k];
          const uint64_t gap_end = c_.softirqs[i].start;
          const uint64_t gap_start = i > 0 ? c_.softirqs[i - 1].end : std::max(prev_ts, c_.first_ts);
          span.from = std::min(span.from, std::min(gap_start, gap_end));
          span.placed += Place(gap_start, gap_end, each + (k < extra ? 1 : 0), length);
        }
      }
      c_.untimed.push_back(span);
      prev_ts = s.ts;
    }
    Merge();
  }

 private:
  // `n` slices of about `length` evenly in [from, to); returns how many fit.
  uint64_t Place(uint64_t from, uint64_t to, uint64_t n, uint64_t length) {
    from = std::max(from, floor_);
    if (n == 0 || length == 0 || to <= from) return 0;
    const double slot = static_cast<double>(to - from) / static_cast<double>(n);
    const auto len = static_cast<uint64_t>(std::min(static_cast<double>(length), slot));
    if (len == 0) return 0;
    uint64_t placed = 0;
    for (uint64_t j = 0; j < n; ++j) {
      const auto start =
          from + static_cast<uint64_t>(static_cast<double>(j) * slot + (slot - static_cast<double>(len)) / 2);
      const uint64_t end = std::min(start + len, to);
      if (end <= start) continue;
      added_.push_back(IntrSlice{start, end, kNetRx, TaskAt(c_, start)});
      span_of_.push_back(c_.untimed.size());  // the span being placed is pushed after
      floor_ = end;
      ++placed;
    }
    return placed;
  }

  // The estimates into the CPU's softirqs, in start order (they were
  // placed in time order). They were placed in gaps between its slices, so
  // none overlaps; one that would (a damaged trace) is dropped and no
  // longer counts as placed.
  void Merge() {
    if (added_.empty()) return;
    PodVector<IntrSlice> out;
    out.reserve(c_.softirqs.size() + added_.size());
    size_t a = 0, b = 0;
    while (a < c_.softirqs.size() || b < added_.size()) {
      const bool take_added = b < added_.size() && (a == c_.softirqs.size() || added_[b].start < c_.softirqs[a].start);
      const size_t span = take_added ? span_of_[b] : 0;
      const IntrSlice& s = take_added ? added_[b++] : c_.softirqs[a++];
      if (take_added) {
        const bool clashes = (!out.empty() && out.back().end > s.start) ||
                             (a < c_.softirqs.size() && c_.softirqs[a].start < s.end);
        if (clashes) {
          if (span < c_.untimed.size() && c_.untimed[span].placed) --c_.untimed[span].placed;
          continue;
        }
      }
      out.push_back(s);
    }
    c_.softirqs = std::move(out);
  }

  CpuTimeline& c_;
  std::vector<IntrSlice> added_;   // in time order
  std::vector<size_t> span_of_;    // each estimate's span in c_.untimed
  uint64_t floor_ = 0;  // the end of the last estimate placed
};

}  // namespace

void EstimateUntimedSoftirqs(Timeline& t) {
  for (const auto& [uuid, samples] : t.tracks.counters) {
    const model::TrackIdentity* id = t.tracks.Identity(uuid);
    if (!id || id->kind != model::TrackKind::kNodeCounter || id->node_metric != model::NodeMetric::kNetRxUntimed ||
        id->cpu < 0 || static_cast<size_t>(id->cpu) >= t.cpus.size())
      continue;
    CpuTimeline& c = t.cpus[static_cast<size_t>(id->cpu)];
    if (!c.untimed.empty()) continue;  // one counter per CPU; a second (a merged duplicate) would count twice
    CpuEstimate(c).Run(samples);
  }
}

double CpuTimeline::UntimedDuring(uint64_t a, uint64_t b) const {
  double n = 0;
  for (const UntimedSpan& s : untimed) {
    if (s.to <= s.from) {
      if (s.from >= a && s.from < b) n += static_cast<double>(s.count);
      continue;
    }
    const uint64_t lo = std::max(a, s.from), hi = std::min(b, s.to);
    if (hi > lo) n += static_cast<double>(s.count) * static_cast<double>(hi - lo) / static_cast<double>(s.to - s.from);
  }
  return n;
}

uint64_t CpuTimeline::UntimedTotal() const {
  uint64_t n = 0;
  for (const UntimedSpan& s : untimed) n += s.count;
  return n;
}

}  // namespace gpunoise::analyze
