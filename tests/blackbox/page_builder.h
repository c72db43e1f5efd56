// Builds ring-buffer pages byte by byte the way kernel/trace/ring_buffer.c
// lays them out, so decoder tests can exercise every record type.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

namespace gpunoise::blackbox::testing {

class PageBuilder {
 public:
  explicit PageBuilder(uint64_t base_ts, size_t page_size = 4096) : page_(page_size, 0) {
    std::memcpy(page_.data(), &base_ts, 8);
  }
  // A data record of `payload` (padded to 4 bytes); large ones use the
  // type_len 0 form with the length word.
  PageBuilder& Data(uint32_t delta, const std::vector<uint8_t>& payload, bool force_long = false) {
    size_t padded = (payload.size() + 3) & ~size_t{3};
    if (padded <= 28 * 4 && !force_long) {
      Header(static_cast<uint32_t>(padded / 4), delta);
    } else {
      Header(0, delta);
      Word(static_cast<uint32_t>(padded + 4));
    }
    size_t at = pos_;
    pos_ += padded;
    std::memcpy(page_.data() + 16 + at, payload.data(), payload.size());
    return *this;
  }
  PageBuilder& TimeExtend(uint64_t delta) {
    Header(30, static_cast<uint32_t>(delta & ((1u << 27) - 1)));
    Word(static_cast<uint32_t>(delta >> 27));
    return *this;
  }
  PageBuilder& TimeStamp(uint64_t abs) {
    Header(31, static_cast<uint32_t>(abs & ((1u << 27) - 1)));
    Word(static_cast<uint32_t>(abs >> 27));
    return *this;
  }
  // A discarded record of `bytes` (its own length word included).
  PageBuilder& Discarded(uint32_t delta, uint32_t bytes) {
    Header(29, delta);
    Word(bytes);
    pos_ += bytes - 4;
    return *this;
  }
  // Missed events flag, with the count stored after the data if `count`.
  PageBuilder& Missed(uint64_t count, bool stored) {
    missed_ = true;
    missed_count_ = count;
    stored_ = stored;
    return *this;
  }
  std::vector<uint8_t> Build() const {
    std::vector<uint8_t> p = page_;
    uint64_t commit = pos_;
    if (missed_) commit |= 1ull << 31;
    if (stored_) {
      commit |= 1ull << 30;
      std::memcpy(p.data() + 16 + pos_, &missed_count_, 8);
    }
    std::memcpy(p.data() + 8, &commit, 8);
    return p;
  }

 private:
  void Header(uint32_t type_len, uint32_t delta) { Word(type_len | (delta << 5)); }
  void Word(uint32_t w) {
    std::memcpy(page_.data() + 16 + pos_, &w, 4);
    pos_ += 4;
  }
  std::vector<uint8_t> page_;
  size_t pos_ = 0;
  bool missed_ = false, stored_ = false;
  uint64_t missed_count_ = 0;
};

// A record payload: common_type, flags, preempt count, pid, then `fields`.
inline std::vector<uint8_t> Payload(uint16_t type, int32_t pid, const std::vector<uint8_t>& fields,
                                    uint8_t flags = 0) {
  std::vector<uint8_t> p(8, 0);
  std::memcpy(p.data(), &type, 2);
  p[2] = flags;
  std::memcpy(p.data() + 4, &pid, 4);
  p.insert(p.end(), fields.begin(), fields.end());
  return p;
}

template <typename T>
void Put(std::vector<uint8_t>& v, T value) {
  size_t at = v.size();
  v.resize(at + sizeof(T));
  std::memcpy(v.data() + at, &value, sizeof(T));
}

}  // namespace gpunoise::blackbox::testing
