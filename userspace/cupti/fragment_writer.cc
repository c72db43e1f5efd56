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

std::string FragmentWriter::NotWritableReason() const {
  if (::access(dir_.c_str(), W_OK | X_OK) == 0) return {};
  return std::strerror(errno);
}

bool FragmentWriter::Write(std::string_view chunk, uint64_t flush_ts, std::string* error) {
  // Two flushes in one nanosecond would share a name; keep names unique.
  if (flush_ts <= last_flush_ts_) flush_ts = last_flush_ts_ + 1;
  last_flush_ts_ = flush_ts;
  if (pending_limit_ > 0) {
    std::string why = NotWritableReason();
    if (!why.empty()) {
      if (!said_waiting_) {
        said_waiting_ = true;
        note_ = "cannot write to " + dir_ + " yet (" + why + "): holding up to " +
                std::to_string(pending_limit_ >> 20) + " MiB of GPU data and trying again at each flush";
      }
      pending_.emplace_back(flush_ts, std::string(chunk));
      pending_bytes_ += chunk.size();
      // Oldest first: the newest chunks are the ones a recording that
      // starts later still wants.
      while (pending_bytes_ > pending_limit_ && !pending_.empty()) {
        pending_bytes_ -= pending_.front().second.size();
        pending_.pop_front();
        ++chunks_lost_;
        if (!said_lost_) {
          said_lost_ = true;
          note_ = "GPU trace data lost: " + dir_ + " still not writable after " +
                  std::to_string(pending_limit_ >> 20) + " MiB; dropping the oldest held-back data";
        }
      }
      return true;
    }
    // Writable now: what was held back goes first, in flush order. One
    // whose write fails is lost like any chunk whose write fails.
    bool all = true;
    while (!pending_.empty()) {
      if (!WriteFile(pending_.front().second, pending_.front().first, error)) {
        ++chunks_lost_;
        all = false;
      }
      pending_bytes_ -= pending_.front().second.size();
      pending_.pop_front();
    }
    std::string first_error = all ? std::string() : *error;
    if (!WriteFile(chunk, flush_ts, error)) return false;
    if (!all) *error = first_error;
    return all;
  }
  return WriteFile(chunk, flush_ts, error);
}

bool FragmentWriter::WriteFile(std::string_view chunk, uint64_t flush_ts, std::string* error) {
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
