// A small streaming JSON writer: objects, arrays, escaped strings, numbers.
// Enough for the report's output; no parsing, no DOM.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpunoise::report_export {

class JsonWriter {
 public:
  explicit JsonWriter(std::string* out, bool pretty = true) : out_(out), pretty_(pretty) {}

  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();
  void Key(std::string_view key);

  void String(std::string_view v);
  void Int(int64_t v);
  void Uint(uint64_t v);
  void Double(double v);  // non-finite values become null
  void Bool(bool v);
  void Null();

  // Key + value in one call.
  void Field(std::string_view key, std::string_view v) { Key(key); String(v); }
  void Field(std::string_view key, const char* v) { Key(key); String(v); }
  void Field(std::string_view key, const std::string& v) { Key(key); String(v); }
  void Field(std::string_view key, int64_t v) { Key(key); Int(v); }
  void Field(std::string_view key, int32_t v) { Key(key); Int(v); }
  void Field(std::string_view key, uint64_t v) { Key(key); Uint(v); }
  void Field(std::string_view key, uint32_t v) { Key(key); Uint(v); }
  void Field(std::string_view key, double v) { Key(key); Double(v); }
  void Field(std::string_view key, bool v) { Key(key); Bool(v); }

 private:
  void BeforeValue();
  void Newline();

  std::string* out_;
  bool pretty_;
  struct Level {
    bool first = true;
    bool is_object = false;
  };
  std::vector<Level> stack_;
  bool after_key_ = false;
};

std::string JsonEscape(std::string_view s);

}  // namespace gpunoise::report_export
