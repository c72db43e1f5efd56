#include "monitor/kernel_log_ring.h"

#include <algorithm>

namespace gpunoise::monitor {
namespace {

// Loss marks kept at most; beyond, the two oldest merge into one at the
// later time (a dump may then count a loss just before its window as its
// own: more, never less).
constexpr size_t kMaxLossMarks = 256;

}  // namespace

KernelLogRing::KernelLogRing(size_t max_records, uint64_t max_bytes, uint64_t window_ns)
    : max_records_(std::max<size_t>(1, max_records)), max_bytes_(max_bytes), window_ns_(window_ns) {}

uint64_t KernelLogRing::SizeOf(const model::KernelLogEntry& e) {
  return sizeof(e) + e.text.size() + e.subsystem.size() + e.device.size() + e.about.size() + e.comm.size();
}

void KernelLogRing::MarkLoss(uint64_t ts, uint64_t count) {
  if (!count) return;
  // Marks arrive nearly in time order (gaps at the newest record,
  // overwrites at the oldest); insert in order.
  auto at = std::upper_bound(losses_.begin(), losses_.end(), ts, [](uint64_t t, const Loss& l) { return t < l.ts; });
  losses_.insert(at, Loss{ts, count});
  while (losses_.size() > kMaxLossMarks) {
    Loss first = losses_.front();
    losses_.pop_front();
    losses_.front().count += first.count;
  }
}

void KernelLogRing::Add(std::vector<model::KernelLogEntry> entries, uint64_t lost_before, uint64_t now) {
  MarkLoss(entries.empty() ? now : entries.front().ts, lost_before);
  for (model::KernelLogEntry& e : entries) {
    bytes_ += SizeOf(e);
    entries_.push_back(std::move(e));
    while (entries_.size() > max_records_ || (bytes_ > max_bytes_ && entries_.size() > 1)) {
      const model::KernelLogEntry& old = entries_.front();
      ++overwritten_;
      MarkLoss(old.ts, 1);
      bytes_ -= SizeOf(old);
      entries_.pop_front();
    }
  }
}

void KernelLogRing::Trim(uint64_t now) {
  if (now <= window_ns_) return;
  const uint64_t oldest = now - window_ns_;
  while (!entries_.empty() && entries_.front().ts < oldest) {
    bytes_ -= SizeOf(entries_.front());
    entries_.pop_front();
  }
  while (!losses_.empty() && losses_.front().ts < oldest) losses_.pop_front();
}

KernelLogRing::Window KernelLogRing::Since(uint64_t from) const {
  Window w;
  for (const model::KernelLogEntry& e : entries_)
    if (e.ts >= from) w.entries.push_back(e);
  for (const Loss& l : losses_)
    if (l.ts >= from) w.lost += l.count;
  return w;
}

}  // namespace gpunoise::monitor
