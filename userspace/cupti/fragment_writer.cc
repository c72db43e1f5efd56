#include "cupti/fragment_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/private_file.h"
#include "common/unique_fd.h"
#include "model/gpu_capture.h"

namespace gpunoise::cupti {

FragmentWriter::FragmentWriter(std::string dir, int pid, uint64_t keep_ns)
    : dir_(std::move(dir)), pid_(pid), keep_ns_(keep_ns) {}

FragmentWriter::FragmentWriter(std::string dir, int pid, uint64_t pid_ns, uint64_t keep_ns)
    : dir_(std::move(dir)), pid_(pid), has_pid_ns_(true), pid_ns_(pid_ns), keep_ns_(keep_ns) {}

bool FragmentWriter::Write(std::string_view chunk, uint64_t flush_ts, std::string* error) {
  // Two flushes in one nanosecond would share a name; keep names unique.
  if (flush_ts <= last_flush_ts_) flush_ts = last_flush_ts_ + 1;
  std::string name = has_pid_ns_ ? model::FragmentFileName(pid_, flush_ts, pid_ns_)
                                 : model::FragmentFileName(pid_, flush_ts);
  std::string final_path = dir_ + "/" + name;
  // 0600 under a random temp name, never through a symlink: the fragment
  // holds the job's kernel names and timings (common/private_file.h). The
  // library links only the dependency-free gpunoise_private_file, not
  // gpunoise_common, so the host process gains no libraries.
  std::string temp_path;
  UniqueFd fd = CreatePrivateTemp(final_path, "tmp", &temp_path, error);
  if (!fd.valid()) return false;
  size_t done = 0;
  while (done < chunk.size()) {
    ssize_t n = ::write(fd.get(), chunk.data() + done, chunk.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *error = "failed to write " + temp_path + ": " + std::strerror(n < 0 ? errno : ENOSPC);
      fd.Reset();
      ::unlink(temp_path.c_str());
      return false;
    }
    done += static_cast<size_t>(n);
  }
  fd.Reset();
  if (!RenameIntoPlace(temp_path, final_path, error)) {
    ::unlink(temp_path.c_str());
    return false;
  }
  last_flush_ts_ = flush_ts;
  ++chunks_written_;
  bytes_written_ += chunk.size();
  if (keep_ns_) {
    written_.emplace_back(flush_ts, final_path);
    while (!written_.empty() && written_.front().first + keep_ns_ < flush_ts) {
      ::unlink(written_.front().second.c_str());
      written_.pop_front();
    }
  }
  return true;
}

}  // namespace gpunoise::cupti
