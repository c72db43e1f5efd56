// Time per fixed window of an analysis span, added as spans of any length.
// A span adds its partial first and last windows and one step for all the
// full windows between, so the cost of a span is O(log n) however many
// windows it crosses: a trace whose timestamps are far apart (a corrupt or
// hostile file) costs what its slices cost, not what its length does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace gpunoise::analyze {

class WindowTotals {
 public:
  // Windows of `window_ns` (at least 1) from `origin` on.
  WindowTotals(uint64_t origin, uint64_t window_ns);

  // Adds [start, end) (start at or after the origin).
  void Add(uint64_t start, uint64_t end);
  // The `n` windows with the most time, most first, the earlier first among
  // equals: (window index, ns). Windows with no time are never listed.
  std::vector<std::pair<uint64_t, uint64_t>> Worst(size_t n) const;

 private:
  uint64_t origin_, window_;
  std::map<uint64_t, uint64_t> partial_;  // index -> ns of spans ending or starting inside
  // index -> change of the full-window time from this window on; unsigned
  // wrap-around adds the falls correctly, and every running sum is a real
  // total.
  std::map<uint64_t, uint64_t> steps_;
};

}  // namespace gpunoise::analyze
