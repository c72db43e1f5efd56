#include "common/start_at.h"

#include <poll.h>
#include <time.h>

#include <algorithm>
#include <cctype>
#include <cstdint>

#include <fmt/format.h>

#include "common/strings.h"

namespace gpunoise {
namespace {

bool Digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

int64_t RealtimeNow() {
  struct timespec ts {};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

Result<int64_t> ParseStartAt(std::string_view text, int64_t now_realtime_ns) {
  text = Trim(text);
  if (!text.empty() && text[0] == '+') {
    auto d = ParseDuration(text.substr(1));
    if (!d.ok()) return MakeError("--start-at +DURATION: {}", d.error().message);
    return now_realtime_ns + static_cast<int64_t>(*d);
  }
  const auto bad = [&] {
    return MakeError("--start-at wants +DURATION (+5s) or an ISO time (2026-12-01T12:40:00Z), got '{}'", text);
  };
  int year, month, day, hour, minute, second;
  if (!Digits(text, 0, 4, &year) || text.size() < 19 || text[4] != '-' || !Digits(text, 5, 2, &month) ||
      text[7] != '-' || !Digits(text, 8, 2, &day) || (text[10] != 'T' && text[10] != ' ') ||
      !Digits(text, 11, 2, &hour) || text[13] != ':' || !Digits(text, 14, 2, &minute) || text[16] != ':' ||
      !Digits(text, 17, 2, &second))
    return bad();
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return bad();
  size_t pos = 19;
  int64_t frac_ns = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    int64_t scale = 100'000'000;
    size_t start = pos;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
      frac_ns += (text[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == start) return bad();
  }
  int64_t offset_s = 0;
  if (pos < text.size()) {
    if (text[pos] == 'Z' && pos + 1 == text.size()) {
      ++pos;
    } else if ((text[pos] == '+' || text[pos] == '-') && pos + 6 == text.size() && text[pos + 3] == ':') {
      int oh, om;
      if (!Digits(text, pos + 1, 2, &oh) || !Digits(text, pos + 4, 2, &om)) return bad();
      offset_s = (text[pos] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
      pos += 6;
    } else {
      return bad();
    }
  }
  // timegm: the fields as UTC, whatever this node's time zone.
  struct tm tm {};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  int64_t seconds = static_cast<int64_t>(::timegm(&tm)) - offset_s;
  // Nanoseconds since 1970 fit int64 from 1677 to 2262; outside that (the
  // zero time "0001-01-01T00:00:00Z" Go and Alertmanager write, a hostile
  // year 9999) the product would overflow.
  constexpr int64_t kMaxSeconds = INT64_MAX / 1'000'000'000 - 1;
  if (seconds > kMaxSeconds || seconds < -kMaxSeconds) return bad();
  return seconds * 1'000'000'000 + frac_ns;
}

std::string FormatRealtime(int64_t ns) {
  time_t s = static_cast<time_t>(ns / 1'000'000'000);
  struct tm tm {};
  ::gmtime_r(&s, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec, (ns % 1'000'000'000) / 1'000'000);
}

void WaitUntilRealtime(int64_t realtime_ns, int stop_fd) {
  while (true) {
    int64_t left = realtime_ns - RealtimeNow();
    if (left <= 0) return;
    // Wake at most every 100 ms to re-read the clock; the last stretch by
    // nanosleep, which poll's millisecond timeout cannot time finely.
    if (left > 2'000'000) {
      struct pollfd p {stop_fd, POLLIN, 0};
      int ms = static_cast<int>(std::min<int64_t>(100, (left - 1'000'000) / 1'000'000));
      if (::poll(&p, stop_fd >= 0 ? 1 : 0, ms) > 0) return;
      continue;
    }
    struct timespec ts {0, static_cast<long>(left)};
    ::nanosleep(&ts, nullptr);
  }
}

}  // namespace gpunoise
