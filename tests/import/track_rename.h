// Rewrites a trace file's track names, for tests that check the report does
// not read them (model/track_identity.h).
#pragma once

#include <string>

namespace gpunoise::testing {

struct RenameResult {
  std::string bytes;  // the trace, re-encoded
  int renamed = 0;    // track names rewritten
};

// Decodes every packet of `trace` (a whole trace file's bytes), gives every
// named track (counter tracks included) a meaningless name ("track 17") and
// every track identity instant another, and encodes it again. With
// `drop_identities` the identity instants are removed too: what a trace
// written before they existed looks like.
RenameResult RenameTracks(const std::string& trace, bool rename, bool drop_identities);

// The bytes of the file at `path` (a test failure and "" if unreadable).
std::string TraceFileBytes(const std::string& path);

}  // namespace gpunoise::testing
