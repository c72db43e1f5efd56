// Reads the kernel log from /dev/kmsg during a recording: one record per
// read(2), "LEVEL+FACILITY,SEQ,USEC,FLAGS[,...];TEXT\n" followed by
// " KEY=VALUE\n" lines (SUBSYSTEM=, DEVICE=) (Documentation/ABI/testing/
// dev-kmsg). A sequence number that jumps, or a read that fails with EPIPE
// (the record was overwritten before we read it), is loss, counted.
//
// The record's USEC is the kernel's local clock (printk's local_clock()),
// not BOOTTIME: to place records on the trace clock the reader writes one
// record of its own into /dev/kmsg between two CLOCK_BOOTTIME reads and
// takes the difference to that record's USEC as the offset.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"
#include "model/kernel_log.h"

namespace gpunoise::collect {

// The record the reader writes to measure the clock offset (facility 1).
inline constexpr std::string_view kKmsgAnchorText = "gpunoise: kmsg clock anchor";

// One read(2) of /dev/kmsg. nullopt for a malformed record.
std::optional<model::KernelLogEntry> ParseKmsgEntry(std::string_view record);
// "\x09" escapes of the kernel's text, back to bytes.
std::string UnescapeKmsg(std::string_view text);

class KmsgReader {
 public:
  // Opens `path` positioned after the newest record (only what is logged
  // from now on is read) and measures the clock offset. `anchor` writes the
  // offset-measuring record; without it (a file, tests) the offset is 0.
  static Result<KmsgReader> Open(const std::string& path = "/dev/kmsg", bool anchor = true);

  // Reads every record available now (non-blocking), appended to `out`
  // with ts set and classified. The reader's own anchor record is left out.
  Status ReadAvailable(std::vector<model::KernelLogEntry>* out);

  uint64_t lost() const { return lost_; }          // records the sequence numbers skipped
  uint64_t read() const { return read_; }
  int64_t offset_ns() const { return offset_ns_; }  // BOOTTIME ns - local clock ns
  uint64_t offset_error_ns() const { return offset_error_ns_; }
  bool anchored() const { return anchored_; }

  // For tests: the offset and the sequence arithmetic without a device.
  void set_offset_ns_for_testing(int64_t offset) { offset_ns_ = offset; }
  void AccountForTesting(uint64_t seq) { Account(seq); }

 private:
  KmsgReader() = default;
  void Account(uint64_t seq);
  UniqueFd fd_;
  int64_t offset_ns_ = 0;
  uint64_t offset_error_ns_ = 0;
  bool anchored_ = false;
  std::optional<uint64_t> next_seq_;
  std::vector<model::KernelLogEntry> early_;  // read while looking for the anchor
  uint64_t lost_ = 0, read_ = 0;
};

}  // namespace gpunoise::collect
