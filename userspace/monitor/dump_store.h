// The flight recorder's dump directory and its quotas. Dumps are named
// gpunoise-flight-<UTC date>-<time>-<detector>.pftrace; only files with
// that prefix and suffix count and are ever deleted.
//
// Policy: the newest evidence wins. Before a new dump, the oldest dumps
// are deleted until there is room for one more under max-dumps; after it
// is written, the oldest are deleted until all dumps fit in max-dump-bytes.
// A dump that alone is larger than max-dump-bytes is deleted itself
// (result "too_big") and the older ones are kept.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace gpunoise::monitor {

struct DumpFile {
  std::string path;
  uint64_t bytes = 0;
  int64_t mtime_ns = 0;
};

class DumpStore {
 public:
  DumpStore(std::string dir, uint32_t max_dumps, uint64_t max_bytes);

  // Creates the directory (mode 0750) when missing.
  Status Prepare() const;
  // Our dumps, oldest first.
  std::vector<DumpFile> List() const;
  // A new path for a dump by `detector` at `unix_time_ns` (UTC), unique in
  // the directory.
  std::string NewPath(const std::string& detector, int64_t unix_time_ns) const;

  // Deletes the oldest dumps until one more fits under max-dumps. Returns
  // how many it deleted.
  size_t MakeRoom() const;
  // After `written` was committed: deletes the oldest dumps until the total
  // fits max-dump-bytes. Sets *too_big (and deletes `written`) when it
  // alone exceeds the quota. Returns how many it deleted (besides it).
  size_t EnforceBytes(const std::string& written, bool* too_big) const;

  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  uint32_t max_dumps_;
  uint64_t max_bytes_;
};

}  // namespace gpunoise::monitor
