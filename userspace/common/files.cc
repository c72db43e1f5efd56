#include "common/files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/unique_fd.h"

namespace gpunoise {

Result<std::string> ReadFileToString(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return MakeError("failed to open {}: {}", path, std::strerror(errno));
  std::string out;
  char buf[16384];
  while (true) {
    ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return MakeError("failed to read {}: {}", path, std::strerror(errno));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

RereadableFile::RereadableFile(std::string path) : path_(std::move(path)) {
  fd_ = UniqueFd(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd_.valid()) open_errno_ = errno;
}

Result<std::string> RereadableFile::Read() const {
  if (!fd_.valid()) return MakeError("failed to open {}: {}", path_, std::strerror(open_errno_));
  std::string out;
  char buf[16384];
  off_t at = 0;
  while (true) {
    ssize_t n = ::pread(fd_.get(), buf, sizeof(buf), at);
    if (n < 0) {
      if (errno == EINTR) continue;
      return MakeError("failed to read {}: {}", path_, std::strerror(errno));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    at += n;
  }
  return out;
}

Result<std::vector<std::string>> ListDirectory(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (!dir) return MakeError("failed to list {}: {}", path, std::strerror(errno));
  std::vector<std::string> names;
  while (dirent* e = ::readdir(dir)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    names.emplace_back(e->d_name);
  }
  ::closedir(dir);
  return names;
}

bool PathExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace gpunoise
