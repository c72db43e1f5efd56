#include "report/json_writer.h"

#include <cmath>

#include <fmt/format.h>

namespace gpunoise::report_export {

std::string JsonEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) out += fmt::format("\\u{:04x}", c);
        else out += static_cast<char>(c);
    }
  }
  return out;
}

void JsonWriter::Newline() {
  if (!pretty_) return;
  *out_ += '\n';
  out_->append(stack_.size() * 2, ' ');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (stack_.empty()) return;
  Level& l = stack_.back();
  if (!l.first) *out_ += ',';
  l.first = false;
  Newline();
}

void JsonWriter::BeginObject() {
  BeforeValue();
  *out_ += '{';
  stack_.push_back({true, true});
}

void JsonWriter::EndObject() {
  bool empty = stack_.back().first;
  stack_.pop_back();
  if (!empty) Newline();
  *out_ += '}';
  if (stack_.empty() && pretty_) *out_ += '\n';
}

void JsonWriter::BeginArray() {
  BeforeValue();
  *out_ += '[';
  stack_.push_back({true, false});
}

void JsonWriter::EndArray() {
  bool empty = stack_.back().first;
  stack_.pop_back();
  if (!empty) Newline();
  *out_ += ']';
}

void JsonWriter::Key(std::string_view key) {
  BeforeValue();
  *out_ += '"';
  *out_ += JsonEscape(key);
  *out_ += pretty_ ? "\": " : "\":";
  after_key_ = true;
}

void JsonWriter::String(std::string_view v) {
  BeforeValue();
  *out_ += '"';
  *out_ += JsonEscape(v);
  *out_ += '"';
}

void JsonWriter::Int(int64_t v) {
  BeforeValue();
  *out_ += std::to_string(v);
}

void JsonWriter::Uint(uint64_t v) {
  BeforeValue();
  *out_ += std::to_string(v);
}

void JsonWriter::Double(double v) {
  BeforeValue();
  if (!std::isfinite(v)) {
    *out_ += "null";
    return;
  }
  // Whole numbers (nanoseconds, counts) print exactly; others in the
  // shortest form that reads back to the same double.
  if (std::fabs(v) < 9e15 && v == static_cast<double>(static_cast<int64_t>(v)))
    *out_ += std::to_string(static_cast<int64_t>(v));
  else
    *out_ += fmt::format("{}", v);
}

void JsonWriter::Bool(bool v) {
  BeforeValue();
  *out_ += v ? "true" : "false";
}

void JsonWriter::Null() {
  BeforeValue();
  *out_ += "null";
}

}  // namespace gpunoise::report_export
