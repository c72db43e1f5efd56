// Collecting the CUPTI library's fragment files (model/gpu_capture.h) into
// a recording, and counting what the GPU side lost on the way.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <sys/types.h>

#include "common/result.h"
#include "common/unique_fd.h"

namespace gpunoise::perfetto {
class TraceMerger;
}

namespace gpunoise::gpu {

class FragmentPidTranslator;

// Opens a fragment the way a root recorder must read a directory a user
// writes into: not through a symlink (O_NOFOLLOW), never blocking on a FIFO
// (O_NONBLOCK), and checked with fstat on the opened fd, not a stat that the
// user could race: a regular file owned by `dir_owner`, the directory's
// owner (so a hard link to someone else's file is refused too). The error is
// "PATH: why".
Result<UniqueFd> OpenFragment(const std::string& path, uid_t dir_owner);

// The fragment files of `dir` around a collection window [from_ts, to_ts]
// (CLOCK_BOOTTIME by flush time; to_ts 0: no upper limit), each list in
// flush order across processes (ties by process), so the fragments' clock
// snapshots reach the trace in time order. Temporary files (a flush in
// progress) are never listed.
struct FragmentWindow {
  std::vector<std::string> files;   // flushed within the window: what the trace gets
  std::vector<std::string> before;  // flushed before it: each process's CUPTI count at the start
  uint64_t late = 0;                // flushed after it: GPU data the trace does not get
  // Named like fragments but refused by OpenFragment, one "PATH: why" line
  // each (in no list above).
  std::vector<std::string> refused;
};
Result<FragmentWindow> ListFragmentWindow(const std::string& dir, uint64_t from_ts, uint64_t to_ts);

// The same over several directories (a node agent's per-pod directories,
// collect/pod_fragment_dirs.h), merged into one flush order. A directory
// that cannot be listed is a `refused` line, not an error: the others'
// fragments are worth keeping.
FragmentWindow ListFragmentWindows(const std::vector<std::string>& dirs, uint64_t from_ts, uint64_t to_ts);

// Only the files within the window.
Result<std::vector<std::string>> ListGpuFragments(const std::string& dir, uint64_t from_ts,
                                                  uint64_t to_ts);

struct FragmentsAppended {
  size_t files = 0;
  size_t processes = 0;
  uint64_t packets = 0;
  uint64_t unreadable = 0;  // fragments of which nothing reached the trace
  uint64_t truncated = 0;   // fragments cut short: the packets before the damage are in
  // CUPTI's dropped records within the window, added over processes: each
  // process's count at its last fragment in `files`, less its count at its
  // last fragment in `before` (0 when there is none: then the count covers
  // the process's whole capture up to the window's end).
  uint64_t cupti_dropped_records = 0;
  // Chunks of GPU data the libraries dropped while their directories were
  // not writable yet (a pod directory not handed over), the same way.
  uint64_t chunks_not_written = 0;
  std::vector<std::string> problems;  // one line per fragment that was unreadable or cut short
  // Processes whose library did not capture them (another CUPTI client):
  // "pid 4242 in pid namespace N: another CUPTI client ...".
  std::vector<std::string> not_captured;
};

// Appends each fragment, in the order given (ListFragmentWindow's flush
// order keeps the clock snapshots in time order), with its own sequence ids, opened by OpenFragment
// (a fragment refused now is unreadable, with its line in `problems`). A corrupt fragment keeps
// the packets before the damage and is reported, never fatal: the kernel
// side and the other processes' data are worth keeping.
// With `translator`, fragments of processes in other pid namespaces get
// their ids translated to host ids (fragment_pid_translator.h).
FragmentsAppended AppendGpuFragments(const std::vector<std::string>& files,
                                     perfetto::TraceMerger& merger,
                                     const std::vector<std::string>& before = {},
                                     FragmentPidTranslator* translator = nullptr);

}  // namespace gpunoise::gpu
