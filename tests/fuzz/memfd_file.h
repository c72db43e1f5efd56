// A fuzz input as a file, for parsers that read paths or fds: an anonymous
// in-memory file (memfd), so no run touches the disk or leaves files.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/unique_fd.h"

namespace gpunoise::fuzz {

class MemFile {
 public:
  MemFile(const uint8_t* data, size_t size)
      : fd_(::memfd_create("gpunoise-fuzz", MFD_CLOEXEC)) {
    size_t done = 0;
    while (fd_.valid() && done < size) {
      ssize_t n = ::write(fd_.get(), data + done, size - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    if (fd_.valid()) ::lseek(fd_.get(), 0, SEEK_SET);
  }
  bool valid() const { return fd_.valid(); }
  int fd() const { return fd_.get(); }
  // A path that opens the same file afresh (at offset 0).
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_.get()); }
  // A duplicate for APIs that take ownership of an fd.
  UniqueFd Dup() const {
    UniqueFd d(::dup(fd_.get()));
    if (d.valid()) ::lseek(d.get(), 0, SEEK_SET);
    return d;
  }

 private:
  UniqueFd fd_;
};

}  // namespace gpunoise::fuzz
