#include "analyze/attribution.h"

#include <algorithm>

#include <fmt/format.h>

#include "analyze/interference_core.h"
#include "model/events.h"

namespace gpunoise::analyze {

std::string_view CulpritKindName(Culprit::Kind kind) {
  switch (kind) {
    case Culprit::Kind::kTask: return "task";
    case Culprit::Kind::kHardirq: return "hardirq";
    case Culprit::Kind::kSoftirq: return "softirq";
    case Culprit::Kind::kIdle: return "idle";
    case Culprit::Kind::kUnknown: return "unknown";
  }
  return "?";
}

std::string DescribeCulprit(const Timeline& t, const Culprit& c) {
  switch (c.kind) {
    case Culprit::Kind::kTask: return t.DescribeThread(c.id);
    case Culprit::Kind::kHardirq: return "hardirq " + t.IrqName(c.id);
    case Culprit::Kind::kSoftirq: return SoftirqCulpritName(static_cast<uint32_t>(c.id));
    case Culprit::Kind::kIdle: return "idle CPU (wakeup latency)";
    case Culprit::Kind::kUnknown: return "no data (events lost or not recorded)";
  }
  return "?";
}

uint64_t Overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1) {
  uint64_t lo = std::max(a0, b0), hi = std::min(a1, b1);
  return hi > lo ? hi - lo : 0;
}

template <typename Slice>
size_t FirstEndingAfter(const PodVector<Slice>& v, uint64_t ts) {
  // Slices are sorted by start and do not overlap, so ends are sorted too.
  auto it = std::upper_bound(v.begin(), v.end(), ts,
                             [](uint64_t t, const Slice& s) { return t < s.end; });
  return static_cast<size_t>(it - v.begin());
}
template size_t FirstEndingAfter(const PodVector<RunSlice>&, uint64_t);
template size_t FirstEndingAfter(const PodVector<IntrSlice>&, uint64_t);

namespace {

struct Piece {
  uint64_t start, end;
  Culprit culprit;
};

// Interrupt pieces within [from, to): hard IRQs whole, softirqs with the
// hard IRQs inside them cut out. Sorted by start.
void InterruptPieces(const CpuTimeline& c, uint64_t from, uint64_t to, std::vector<Piece>* out) {
  std::vector<Piece> hard;
  for (size_t i = FirstEndingAfter(c.hardirqs, from); i < c.hardirqs.size(); ++i) {
    const IntrSlice& s = c.hardirqs[i];
    if (s.start >= to) break;
    uint64_t a = std::max(s.start, from), b = std::min(s.end, to);
    if (b > a) hard.push_back({a, b, {Culprit::Kind::kHardirq, s.id}});
  }
  size_t first_hard = 0;  // both lists are in time order: one cursor
  for (size_t i = FirstEndingAfter(c.softirqs, from); i < c.softirqs.size(); ++i) {
    const IntrSlice& s = c.softirqs[i];
    if (s.start >= to) break;
    uint64_t a = std::max(s.start, from), b = std::min(s.end, to);
    Culprit soft{Culprit::Kind::kSoftirq, s.id};
    while (first_hard < hard.size() && hard[first_hard].end <= a) ++first_hard;
    for (size_t j = first_hard; j < hard.size() && hard[j].start < b; ++j) {
      const Piece& h = hard[j];
      if (h.end <= a) continue;
      if (h.start > a) out->push_back({a, h.start, soft});
      a = std::max(a, h.end);
    }
    if (b > a) out->push_back({a, b, soft});
  }
  out->insert(out->end(), hard.begin(), hard.end());
  std::sort(out->begin(), out->end(), [](const Piece& x, const Piece& y) { return x.start < y.start; });
}

}  // namespace

void AttributeInterrupts(const Timeline& t, uint32_t cpu, uint64_t from, uint64_t to,
                         Breakdown* out) {
  if (cpu >= t.cpus.size() || to <= from) return;
  std::vector<Piece> pieces;
  InterruptPieces(t.cpus[cpu], from, to, &pieces);
  for (const Piece& p : pieces) (*out)[p.culprit] += p.end - p.start;
}

void AttributeCpu(const Timeline& t, uint32_t cpu, uint64_t from, uint64_t to, Breakdown* out) {
  if (to <= from) return;
  if (cpu >= t.cpus.size()) {
    (*out)[{Culprit::Kind::kUnknown, 0}] += to - from;
    return;
  }
  const CpuTimeline& c = t.cpus[cpu];
  std::vector<Piece> interrupts;
  InterruptPieces(c, from, to, &interrupts);
  for (const Piece& p : interrupts) (*out)[p.culprit] += p.end - p.start;

  // Runs and interrupt pieces are both sorted and each non-overlapping, so
  // one pass with a cursor into the pieces finds what interrupted each run
  // (a full cross product made the per-CPU table quadratic on long traces).
  uint64_t covered = 0;
  size_t piece = 0;
  for (size_t i = FirstEndingAfter(c.runs, from); i < c.runs.size(); ++i) {
    const RunSlice& r = c.runs[i];
    if (r.start >= to) break;
    uint64_t a = std::max(r.start, from), b = std::min(r.end, to);
    if (b <= a) continue;
    covered += b - a;
    while (piece < interrupts.size() && interrupts[piece].end <= a) ++piece;
    uint64_t interrupted = 0;
    for (size_t j = piece; j < interrupts.size() && interrupts[j].start < b; ++j)
      interrupted += Overlap(a, b, interrupts[j].start, interrupts[j].end);
    uint64_t own = b - a - std::min(b - a, interrupted);
    if (!own) continue;
    Culprit who = r.tid == 0 ? Culprit{Culprit::Kind::kIdle, 0} : Culprit{Culprit::Kind::kTask, r.tid};
    (*out)[who] += own;
  }
  // Time no run slice covers: before the CPU's first switch, or lost. The
  // interrupts we saw there still count; the rest is unknown.
  uint64_t span = to - from;
  if (covered < span) {
    uint64_t uncovered_interrupts = 0;
    size_t run = FirstEndingAfter(c.runs, from);
    for (const Piece& p : interrupts) {
      while (run < c.runs.size() && c.runs[run].end <= p.start) ++run;
      uint64_t inside_runs = 0;
      for (size_t k = run; k < c.runs.size() && c.runs[k].start < p.end; ++k)
        inside_runs += Overlap(p.start, p.end, c.runs[k].start, c.runs[k].end);
      uncovered_interrupts += (p.end - p.start) - std::min(p.end - p.start, inside_runs);
    }
    uint64_t unknown = span - covered;
    unknown -= std::min(unknown, uncovered_interrupts);
    if (unknown) (*out)[{Culprit::Kind::kUnknown, 0}] += unknown;
  }
}

std::vector<std::pair<Culprit, uint64_t>> Ranked(const Breakdown& b) {
  std::vector<std::pair<Culprit, uint64_t>> v(b.begin(), b.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  return v;
}

}  // namespace gpunoise::analyze
