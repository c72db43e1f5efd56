// `gpunoise record --start-at TIME`: the wall-clock (REALTIME) instant at
// which the recording's gate opens, so recordings launched on many nodes
// cover the same window however long each took to start.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace gpunoise {

// "+5s", "+500ms" (from `now_realtime_ns`), or an ISO 8601 time
// "2026-12-01T12:40:00Z", "2026-12-01 12:40:00.250+01:00" (no zone: UTC, the
// same instant on every node whatever its time zone) -> REALTIME ns.
Result<int64_t> ParseStartAt(std::string_view text, int64_t now_realtime_ns);

// "2026-12-01T12:40:00.250Z"
std::string FormatRealtime(int64_t realtime_ns);

// Sleeps until CLOCK_REALTIME reaches `realtime_ns`, or `stop_fd` (if >= 0)
// becomes readable. The clock is read again after each wake, so a clock
// stepped by NTP meanwhile is followed.
void WaitUntilRealtime(int64_t realtime_ns, int stop_fd);

}  // namespace gpunoise
