#include "common/strings.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace gpunoise {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> SplitWhitespace(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      parts.push_back(s.substr(start));
      return parts;
    }
    parts.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::optional<int64_t> ParseInt64(std::string_view s) {
  s = Trim(s);
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::optional<uint64_t> ParseUint64(std::string_view s) {
  s = Trim(s);
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

namespace {
std::optional<double> ParseNumberPrefix(std::string_view s, std::string_view& rest) {
  size_t i = 0;
  while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) ++i;
  if (i == 0) return std::nullopt;
  std::string num(s.substr(0, i));
  char* end = nullptr;
  double v = std::strtod(num.c_str(), &end);
  if (end != num.c_str() + num.size()) return std::nullopt;
  rest = s.substr(i);
  return v;
}
}  // namespace

Result<uint64_t> ParseByteSize(std::string_view text) {
  std::string_view s = Trim(text), unit;
  auto v = ParseNumberPrefix(s, unit);
  if (!v) return MakeError("invalid size '{}'", text);
  double mult = 1;
  if (unit.empty() || unit == "B" || unit == "b") mult = 1;
  else if (unit == "k" || unit == "K" || unit == "KiB" || unit == "KB") mult = 1024.0;
  else if (unit == "m" || unit == "M" || unit == "MiB" || unit == "MB") mult = 1024.0 * 1024;
  else if (unit == "g" || unit == "G" || unit == "GiB" || unit == "GB") mult = 1024.0 * 1024 * 1024;
  else return MakeError("invalid size unit in '{}' (use k, M or G)", text);
  return static_cast<uint64_t>(std::llround(*v * mult));
}

Result<uint64_t> ParseDuration(std::string_view text) {
  std::string_view s = Trim(text), unit;
  auto v = ParseNumberPrefix(s, unit);
  if (!v) return MakeError("invalid duration '{}'", text);
  double mult;
  if (unit.empty() || unit == "s") mult = 1e9;
  else if (unit == "ms") mult = 1e6;
  else if (unit == "us") mult = 1e3;
  else if (unit == "ns") mult = 1;
  else if (unit == "m" || unit == "min") mult = 60e9;
  else if (unit == "h") mult = 3600e9;
  else return MakeError("invalid duration unit in '{}' (use ns, us, ms, s, m or h)", text);
  return static_cast<uint64_t>(std::llround(*v * mult));
}

std::string HumanBytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", v, units[u]);
}

std::string_view FixedCString(const char* data, size_t max_len) {
  return std::string_view(data, strnlen(data, max_len));
}

}  // namespace gpunoise
