#include "analyze/window_totals.h"

#include <algorithm>
#include <limits>

namespace gpunoise::analyze {

WindowTotals::WindowTotals(uint64_t origin, uint64_t window_ns)
    : origin_(origin), window_(std::max<uint64_t>(1, window_ns)) {}

void WindowTotals::Add(uint64_t start, uint64_t end) {
  start = std::max(start, origin_);
  if (end <= start) return;
  const uint64_t first = (start - origin_) / window_, last = (end - 1 - origin_) / window_;
  if (first == last) {
    partial_[first] += end - start;
    return;
  }
  // Window edges below `end`, so origin + index * window does not overflow.
  partial_[first] += origin_ + (first + 1) * window_ - start;
  partial_[last] += end - (origin_ + last * window_);
  if (last > first + 1) {
    steps_[first + 1] += window_;
    steps_[last] -= window_;
  }
}

std::vector<std::pair<uint64_t, uint64_t>> WindowTotals::Worst(size_t n) const {
  // Between two keys the full-window time is constant and no partial adds
  // to it, so only the first `n` windows after each key can rank there (the
  // earlier wins a tie).
  std::vector<uint64_t> keys;
  keys.reserve(partial_.size() + steps_.size());
  for (const auto& [index, _] : partial_) keys.push_back(index);
  for (const auto& [index, _] : steps_) keys.push_back(index);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::vector<uint64_t> candidates;
  for (size_t i = 0; i < keys.size(); ++i) {
    const uint64_t next = i + 1 < keys.size() ? keys[i + 1] : std::numeric_limits<uint64_t>::max();
    candidates.push_back(keys[i]);
    for (uint64_t index = keys[i] + 1, k = 0; k < n && index > keys[i] && index < next; ++index, ++k)
      candidates.push_back(index);
  }

  std::vector<std::pair<uint64_t, uint64_t>> totals;
  uint64_t full = 0;
  auto step = steps_.begin();
  for (uint64_t index : candidates) {
    for (; step != steps_.end() && step->first <= index; ++step) full += step->second;
    auto p = partial_.find(index);
    uint64_t ns = full + (p == partial_.end() ? 0 : p->second);
    if (ns) totals.emplace_back(index, ns);
  }
  n = std::min(n, totals.size());
  std::partial_sort(totals.begin(), totals.begin() + static_cast<std::ptrdiff_t>(n), totals.end(),
                    [](const auto& a, const auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
  totals.resize(n);
  return totals;
}

}  // namespace gpunoise::analyze
