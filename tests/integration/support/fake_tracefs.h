// A stand-in tracefs for the recorder (GPUNOISE_TRACEFS_FOR_TESTING): the
// way a test shows what gpunoise does on a kernel that lacks tracepoints.
#pragma once

#include <string>
#include <vector>

namespace gpunoise::testing {

// A directory (under MakeTempDir) that lists only `events`
// ("category/name"), each with the real tracepoint's id, so that classic
// attachment (`record --attach tracepoint`) still works for those.
std::string FakeTracefs(const std::vector<std::string>& events);

}  // namespace gpunoise::testing
