// Translates the namespace-local ids in a containerized process's GPU
// fragments to host ids as the recorder appends them: the process and
// thread descriptors of its tracks get the host pid and tids that the
// kernel's scheduling data uses, so launch calls, NVTX ranges and flows sit
// on the same threads as their CPU time. Ids with no host task known (or
// more than one candidate) are never guessed: their tracks lose the
// process/thread binding, are named for what they are, and are counted.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "model/gpu_capture.h"
#include "model/pid_ns_map.h"

namespace gpunoise::gpu {

struct PidTranslationStats {
  uint64_t processes_translated = 0;  // processes in another pid namespace, mapped
  uint64_t processes_unmapped = 0;    // ... whose host process is not known
  uint64_t threads_translated = 0;
  uint64_t threads_unmapped = 0;      // threads not attached to any host thread
  uint64_t threads_unmapped_of_mapped = 0;  // ... of those, in processes that were mapped
  // One line per process with ids it could not map ("pid 1 in pid namespace
  // 4026532999: no host process known").
  std::vector<std::string> problems;
};

class FragmentPidTranslator {
 public:
  explicit FragmentPidTranslator(const model::PidNsMap* map) : map_(map) {}

  // The fragment whose packets Rewrite sees next, named `name`, holding what
  // its process did in [window_from, name.flush_ts]. False when its ids are
  // already the host's (the host's namespace, or a library that predates
  // namespaces): its packets need no rewrite.
  bool Select(const model::FragmentName& name, uint64_t window_from);
  // The packet with the selected fragment's pids and tids translated.
  Result<std::string> Rewrite(std::string_view packet);

  const PidTranslationStats& stats() const { return stats_; }

 private:
  struct Process {
    bool mapped = false;
    int32_t host_pid = 0;
    std::map<int32_t, std::optional<int32_t>> threads;  // ns tid -> host tid (nullopt: none)
  };
  std::optional<int32_t> HostTid(int32_t ns_tid);
  Result<std::string> RewriteTrack(std::string_view track);

  const model::PidNsMap* map_;
  std::map<std::pair<uint64_t, int>, Process> processes_;
  Process* current_ = nullptr;
  uint64_t ns_ = 0;
  int ns_pid_ = 0;
  uint64_t from_ = 0, to_ = 0;
  PidTranslationStats stats_;
};

}  // namespace gpunoise::gpu
