// Writes one process's trace chunks into the fragment directory, each as a
// complete file that appears under its final name only when fully written
// (temp file + rename), so a reader never sees half a chunk and a crash
// loses at most the chunk being built.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

namespace gpunoise::cupti {

class FragmentWriter {
 public:
  // keep_ns > 0: chunks older than that (by flush time) are deleted as new
  // ones are written, so a long-running job does not fill the disk.
  FragmentWriter(std::string dir, int pid, uint64_t keep_ns);
  // `pid` inside pid namespace `pid_ns` (inode of /proc/self/ns/pid; 0: it
  // could not be read): the name says so, for the recorder to translate.
  FragmentWriter(std::string dir, int pid, uint64_t pid_ns, uint64_t keep_ns);

  // Writes `chunk` as the fragment flushed at `flush_ts` (CLOCK_BOOTTIME).
  // Returns false with `error` set ("failed to write DIR/x: No space left").
  bool Write(std::string_view chunk, uint64_t flush_ts, std::string* error);

  uint64_t chunks_written() const { return chunks_written_; }
  uint64_t bytes_written() const { return bytes_written_; }

 private:
  std::string dir_;
  int pid_;
  bool has_pid_ns_ = false;
  uint64_t pid_ns_ = 0;
  uint64_t keep_ns_;
  uint64_t last_flush_ts_ = 0;
  std::deque<std::pair<uint64_t, std::string>> written_;
  uint64_t chunks_written_ = 0;
  uint64_t bytes_written_ = 0;
};

}  // namespace gpunoise::cupti
