// Who had a CPU during an interval: tasks, hard IRQs (by IRQ), softirqs (by
// vector), idle, or nobody we know of (no data). Interrupt time is carved
// out of the task it interrupted, and hard-IRQ time out of the softirq it
// interrupted, so the parts add up to the interval.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analyze/timeline.h"

namespace gpunoise::analyze {

struct Culprit {
  enum class Kind : uint8_t { kTask, kHardirq, kSoftirq, kIdle, kUnknown };
  Kind kind = Kind::kUnknown;
  int32_t id = 0;  // tid, IRQ id (VectorIrqId for vectors), or softirq vector

  bool operator<(const Culprit& o) const { return kind != o.kind ? kind < o.kind : id < o.id; }
  bool operator==(const Culprit& o) const { return kind == o.kind && id == o.id; }
};
std::string_view CulpritKindName(Culprit::Kind kind);  // "task", "hardirq", ...
std::string DescribeCulprit(const Timeline& t, const Culprit& c);

using Breakdown = std::map<Culprit, uint64_t>;  // ns per culprit

// A stretch of time and who had the CPU in it.
struct AttributedPiece {
  uint64_t start, end;
  Culprit culprit;
};

// Appends the pieces that make up [from, to) on `cpu` (they tile it
// exactly): interrupt pieces in time order, then the pieces of the tasks,
// idle and unknown time they carved, in time order.
void AttributeCpuPieces(const Timeline& t, uint32_t cpu, uint64_t from, uint64_t to,
                        std::vector<AttributedPiece>* out);
// Appends the interrupt pieces within [from, to) on `cpu` in time order: hard
// IRQs whole, softirqs with the hard IRQs inside them cut out.
void InterruptPieces(const Timeline& t, uint32_t cpu, uint64_t from, uint64_t to,
                     std::vector<AttributedPiece>* out);

// Adds the breakdown of `cpu` over [from, to) to `out`.
void AttributeCpu(const Timeline& t, uint32_t cpu, uint64_t from, uint64_t to, Breakdown* out);

// Adds the hard-IRQ and softirq time on `cpu` within [from, to) (interrupts
// of whatever ran there) to `out`.
void AttributeInterrupts(const Timeline& t, uint32_t cpu, uint64_t from, uint64_t to,
                         Breakdown* out);

// Sorted by time, largest first.
std::vector<std::pair<Culprit, uint64_t>> Ranked(const Breakdown& b);

uint64_t Overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1);

// Index of the first slice whose end is after `ts` in a start-sorted,
// non-overlapping vector.
template <typename Slice>
size_t FirstEndingAfter(const PodVector<Slice>& v, uint64_t ts);

}  // namespace gpunoise::analyze
