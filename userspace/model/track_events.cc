#include "model/track_events.h"

#include <charconv>

#include <fmt/format.h>

namespace gpunoise::model {

bool TrackArg::AsInt64(int64_t* out) const {
  switch (type) {
    case Type::kInt: *out = int_value; return true;
    case Type::kUint: *out = static_cast<int64_t>(uint_value); return true;
    case Type::kBool: *out = int_value; return true;
    case Type::kDouble: *out = static_cast<int64_t>(double_value); return true;
    case Type::kString: {
      const char* b = string_value.data();
      const char* e = b + string_value.size();
      auto [p, ec] = std::from_chars(b, e, *out);
      return ec == std::errc() && p == e && b != e;
    }
  }
  return false;
}

std::string TrackArg::ToString() const {
  switch (type) {
    case Type::kInt: return std::to_string(int_value);
    case Type::kUint: return std::to_string(uint_value);
    case Type::kBool: return int_value ? "true" : "false";
    case Type::kDouble: return fmt::format("{}", double_value);
    case Type::kString: return string_value;
  }
  return {};
}

const TrackArg* TrackEventRecord::FindArg(std::string_view arg_name) const {
  for (const auto& a : args)
    if (a.name == arg_name) return &a;
  return nullptr;
}

}  // namespace gpunoise::model
