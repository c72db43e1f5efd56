// Every file doctor reads goes through a SystemView, which prefixes a root
// directory: "/" for the node itself, a fixture tree in tests, or the host's
// file system mounted into a container (--root /host). Paths passed in are
// the absolute paths the kernel uses ("/sys/class/net"), never pre-rooted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace gpunoise::doctor {

class SystemView {
 public:
  explicit SystemView(std::string root);

  const std::string& root() const { return root_; }
  // True when the view is this node's own root, so live-only sources
  // (netlink, NVML, this process's pid) describe the same system.
  bool IsLive() const { return root_ == "/"; }

  // The path on this machine for a kernel path.
  std::string HostPath(std::string_view path) const;

  Result<std::string> Read(std::string_view path) const;
  // The file's text without surrounding white space; nullopt when unreadable.
  std::optional<std::string> ReadTrimmed(std::string_view path) const;
  std::optional<int64_t> ReadInt(std::string_view path) const;
  // Directory entries, sorted; empty when the directory is absent.
  std::vector<std::string> List(std::string_view path) const;
  bool Exists(std::string_view path) const;
  bool IsSymlink(std::string_view path) const;
  Result<std::string> ReadLink(std::string_view path) const;
  // Resolves every symlink in `path` inside the root (absolute link targets
  // are re-rooted), as sysfs device links need; returns a kernel path.
  Result<std::string> Resolve(std::string_view path) const;

  // The kernel log (/dev/kmsg under the root): one record per line in the
  // kmsg format "PRIO,SEQ,USEC,FLAGS;TEXT". Reads what the ring holds now
  // without blocking; a regular file (fixtures) is read as is.
  Result<std::vector<std::string>> ReadKernelLog() const;

 private:
  // The host path for `path` with every link resolved inside the root
  // (ContainedLink: all but the last component).
  std::string Contained(std::string_view path) const;
  std::string ContainedLink(std::string_view path) const;
  static bool IsHostSymlink(const std::string& host);
  static Result<std::string> ReadHostLink(const std::string& host);

  std::string root_;
};

// Joins a kernel path and a child name ("/sys/class/net" + "eth0").
std::string JoinPath(std::string_view dir, std::string_view name);
// The last component of a path.
std::string_view BaseName(std::string_view path);
// The path without its last component ("/" stays "/").
std::string DirName(std::string_view path);

}  // namespace gpunoise::doctor
