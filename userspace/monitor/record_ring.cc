#include "monitor/record_ring.h"

#include <algorithm>
#include <cstring>

namespace gpunoise::monitor {

RecordRing::RecordRing(uint64_t max_bytes, uint64_t window_ns) : window_ns_(window_ns) {
  // 64 chunks: dropping one loses at most 1/64 of the history; at least
  // 64 KiB each so a chunk holds thousands of records.
  chunk_bytes_ = std::max<uint64_t>(64 * 1024, max_bytes / 64);
  max_chunks_ = std::max<size_t>(2, static_cast<size_t>(max_bytes / chunk_bytes_));
}

uint64_t RecordRing::oldest_ts() const {
  if (!used_) return 0;
  uint64_t oldest = UINT64_MAX;
  for (size_t i = 0; i < used_; ++i) oldest = std::min(oldest, chunks_[(first_ + i) % chunks_.size()].min_ts);
  return oldest == UINT64_MAX ? 0 : oldest;
}

uint64_t RecordRing::bytes_in_use() const {
  uint64_t total = 0;
  for (const Chunk& c : chunks_) total += c.data.capacity();
  return total;
}

void RecordRing::DropOldest() {
  if (!used_) return;
  Chunk& c = chunks_[first_];
  if (c.records) complete_from_ = std::max(complete_from_, c.max_ts);
  records_ -= c.records;
  c.data.clear();  // keeps its capacity for reuse
  c.min_ts = UINT64_MAX;
  c.max_ts = 0;
  c.records = 0;
  first_ = (first_ + 1) % chunks_.size();
  --used_;
}

RecordRing::Chunk& RecordRing::Writable(size_t need) {
  if (used_) {
    Chunk& last = chunks_[(first_ + used_ - 1) % chunks_.size()];
    if (last.data.size() + need <= chunk_bytes_) return last;
  }
  if (chunks_.size() < max_chunks_ && used_ == chunks_.size()) {
    // Still growing, and every chunk holds data: a new chunk goes in right
    // after the newest one, which (the ring being full) is just before the
    // oldest.
    Chunk c;
    c.data.reserve(chunk_bytes_);
    if (first_ == 0) {
      chunks_.push_back(std::move(c));
    } else {
      chunks_.insert(chunks_.begin() + static_cast<ptrdiff_t>(first_), std::move(c));
      ++first_;
    }
    ++used_;
    return chunks_[(first_ + used_ - 1) % chunks_.size()];
  }
  if (used_ == chunks_.size()) DropOldest();
  ++used_;
  Chunk& c = chunks_[(first_ + used_ - 1) % chunks_.size()];
  if (c.data.capacity() < chunk_bytes_) c.data.reserve(chunk_bytes_);
  return c;
}

void RecordRing::Append(uint32_t cpu, std::span<const uint8_t> record) {
  size_t padded = (record.size() + 7) & ~size_t{7};
  size_t need = sizeof(EntryHeader) + padded;
  if (need > chunk_bytes_ || record.size() < sizeof(uint64_t)) return;
  uint64_t ts;
  std::memcpy(&ts, record.data(), sizeof(ts));
  Chunk& c = Writable(need);
  EntryHeader h{static_cast<uint32_t>(record.size()), static_cast<uint16_t>(cpu), 0};
  size_t off = c.data.size();
  c.data.resize(off + need);
  std::memcpy(c.data.data() + off, &h, sizeof(h));
  std::memcpy(c.data.data() + off + sizeof(h), record.data(), record.size());
  c.min_ts = std::min(c.min_ts, ts);
  c.max_ts = std::max(c.max_ts, ts);
  ++c.records;
  ++records_;
  newest_ts_ = std::max(newest_ts_, ts);
}

void RecordRing::MarkLoss(uint32_t cpu) {
  Chunk& c = Writable(sizeof(EntryHeader));
  EntryHeader h{0, static_cast<uint16_t>(cpu), kLossMark};
  size_t off = c.data.size();
  c.data.resize(off + sizeof(h));
  std::memcpy(c.data.data() + off, &h, sizeof(h));
}

void RecordRing::Trim(uint64_t now_ns) {
  if (now_ns <= window_ns_) return;
  uint64_t cutoff = now_ns - window_ns_;
  // Keep the newest chunk even when old: it is still being filled.
  while (used_ > 1 && chunks_[first_].max_ts < cutoff) DropOldest();
}

RecordRing RecordRing::TakeAll() {
  RecordRing out(max_bytes(), window_ns_);
  out.chunk_bytes_ = chunk_bytes_;
  out.max_chunks_ = max_chunks_;
  out.chunks_ = std::move(chunks_);
  out.first_ = first_;
  out.used_ = used_;
  out.complete_from_ = complete_from_;
  out.newest_ts_ = newest_ts_;
  out.records_ = records_;
  chunks_.clear();
  first_ = 0;
  used_ = 0;
  records_ = 0;
  complete_from_ = newest_ts_;
  return out;
}

}  // namespace gpunoise::monitor
