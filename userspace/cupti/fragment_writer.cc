#include "cupti/fragment_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "model/gpu_capture.h"

namespace gpunoise::cupti {

FragmentWriter::FragmentWriter(std::string dir, int pid, uint64_t keep_ns)
    : dir_(std::move(dir)), pid_(pid), keep_ns_(keep_ns) {}

bool FragmentWriter::Write(std::string_view chunk, uint64_t flush_ts, std::string* error) {
  // Two flushes in one nanosecond would share a name; keep names unique.
  if (flush_ts <= last_flush_ts_) flush_ts = last_flush_ts_ + 1;
  std::string name = model::FragmentFileName(pid_, flush_ts);
  std::string final_path = dir_ + "/" + name;
  std::string temp_path = dir_ + "/." + name + ".tmp";
  int fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = "failed to create " + temp_path + ": " + std::strerror(errno);
    return false;
  }
  size_t done = 0;
  while (done < chunk.size()) {
    ssize_t n = ::write(fd, chunk.data() + done, chunk.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *error = "failed to write " + temp_path + ": " + std::strerror(n < 0 ? errno : ENOSPC);
      ::close(fd);
      ::unlink(temp_path.c_str());
      return false;
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  if (::rename(temp_path.c_str(), final_path.c_str()) != 0) {
    *error = "failed to rename " + temp_path + ": " + std::strerror(errno);
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
