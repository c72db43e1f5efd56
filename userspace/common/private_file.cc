#include "common/private_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace gpunoise {
namespace {

// Name tries before giving up: with 48 random bits, EEXIST more than once
// means someone is racing us; a hundred is plenty and still bounded.
constexpr int kTempNameTries = 100;

std::string BaseNameOf(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string StripTrailingSlashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

// 12 hex digits from getrandom(2): a name nobody can guess ahead of time, so
// nobody can squat it (O_EXCL keeps even a guessed one safe; this keeps it
// from being a denial of service).
bool RandomSuffix(std::string* out) {
  unsigned char bytes[6];
  size_t got = 0;
  while (got < sizeof(bytes)) {
    ssize_t n = ::getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    got += static_cast<size_t>(n);
  }
  char hex[sizeof(bytes) * 2 + 1];
  for (size_t i = 0; i < sizeof(bytes); ++i) std::snprintf(hex + 2 * i, 3, "%02x", bytes[i]);
  *out = hex;
  return true;
}

std::string Errno(int err) { return std::strerror(err); }

// Why an existing entry (from lstat) must not be replaced, or "".
std::string UnsafeEntryReason(const std::string& path, const struct stat& st) {
  if (S_ISLNK(st.st_mode)) return path + " is a symbolic link";
  if (S_ISDIR(st.st_mode)) return path + " is a directory";
  if (!S_ISREG(st.st_mode)) return path + " is not a regular file";
  return "";
}

}  // namespace

std::string PrivateFileDirName(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string UnsafeOutputReason(const std::string& path) {
  if (path.empty()) return "no output path given";
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    std::string reason = UnsafeEntryReason(path, st);
    if (!reason.empty()) return reason;
  }
  // What cannot be looked at (no such directory, no permission) is left to
  // the create that follows, whose error says it in the writer's words.
  // The directory is followed if it is a symlink (a home directory often is
  // one); what matters is who may rename entries in the directory it leads
  // to. Without the sticky bit, any user could replace our temp file or the
  // final name between our checks and our rename.
  std::string dir = PrivateFileDirName(path);
  struct stat dst {};
  if (::stat(dir.c_str(), &dst) != 0) return "";
  if (!S_ISDIR(dst.st_mode)) return dir + " is not a directory";
  if ((dst.st_mode & S_IWOTH) && !(dst.st_mode & S_ISVTX))
    return dir + " is writable by other users and not sticky";
  return "";
}

std::string CheckOutputPath(const std::string& path) {
  std::string reason = UnsafeOutputReason(path);
  return reason.empty() ? reason : "refusing to write " + path + ": " + reason;
}

UniqueFd CreatePrivateTemp(const std::string& final_path, const char* tag, std::string* temp_path,
                           std::string* error) {
  std::string prefix = PrivateFileDirName(final_path) + "/." + BaseNameOf(final_path) + "." + tag + "-";
  for (int i = 0; i < kTempNameTries; ++i) {
    std::string suffix;
    if (!RandomSuffix(&suffix)) {
      *error = "failed to create " + prefix + "*: getrandom: " + Errno(errno);
      return UniqueFd();
    }
    *temp_path = prefix + suffix;
    // 0600 whatever the umask; O_NOFOLLOW|O_EXCL: never through a planted
    // symlink, never an existing file.
    UniqueFd fd(::open(temp_path->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (fd.valid()) return fd;
    if (errno != EEXIST) {
      *error = "failed to create " + *temp_path + ": " + Errno(errno);
      return UniqueFd();
    }
  }
  *error = "failed to create " + prefix + "*: every name tried exists";
  return UniqueFd();
}

bool RenameIntoPlace(const std::string& temp_path, const std::string& final_path,
                     std::string* error) {
  struct stat st {};
  if (::lstat(final_path.c_str(), &st) == 0) {
    std::string reason = UnsafeEntryReason(final_path, st);
    if (!reason.empty()) {
      *error = "refusing to write " + final_path + ": " + reason;
      return false;
    }
  }
  if (::rename(temp_path.c_str(), final_path.c_str()) != 0) {
    *error = "failed to rename " + temp_path + " to " + final_path + ": " + Errno(errno);
    return false;
  }
  return true;
}

bool MakeOrCheckPrivateDir(const std::string& dir_in, uid_t uid, gid_t gid, std::string* error) {
  // "DIR/" would make open() follow a symlink named DIR despite O_NOFOLLOW.
  std::string dir = StripTrailingSlashes(dir_in);
  bool created = ::mkdir(dir.c_str(), 0700) == 0;
  if (!created && errno != EEXIST) {
    *error = "failed to create " + dir + ": " + Errno(errno);
    return false;
  }
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) {
    int err = errno;
    struct stat lst {};
    if (::lstat(dir.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode))
      *error = "refusing " + dir + ": it is a symbolic link";
    else if (err == ENOTDIR)
      *error = "refusing " + dir + ": not a directory";
    else
      *error = "failed to open " + dir + ": " + Errno(err);
    return false;
  }
  if (created) {
    // mkdir's mode went through the umask, and root made it: give it to the
    // user whose processes write fragments into it.
    if (::fchmod(fd.get(), 0700) != 0 ||
        (::geteuid() == 0 && ::fchown(fd.get(), uid, gid) != 0)) {
      *error = "failed to hand " + dir + " to uid " + std::to_string(uid) + ": " + Errno(errno);
      return false;
    }
    return true;
  }
  // Someone else's directory, or one others can write into, lets them plant
  // or swap fragments that a root `record --gpu-dir` then reads.
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    *error = "failed to stat " + dir + ": " + Errno(errno);
    return false;
  }
  if (st.st_uid != uid) {
    *error = "refusing " + dir + ": owned by uid " + std::to_string(st.st_uid) + ", not " +
             std::to_string(uid);
    return false;
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
    *error = "refusing " + dir + ": writable by " +
             std::string((st.st_mode & S_IWOTH) ? "other users" : "its group") + " (mode " + mode + ")";
    return false;
  }
  return true;
}

}  // namespace gpunoise
