#include "record/cpu_staging.h"

#include <algorithm>

namespace gpunoise::record {

std::span<const model::Event> CpuStaging::Writable(bool ring_cut) {
  auto begin = events_.begin();
  writable_ = used_;
  if (ring_cut && used_ > 0) {
    int lowest = model::ContextLevel(events_[0]);
    for (size_t i = 1; i < used_ && lowest > 0; ++i) lowest = std::min(lowest, model::ContextLevel(events_[i]));
    size_t last = used_ - 1;
    while (model::ContextLevel(events_[last]) != lowest) --last;
    writable_ = last;
    if (writable_ == 0 && used_ > max_held_) writable_ = used_;
  }
  auto end = begin + static_cast<ptrdiff_t>(writable_);
  auto by_ts = [](const model::Event& a, const model::Event& b) { return a.ts < b.ts; };
  if (!std::is_sorted(begin, end, by_ts)) std::stable_sort(begin, end, by_ts);
  return {events_.data(), writable_};
}

void CpuStaging::Written() {
  if (writable_ == 0) return;
  auto begin = events_.begin();
  std::move(begin + static_cast<ptrdiff_t>(writable_), begin + static_cast<ptrdiff_t>(used_), begin);
  used_ -= writable_;
  writable_ = 0;
}

}  // namespace gpunoise::record
