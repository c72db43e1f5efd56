#include "analyze/attribution.h"

#include <algorithm>
#include <span>

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

void InterruptPieces(const Timeline& t, uint32_t cpu, uint64_t from, uint64_t to,
                     std::vector<AttributedPiece>* out) {
  if (cpu >= t.cpus.size() || to <= from) return;
  const CpuTimeline& c = t.cpus[cpu];
  std::vector<AttributedPiece> hard;
  for (size_t i = FirstEndingAfter(c.hardirqs, from); i < c.hardirqs.size(); ++i) {
    const IntrSlice& s = c.hardirqs[i];
    if (s.start >= to) break;
    uint64_t a = std::max(s.start, from), b = std::min(s.end, to);
    if (b > a) hard.push_back({a, b, {Culprit::Kind::kHardirq, s.id}});
  }
  const size_t first_out = out->size();
  size_t first_hard = 0;  // both lists are in time order: one cursor
  for (size_t i = FirstEndingAfter(c.softirqs, from); i < c.softirqs.size(); ++i) {
    const IntrSlice& s = c.softirqs[i];
    if (s.start >= to) break;
    uint64_t a = std::max(s.start, from), b = std::min(s.end, to);
    Culprit soft{Culprit::Kind::kSoftirq, s.id};
    while (first_hard < hard.size() && hard[first_hard].end <= a) ++first_hard;
    for (size_t j = first_hard; j < hard.size() && hard[j].start < b; ++j) {
      const AttributedPiece& h = hard[j];
      if (h.end <= a) continue;
      if (h.start > a) out->push_back({a, h.start, soft});
      a = std::max(a, h.end);
    }
    if (b > a) out->push_back({a, b, soft});
  }
  // Two runs in time order: a merge, not a sort.
  const size_t first_hard_out = out->size();
  out->insert(out->end(), hard.begin(), hard.end());
  std::inplace_merge(out->begin() + static_cast<std::ptrdiff_t>(first_out),
                     out->begin() + static_cast<std::ptrdiff_t>(first_hard_out), out->end(),
                     [](const AttributedPiece& x, const AttributedPiece& y) { return x.start < y.start; });
}

namespace {

// Sums pieces into a breakdown, one map update per run of pieces with the
// same culprit (a task's run cut by its interrupts comes as several).
void AddPieces(std::span<const AttributedPiece> pieces, Breakdown* out) {
  for (size_t i = 0; i < pieces.size();) {
    const Culprit& who = pieces[i].culprit;
    uint64_t ns = 0;
    for (; i < pieces.size() && pieces[i].culprit == who; ++i) ns += pieces[i].end - pieces[i].start;
    (*out)[who] += ns;
  }
}

}  // namespace

void AttributeCpuPieces(const Timeline& t, uint32_t cpu, uint64_t from, uint64_t to,
                        std::vector<AttributedPiece>* out) {
  if (to <= from) return;
  const Culprit unknown{Culprit::Kind::kUnknown, 0};
  if (cpu >= t.cpus.size()) {
    out->push_back({from, to, unknown});
    return;
  }
  const CpuTimeline& c = t.cpus[cpu];
  std::vector<AttributedPiece> interrupts;
  InterruptPieces(t, cpu, from, to, &interrupts);
  out->insert(out->end(), interrupts.begin(), interrupts.end());

  // Runs and interrupt pieces are both sorted and each non-overlapping, so
  // one pass with a cursor into the pieces carves each stretch (a full cross
  // product made the per-CPU table quadratic on long traces). The work is
  // proportional to the slices in [from, to), never to its length.
  size_t piece = 0;
  auto emit_uninterrupted = [&](uint64_t a, uint64_t b, Culprit who) {
    while (piece < interrupts.size() && interrupts[piece].end <= a) ++piece;
    for (size_t j = piece; j < interrupts.size() && interrupts[j].start < b; ++j) {
      if (interrupts[j].start > a) out->push_back({a, interrupts[j].start, who});
      a = std::max(a, interrupts[j].end);
    }
    if (b > a) out->push_back({a, b, who});
  };
  // Time no run slice covers (before the CPU's first switch, or lost) is
  // unknown, but for the interrupts seen there.
  uint64_t cursor = from;
  for (size_t i = FirstEndingAfter(c.runs, from); i < c.runs.size(); ++i) {
    const RunSlice& r = c.runs[i];
    if (r.start >= to) break;
    uint64_t a = std::max({r.start, from, cursor}), b = std::min(r.end, to);
    if (b <= a) continue;
    if (a > cursor) emit_uninterrupted(cursor, a, unknown);
    emit_uninterrupted(a, b, r.tid == 0 ? Culprit{Culprit::Kind::kIdle, 0} : Culprit{Culprit::Kind::kTask, r.tid});
    cursor = b;
  }
  if (to > cursor) emit_uninterrupted(cursor, to, unknown);
}

void AttributeInterrupts(const Timeline& t, uint32_t cpu, uint64_t from, uint64_t to,
                         Breakdown* out) {
  std::vector<AttributedPiece> pieces;
  InterruptPieces(t, cpu, from, to, &pieces);
  AddPieces(pieces, out);
}

void AttributeCpu(const Timeline& t, uint32_t cpu, uint64_t from, uint64_t to, Breakdown* out) {
  std::vector<AttributedPiece> pieces;
  AttributeCpuPieces(t, cpu, from, to, &pieces);
  AddPieces(pieces, out);
}

std::vector<std::pair<Culprit, uint64_t>> Ranked(const Breakdown& b) {
  std::vector<std::pair<Culprit, uint64_t>> v(b.begin(), b.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  return v;
}

}  // namespace gpunoise::analyze
