// Decodes the kernel's ftrace ring-buffer sub-buffers ("pages") as
// per_cpu/cpuN/trace_pipe_raw hands them out, and as a persistent buffer
// keeps them across a warm reboot.
//
// A page is a header (events/header_page: u64 timestamp, local_t commit)
// followed by `commit` bytes of records. Each record starts with a 32-bit
// header (events/header_event): type_len:5, time_delta:27, then
//   type_len 1..28  a data record of type_len*4 bytes;
//   type_len 0      a data record whose length (+4) is in the next word;
//   type_len 29     padding: the rest of the page when time_delta is 0, else a
//                   discarded record of (next word) bytes;
//   type_len 30     time extend: next word << 27 | time_delta is added;
//   type_len 31     absolute timestamp (59 bits; the top bits come from the
//                   running time, kernel/trace/ring_buffer.c rb_fix_abs_ts).
// The commit word's bit 31 (RB_MISSED_EVENTS) says records were lost before
// this page; bit 30 (RB_MISSED_STORED) that their count sits after the data.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

#include "common/result.h"

namespace gpunoise::blackbox {

// Where the header fields are, from events/header_page (their offsets and
// sizes are the kernel's, 32-bit kernels have a 4-byte commit).
struct PageLayout {
  uint32_t timestamp_offset = 0;
  uint32_t commit_offset = 8;
  uint32_t commit_size = 8;
  uint32_t data_offset = 16;
  uint32_t data_size = 4080;  // sub-buffer size minus the header
  uint32_t page_size() const { return data_offset + data_size; }
};

// Parses events/header_page. The data size field is the sub-buffer's, so
// an instance with buffer_subbuf_size_kb set reads its own file.
Result<PageLayout> ParsePageLayout(std::string_view header_page_text);

// One data record: its timestamp on the instance's trace clock and its
// payload (starting with common_type).
struct RawRecord {
  uint64_t ts = 0;
  std::span<const uint8_t> payload;
};

// What one page held, beside its records.
struct PageSummary {
  uint64_t base_ts = 0;
  uint32_t commit_bytes = 0;
  bool missed_events = false;   // RB_MISSED_EVENTS
  bool missed_stored = false;   // RB_MISSED_STORED: missed_count is exact
  uint64_t missed_count = 0;
  uint32_t records = 0;
  uint32_t time_extends = 0;
  uint32_t time_stamps = 0;
  uint32_t discarded = 0;       // padding records of discarded events
  uint64_t first_ts = 0, last_ts = 0;  // of its data records (0: none)
};

// Why a page could not be decoded to its end. Records before the fault were
// delivered; the caller counts the page as damaged (Perfetto's
// FtraceParseStatus does the same).
enum class PageError {
  kNone,
  kShortPage,        // fewer bytes than a header
  kCommitTooLarge,   // commit beyond the data area
  kShortRecord,      // a record header or length word past the commit
  kBadLength,        // a length word smaller than itself
  kRecordOverflow,   // a record's payload past the commit
};
std::string_view PageErrorName(PageError error);

struct PageResult {
  PageSummary summary;
  PageError error = PageError::kNone;
};

// Decodes `page` and calls `on_record` for each data record in order.
// `*clock` carries the running timestamp between pages of one CPU (an
// absolute-timestamp record borrows its top bits); pass 0 for the first.
PageResult DecodePage(const PageLayout& layout, std::span<const uint8_t> page, uint64_t* clock,
                      const std::function<void(const RawRecord&)>& on_record);

}  // namespace gpunoise::blackbox
