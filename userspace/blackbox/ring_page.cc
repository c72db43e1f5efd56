#include "blackbox/ring_page.h"

#include <cstring>

#include "collect/tracefs_format.h"

namespace gpunoise::blackbox {
namespace {

// include/linux/ring_buffer.h enum ring_buffer_type.
constexpr uint32_t kTypePadding = 29;
constexpr uint32_t kTypeTimeExtend = 30;
constexpr uint32_t kTypeTimeStamp = 31;
constexpr uint32_t kTsShift = 27;  // TS_SHIFT
// kernel/trace/ring_buffer.c: RB_MISSED_EVENTS, RB_MISSED_STORED; the
// length is what is left (sub-buffers are at most 1 MiB, so well under).
constexpr uint64_t kMissedEvents = 1ull << 31;
constexpr uint64_t kMissedStored = 1ull << 30;
constexpr uint64_t kLengthMask = (1ull << 30) - 1;
// An absolute timestamp has 59 bits (rb_fix_abs_ts: TS_MSB).
constexpr uint64_t kTsMsb = 0xfull << 59;

template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

uint64_t LoadUint(const uint8_t* p, uint32_t size) {
  switch (size) {
    case 1: return Load<uint8_t>(p);
    case 2: return Load<uint16_t>(p);
    case 4: return Load<uint32_t>(p);
    default: return Load<uint64_t>(p);
  }
}

}  // namespace

std::string_view PageErrorName(PageError error) {
  switch (error) {
    case PageError::kNone: return "none";
    case PageError::kShortPage: return "short page";
    case PageError::kCommitTooLarge: return "commit beyond the page";
    case PageError::kShortRecord: return "record header past the commit";
    case PageError::kBadLength: return "record length smaller than its length word";
    case PageError::kRecordOverflow: return "record past the commit";
  }
  return "?";
}

Result<PageLayout> ParsePageLayout(std::string_view header_page_text) {
  // The same "field:" lines as an event's format file.
  auto format = collect::ParseTraceFormat(header_page_text);
  if (!format.ok()) return MakeError("failed to parse header_page: {}", format.error().message);
  PageLayout layout;
  bool have_ts = false, have_commit = false, have_data = false;
  for (const collect::TraceField& f : format->fields) {
    if (f.name == "timestamp") {
      layout.timestamp_offset = f.offset;
      have_ts = f.size == 8;
    } else if (f.name == "commit") {
      layout.commit_offset = f.offset;
      layout.commit_size = f.size;
      have_commit = f.size == 4 || f.size == 8;
    } else if (f.name == "data") {
      layout.data_offset = f.offset;
      layout.data_size = f.size;
      have_data = f.size > 0;
    }
  }
  if (!have_ts || !have_commit || !have_data)
    return MakeError("header_page lacks a u64 timestamp, a 4/8-byte commit or the data field");
  return layout;
}

PageResult DecodePage(const PageLayout& layout, std::span<const uint8_t> page, uint64_t* clock,
                      const std::function<void(const RawRecord&)>& on_record) {
  PageResult r;
  PageSummary& s = r.summary;
  if (page.size() < layout.data_offset) {
    r.error = PageError::kShortPage;
    return r;
  }
  s.base_ts = Load<uint64_t>(page.data() + layout.timestamp_offset);
  uint64_t commit = LoadUint(page.data() + layout.commit_offset, layout.commit_size);
  s.missed_events = commit & kMissedEvents;
  s.missed_stored = commit & kMissedStored;
  uint64_t length = commit & kLengthMask;
  size_t available = page.size() - layout.data_offset;
  if (length > layout.data_size || length > available) {
    r.error = PageError::kCommitTooLarge;
    return r;
  }
  s.commit_bytes = static_cast<uint32_t>(length);
  const uint8_t* data = page.data() + layout.data_offset;
  // The kernel stores the count after the data when it fits (an unsigned
  // long, ring_buffer_read_page).
  if (s.missed_stored) {
    uint32_t word = layout.commit_size;
    if (length + word <= available) s.missed_count = LoadUint(data + length, word);
    else s.missed_stored = false;
  }

  uint64_t ts = s.base_ts;
  size_t pos = 0;
  while (pos < length) {
    if (pos + 4 > length) {
      r.error = PageError::kShortRecord;
      break;
    }
    uint32_t header = Load<uint32_t>(data + pos);
    uint32_t type_len = header & 0x1f;
    uint64_t delta = header >> 5;
    pos += 4;
    if (type_len == kTypePadding) {
      if (delta == 0) break;  // the rest of the page is padding
      if (pos + 4 > length) {
        r.error = PageError::kShortRecord;
        break;
      }
      uint32_t len = Load<uint32_t>(data + pos);
      // The length counts its own word (rb_event_length: array[0] + 4).
      if (len < 4) {
        r.error = PageError::kBadLength;
        break;
      }
      // A discarded record still moved the writer's clock by its delta.
      ts += delta;
      pos += len;
      ++s.discarded;
      continue;
    }
    if (type_len == kTypeTimeExtend || type_len == kTypeTimeStamp) {
      if (pos + 4 > length) {
        r.error = PageError::kShortRecord;
        break;
      }
      uint64_t value = (static_cast<uint64_t>(Load<uint32_t>(data + pos)) << kTsShift) | delta;
      pos += 4;
      if (type_len == kTypeTimeExtend) {
        ts += value;
        ++s.time_extends;
      } else {
        // rb_fix_abs_ts: the 59-bit value borrows the running top bits.
        if (ts & kTsMsb) {
          value |= ts & kTsMsb;
          if (value < ts) value += 1ull << 59;
        }
        ts = value;
        ++s.time_stamps;
      }
      continue;
    }
    size_t size;
    if (type_len == 0) {
      if (pos + 4 > length) {
        r.error = PageError::kShortRecord;
        break;
      }
      uint32_t len = Load<uint32_t>(data + pos);
      if (len < 4) {
        r.error = PageError::kBadLength;
        break;
      }
      pos += 4;
      size = len - 4;
    } else {
      size = type_len * 4u;
    }
    if (pos + size > length) {
      r.error = PageError::kRecordOverflow;
      break;
    }
    ts += delta;
    if (s.records == 0) s.first_ts = ts;
    s.last_ts = ts;
    ++s.records;
    on_record(RawRecord{ts, page.subspan(layout.data_offset + pos, size)});
    pos += size;
  }
  *clock = ts;
  return r;
}

}  // namespace gpunoise::blackbox
