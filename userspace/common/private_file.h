// Creating files that hold trace data so that no other user can read them
// and no other user can steer where they go (DESIGN.md decision 11).
//
// gpunoise runs as root on shared nodes and writes into directories such as
// /tmp. A predictable temporary name there lets another user plant a symlink
// and have root write (or truncate) a file of their choosing; a 0644 trace
// shows every process's command line and scheduling to anyone. So:
// - files are created 0600 with O_CREAT|O_EXCL|O_NOFOLLOW under a random
//   name in the output's own directory, then renamed into place;
// - an output path that is a symlink or not a regular file, or whose
//   directory other users may rename entries in (world-writable without the
//   sticky bit), is refused before anything is written.
//
// No fmt, no Result: libgpunoise_cupti.so links this into training
// processes, which must not pull in gpunoise_common's dependencies.
#pragma once

#include <sys/types.h>

#include <string>

#include "common/unique_fd.h"

namespace gpunoise {

// The directory part of `path` ("." when there is none).
std::string PrivateFileDirName(const std::string& path);

// Why trace data must not be written at `path`, or "" when it may:
// "/tmp/x is writable by other users and not sticky", "/tmp/t.pftrace is a
// symbolic link", ... The final component is checked with lstat, so a
// symlink is never followed; the directory with stat.
std::string UnsafeOutputReason(const std::string& path);

// "refusing to write PATH: REASON", or "" when `path` may be written.
std::string CheckOutputPath(const std::string& path);

// Creates "DIR/.BASE.TAG-XXXXXXXXXXXX" (12 hex digits from getrandom(2)),
// 0600, O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, trying a new name on
// EEXIST. `*temp_path` gets the name. On failure the fd is invalid and
// `*error` says why ("failed to create DIR/.BASE.TAG-...: reason").
UniqueFd CreatePrivateTemp(const std::string& final_path, const char* tag, std::string* temp_path,
                           std::string* error);

// Renames `temp_path` onto `final_path` unless `final_path` has become a
// symlink or a non-regular file since the checks (rename itself would not
// follow a symlink, but one planted there is a sign of an attack worth
// refusing). False with `*error` set otherwise; the temp file stays.
bool RenameIntoPlace(const std::string& temp_path, const std::string& final_path,
                     std::string* error);

// The directory a GPU capture writes into: created 0700 and handed to
// `uid`:`gid` if missing; if it exists, it must be a real directory (not a
// symlink) owned by `uid` and not writable by group or others. False with
// `*error` set ("refusing DIR: owned by uid 0, not 1000") otherwise.
bool MakeOrCheckPrivateDir(const std::string& dir, uid_t uid, gid_t gid, std::string* error);

}  // namespace gpunoise
