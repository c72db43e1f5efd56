#include "common/json_value.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace gpunoise {
namespace {

const JsonValue& Null() {
  static const JsonValue null;
  return null;
}

}  // namespace

class JsonParser {
 public:
  explicit JsonParser(std::string_view text) : s_(text) {}

  Result<JsonValue> Document() {
    JsonValue v;
    GN_RETURN_IF_ERROR(Value(&v, 0));
    Space();
    if (pos_ != s_.size()) return Fail("text after the JSON value");
    return v;
  }

 private:
  Error Fail(std::string_view what) const { return MakeError("invalid JSON at byte {}: {}", pos_, what); }

  void Space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t')) ++pos_;
  }

  bool Literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  Status Value(JsonValue* v, int depth) {
    if (depth > 64) return Fail("nested too deeply");
    Space();
    if (pos_ >= s_.size()) return Fail("unexpected end");
    char c = s_[pos_];
    if (c == '{') return Object(v, depth);
    if (c == '[') return Array(v, depth);
    if (c == '"') {
      v->type_ = JsonValue::Type::kString;
      return String(&v->string_);
    }
    if (Literal("true") || Literal("false")) {
      v->type_ = JsonValue::Type::kBool;
      v->bool_ = s_[pos_ - 4] == 't';  // "true" ends 4 back at its 't'; "false" has an 'a' there
      return OkStatus();
    }
    if (Literal("null")) return OkStatus();
    if (c == '-' || (c >= '0' && c <= '9')) return Number(v);
    return Fail("expected a value");
  }

  Status Object(JsonValue* v, int depth) {
    v->type_ = JsonValue::Type::kObject;
    ++pos_;
    Space();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return OkStatus();
    }
    while (true) {
      Space();
      if (pos_ >= s_.size() || s_[pos_] != '"') return Fail("expected a member name");
      std::string key;
      GN_RETURN_IF_ERROR(String(&key));
      Space();
      if (pos_ >= s_.size() || s_[pos_] != ':') return Fail("expected ':'");
      ++pos_;
      JsonValue member;
      GN_RETURN_IF_ERROR(Value(&member, depth + 1));
      v->object_.insert_or_assign(std::move(key), std::move(member));
      Space();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == '}') {
        ++pos_;
        return OkStatus();
      }
      return Fail("expected ',' or '}'");
    }
  }

  Status Array(JsonValue* v, int depth) {
    v->type_ = JsonValue::Type::kArray;
    ++pos_;
    Space();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      return OkStatus();
    }
    while (true) {
      JsonValue item;
      GN_RETURN_IF_ERROR(Value(&item, depth + 1));
      v->array_.push_back(std::move(item));
      Space();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == ']') {
        ++pos_;
        return OkStatus();
      }
      return Fail("expected ',' or ']'");
    }
  }

  static void Utf8(uint32_t cp, std::string* out) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else {
      out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    }
  }

  Result<uint32_t> Hex4() {
    if (pos_ + 4 > s_.size()) return Fail("short \\u escape");
    uint32_t cp = 0;
    for (int i = 0; i < 4; ++i) {
      char h = s_[pos_++];
      cp <<= 4;
      if (h >= '0' && h <= '9') cp |= static_cast<uint32_t>(h - '0');
      else if (h >= 'a' && h <= 'f') cp |= static_cast<uint32_t>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') cp |= static_cast<uint32_t>(h - 'A' + 10);
      else return Fail("bad \\u escape");
    }
    return cp;
  }

  Status String(std::string* out) {
    ++pos_;  // the opening quote
    while (pos_ < s_.size()) {
      char c = s_[pos_++];
      if (c == '"') return OkStatus();
      if (static_cast<unsigned char>(c) < 0x20) return Fail("control character in a string");
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= s_.size()) break;
      char e = s_[pos_++];
      switch (e) {
        case '"': out->push_back('"'); break;
        case '\\': out->push_back('\\'); break;
        case '/': out->push_back('/'); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        case 'n': out->push_back('\n'); break;
        case 'r': out->push_back('\r'); break;
        case 't': out->push_back('\t'); break;
        case 'u': {
          GN_ASSIGN_OR_RETURN(uint32_t cp, Hex4());
          if (cp >= 0xd800 && cp < 0xdc00 && s_.substr(pos_, 2) == "\\u") {
            pos_ += 2;
            GN_ASSIGN_OR_RETURN(uint32_t low, Hex4());
            if (low < 0xdc00 || low >= 0xe000) return Fail("bad surrogate pair");
            cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
          }
          Utf8(cp, out);
          break;
        }
        default: return Fail("bad escape");
      }
    }
    return Fail("unterminated string");
  }

  Status Number(JsonValue* v) {
    size_t start = pos_;
    v->type_ = JsonValue::Type::kNumber;
    if (s_[pos_] == '-') {
      v->negative_ = true;
      ++pos_;
    }
    bool digits = false, overflow = false;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      uint64_t d = static_cast<uint64_t>(s_[pos_] - '0');
      if (v->magnitude_ > (std::numeric_limits<uint64_t>::max() - d) / 10) overflow = true;
      else v->magnitude_ = v->magnitude_ * 10 + d;
      ++pos_;
      digits = true;
    }
    if (!digits) return Fail("expected digits");
    v->integral_ = !overflow;
    if (pos_ < s_.size() && (s_[pos_] == '.' || s_[pos_] == 'e' || s_[pos_] == 'E')) {
      v->integral_ = false;
      while (pos_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.' ||
                                  s_[pos_] == 'e' || s_[pos_] == 'E' || s_[pos_] == '+' || s_[pos_] == '-'))
        ++pos_;
    }
    std::string text(s_.substr(start, pos_ - start));
    char* end = nullptr;
    v->number_ = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size()) return Fail("bad number");
    return OkStatus();
  }

  std::string_view s_;
  size_t pos_ = 0;
};

const JsonValue& JsonValue::operator[](std::string_view key) const {
  if (type_ != Type::kObject) return Null();
  auto it = object_.find(key);
  return it == object_.end() ? Null() : it->second;
}

bool JsonValue::Has(std::string_view key) const { return type_ == Type::kObject && object_.find(key) != object_.end(); }

int64_t JsonValue::Int(int64_t fallback) const {
  if (type_ != Type::kNumber) return fallback;
  if (integral_ && magnitude_ <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return negative_ ? -static_cast<int64_t>(magnitude_) : static_cast<int64_t>(magnitude_);
  if (!std::isfinite(number_)) return fallback;
  return static_cast<int64_t>(number_);
}

uint64_t JsonValue::Uint(uint64_t fallback) const {
  if (type_ != Type::kNumber) return fallback;
  if (integral_) return negative_ ? fallback : magnitude_;
  if (!std::isfinite(number_) || number_ < 0) return fallback;
  return static_cast<uint64_t>(number_);
}

double JsonValue::Double(double fallback) const { return type_ == Type::kNumber ? number_ : fallback; }
bool JsonValue::Bool(bool fallback) const { return type_ == Type::kBool ? bool_ : fallback; }
std::string JsonValue::String(std::string_view fallback) const {
  return type_ == Type::kString ? string_ : std::string(fallback);
}

Result<JsonValue> ParseJson(std::string_view text) { return JsonParser(text).Document(); }

}  // namespace gpunoise
