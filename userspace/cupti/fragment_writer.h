// Writes one process's trace chunks into the fragment directory, each as a
// complete file that appears under its final name only when fully written
// (temp file + rename), so a reader never sees half a chunk and a crash
// loses at most the chunk being built.
//
// A directory that is not writable yet (a Kubernetes node agent hands a
// pod's directory to the pod's uid once its first process runs:
// docs/deploy/kubernetes/README.md) holds chunks back in memory, oldest
// first, up to a bound; each write tries the directory again and writes
// what was held back, in order. Chunks beyond the bound are dropped, oldest
// first, and counted.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <utility>

namespace gpunoise::cupti {

class FragmentWriter {
 public:
  // keep_ns > 0: chunks older than that (by flush time) are deleted as new
  // ones are written, so a long-running job does not fill the disk.
  FragmentWriter(std::string dir, int pid, uint64_t keep_ns);
  // `pid` inside pid namespace `pid_ns` (inode of /proc/self/ns/pid; 0: it
  // could not be read): the name says so, for the recorder to translate.
  FragmentWriter(std::string dir, int pid, uint64_t pid_ns, uint64_t keep_ns);

  // Writes `chunk` as the fragment flushed at `flush_ts` (CLOCK_BOOTTIME),
  // or holds it back while the directory is not writable. Returns false
  // with `error` set ("failed to write DIR/x: No space left") when data was
  // lost.
  bool Write(std::string_view chunk, uint64_t flush_ts, std::string* error);

  // Bytes held back at most while the directory is not writable (0: none;
  // a chunk is then lost as before).
  void set_pending_limit(size_t bytes) { pending_limit_ = bytes; }

  uint64_t chunks_written() const { return chunks_written_; }
  uint64_t bytes_written() const { return bytes_written_; }
  size_t chunks_pending() const { return pending_.size(); }
  // Chunks dropped from the held-back ones (the bound was reached).
  uint64_t chunks_lost() const { return chunks_lost_; }
  // A line for the process's stderr when the writer starts holding chunks
  // back, and when it first drops one; "" otherwise. Each is handed out once.
  std::string TakeNote() { return std::exchange(note_, {}); }

 private:
  // Writes one chunk under its final name; false with `error` set.
  bool WriteFile(std::string_view chunk, uint64_t flush_ts, std::string* error);
  // Why the directory cannot be written now (EACCES, ENOENT, ...), "" if it can.
  std::string NotWritableReason() const;

  std::string dir_;
  int pid_;
  bool has_pid_ns_ = false;
  uint64_t pid_ns_ = 0;
  uint64_t keep_ns_;
  uint64_t last_flush_ts_ = 0;
  std::deque<std::pair<uint64_t, std::string>> written_;
  uint64_t chunks_written_ = 0;
  uint64_t bytes_written_ = 0;
  std::deque<std::pair<uint64_t, std::string>> pending_;  // flush time, chunk
  size_t pending_bytes_ = 0;
  size_t pending_limit_ = 0;
  uint64_t chunks_lost_ = 0;
  bool said_waiting_ = false, said_lost_ = false;
  std::string note_;
};

}  // namespace gpunoise::cupti
