// `gpunoise blackbox collect`: reads the persistent instance the previous
// boot wrote (or, for tests and drills, a live instance of this boot through
// the same path), decodes it with the id table its markers carry, and
// writes a .pftrace in the same native ftrace messages `record` writes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "blackbox/buffer_decoder.h"
#include "blackbox/instance_reader.h"
#include "blackbox/last_boot_info.h"
#include "blackbox/markers.h"
#include "common/result.h"

namespace gpunoise::blackbox {

inline constexpr std::string_view kDefaultInstance = "gpunoise_blackbox";

struct CollectOptions {
  std::string tracefs = "/sys/kernel/tracing";
  std::string instance = std::string(kDefaultInstance);
  // A live instance of this boot (no last_boot_info, or "# Current"): the
  // test and drill path. Without it such an instance is refused.
  bool live = false;
  std::string output;
  std::string pstore_dir = "/sys/fs/pstore";
  std::string kallsyms = "/proc/kallsyms";
  // Where arm saved the id table (used when the buffer's own markers were
  // overwritten); "" for none.
  std::string state_dir = "/var/lib/gpunoise/blackbox";
  std::string tool_version;
  std::string command_line;
};

struct PstoreFile {
  std::string name;  // "dmesg-ramoops-0"
  std::string text;
};

struct CollectResult {
  std::string output;
  std::vector<CpuDecodeStats> cpus;
  std::vector<CpuBufferStats> buffer_stats;  // per CPU, as read before the pages
  MarkerSet markers;
  std::string table_source;  // "the buffer's markers" or the saved file's path
  std::optional<LastBootInfo> last_boot;
  std::optional<int64_t> text_delta;  // previous boot -> this boot kernel addresses
  uint64_t symbolized = 0;
  uint64_t log_records = 0;           // printk:console records and pstore lines written as log            // addresses given a symbol name
  std::vector<PstoreFile> pstore;
  std::string boot_id;                // of the boot that wrote the buffer
  uint64_t events = 0, generic = 0, lost = 0;
};

Result<CollectResult> Collect(const CollectOptions& options);

// The collector's own summary for people (before the report of the trace).
std::string FormatCollectSummary(const CollectResult& result);

}  // namespace gpunoise::blackbox
