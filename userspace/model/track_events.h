// Track events read back from a trace: what gpunoise (and other producers
// such as the CUPTI library) write as Perfetto TrackEvents (GPU work, launch
// calls, counters, the session summary), independent of their encoding.
#pragma once

#include <cstdint>
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
  bool AsInt64(int64_t* out) const;
  std::string ToString() const;
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

  const TrackArg* FindArg(std::string_view arg_name) const;
};

}  // namespace gpunoise::model
