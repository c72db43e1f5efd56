// Track events read back from a trace: what gpunoise (and other producers
// such as the CUPTI library) write as Perfetto TrackEvents (GPU work, launch
// calls, counters, the session summary), independent of their encoding.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace gpunoise::model {

struct TrackInfo {
  uint64_t uuid = 0;
  uint64_t parent_uuid = 0;
  std::string name;
  int32_t pid = 0;  // process or thread track: the process
  int32_t tid = 0;  // thread track: the Linux thread
  bool is_counter = false;
};

struct TrackArg {
  enum class Type : uint8_t { kInt, kUint, kDouble, kBool, kString };
  std::string name;
  Type type = Type::kInt;
  int64_t int_value = 0;
  uint64_t uint_value = 0;
  double double_value = 0;
  std::string string_value;

  // The value as a number when it is one (strings of digits included).
  bool AsInt64(int64_t* out) const {
    switch (type) {
      case Type::kInt:
      case Type::kBool: *out = int_value; return true;
      case Type::kUint: *out = static_cast<int64_t>(uint_value); return true;
      case Type::kDouble:
        // A NaN, an infinity or a value past int64's range (a hostile or
        // corrupt trace) has no integer: converting it is undefined.
        if (!(double_value >= -0x1p63 && double_value < 0x1p63)) return false;
        *out = static_cast<int64_t>(double_value);
        return true;
      case Type::kString: {
        const char* b = string_value.data();
        const char* e = b + string_value.size();
        auto [p, ec] = std::from_chars(b, e, *out);
        return ec == std::errc() && p == e && b != e;
      }
    }
    return false;
  }
  double AsDouble() const {
    if (type == Type::kDouble) return double_value;
    if (type == Type::kUint) return static_cast<double>(uint_value);
    int64_t v = 0;
    return AsInt64(&v) ? static_cast<double>(v) : 0;
  }
  std::string ToString() const {
    switch (type) {
      case Type::kInt: return std::to_string(int_value);
      case Type::kUint: return std::to_string(uint_value);
      case Type::kBool: return int_value ? "true" : "false";
      case Type::kDouble: {
        char buf[32];
        std::snprintf(buf, sizeof(buf), "%g", double_value);
        return buf;
      }
      case Type::kString: return string_value;
    }
    return {};
  }
};

enum class TrackEventType : uint8_t { kSliceBegin, kSliceEnd, kInstant, kCounter };

struct TrackEventRecord {
  uint64_t ts = 0;
  uint64_t track_uuid = 0;
  uint32_t sequence_id = 0;
  TrackEventType type = TrackEventType::kInstant;
  std::string_view name;      // valid during the callback only
  std::string_view category;  // first category, if any
  double counter_value = 0;
  uint64_t correlation_id = 0;
  std::vector<uint64_t> flow_ids;
  std::vector<uint64_t> terminating_flow_ids;
  std::vector<TrackArg> args;

  const TrackArg* FindArg(std::string_view arg_name) const {
    for (const auto& a : args)
      if (a.name == arg_name) return &a;
    return nullptr;
  }
};

}  // namespace gpunoise::model
