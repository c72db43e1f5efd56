// The flight recorder's kernel log: the newest records the monitor read
// from /dev/kmsg (Monitor::ReadKernelLog, every interval), kept for the
// dumps so a dump shows what the kernel said in its window, the line that
// triggered it included. Bounded in records, bytes and age (the flight
// recorder's window). What is lost stays counted: a record the bound pushed
// out while still inside the window, and the records the kernel's own ring
// overwrote before the monitor read them (kmsg sequence gaps), each as a
// mark at its time, so a dump counts the loss inside its own window.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "model/kernel_log.h"

namespace gpunoise::monitor {

class KernelLogRing {
 public:
  KernelLogRing(size_t max_records, uint64_t max_bytes, uint64_t window_ns);

  // `entries` in the order read; `lost_before`: records the kernel lost
  // just before them (the reader's sequence gap since the last call),
  // placed at the first entry's time, or at `now` when none came.
  void Add(std::vector<model::KernelLogEntry> entries, uint64_t lost_before, uint64_t now);
  // Forgets records (and loss marks) older than now - window.
  void Trim(uint64_t now);
  void set_window_ns(uint64_t window_ns) { window_ns_ = window_ns; }

  struct Window {
    std::vector<model::KernelLogEntry> entries;  // time order as read
    uint64_t lost = 0;                           // records of the window that are not among them
  };
  // The records at or after `from`, and the loss marked there.
  Window Since(uint64_t from) const;

  size_t records() const { return entries_.size(); }
  uint64_t bytes() const { return bytes_; }
  uint64_t overwritten() const { return overwritten_; }  // pushed out by the bound, since the start

  // The memory a record counts for.
  static uint64_t SizeOf(const model::KernelLogEntry& e);

 private:
  struct Loss {
    uint64_t ts = 0;
    uint64_t count = 0;
  };
  void MarkLoss(uint64_t ts, uint64_t count);

  size_t max_records_;
  uint64_t max_bytes_;
  uint64_t window_ns_;
  std::deque<model::KernelLogEntry> entries_;
  std::deque<Loss> losses_;  // by time
  uint64_t bytes_ = 0;
  uint64_t overwritten_ = 0;
};

}  // namespace gpunoise::monitor
