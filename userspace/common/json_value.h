// A small JSON reader: parses a document into a tree of values, for the
// report's own output read back (per-node summaries of a fleet). Numbers
// keep their integer value exactly when they are integers (nanosecond
// timestamps do not fit a double's 53 bits).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace gpunoise {

class JsonValue {
 public:
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };

  Type type() const { return type_; }
  bool is_object() const { return type_ == Type::kObject; }
  bool is_array() const { return type_ == Type::kArray; }

  // Lookups that never fail: a missing member or the wrong type gives the
  // fallback (or a null value), so readers of optional fields stay short.
  const JsonValue& operator[](std::string_view key) const;
  const std::vector<JsonValue>& items() const { return array_; }
  bool Has(std::string_view key) const;
  int64_t Int(int64_t fallback = 0) const;
  uint64_t Uint(uint64_t fallback = 0) const;
  double Double(double fallback = 0) const;
  bool Bool(bool fallback = false) const;
  std::string String(std::string_view fallback = "") const;
  const std::map<std::string, JsonValue, std::less<>>& members() const { return object_; }

  friend class JsonParser;

 private:
  Type type_ = Type::kNull;
  bool bool_ = false;
  bool integral_ = false;  // the number was written without a fraction or exponent
  bool negative_ = false;
  uint64_t magnitude_ = 0;
  double number_ = 0;
  std::string string_;
  std::vector<JsonValue> array_;
  std::map<std::string, JsonValue, std::less<>> object_;
};

// Parses `text`; an error names the byte offset of the problem. Nesting is
// limited (64 levels) so hostile input cannot exhaust the stack.
Result<JsonValue> ParseJson(std::string_view text);

}  // namespace gpunoise
