// Integration tests need root and real eBPF. Without them they skip with the
// reason, unless GPUNOISE_REQUIRE_ROOT_TESTS=1 (set by tools/test.sh as root
// and so by .ci/run), where a skip would hide a test that CI must run, so it
// fails instead.
//
// The same rule holds for the tools a test calls: tools/setup.sh installs
// every one that Debian packages, so as root a missing one is a failure
// (GN_SKIP_MISSING_TOOL). The only skips allowed there are for what no
// Debian package gives (GN_SKIP_NOT_PACKAGED: trace_processor_shell, an
// NVIDIA GPU); tools/test.sh lists them, with their reasons, after ctest's
// summary.
//
// Everything up to MissingForRealEbpf() is inline, so unit tests that do not
// link gpunoise_test_support can use it too.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace gpunoise::testing {

inline bool IsRoot() { return ::geteuid() == 0; }

inline bool RootTestsRequired() {
  const char* v = std::getenv("GPUNOISE_REQUIRE_ROOT_TESTS");
  return v && std::strcmp(v, "1") == 0;
}

// Whether this process's "/" is a mount point. It is not in a chroot into a
// plain directory, and there `mount --make-rprivate /` (and so `ip netns
// exec`, and a tmpfs in a private mount namespace) fails with EINVAL. The
// kernel lists in mountinfo only the mounts reachable from the root, with
// their mount points relative to it.
inline bool RootIsMountPoint() {
  std::ifstream in("/proc/self/mountinfo");
  if (!in) return true;  // cannot tell: let the real error speak
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, dev, root, mount_point;
    if (fields >> id >> parent >> dev >> root >> mount_point && mount_point == "/") return true;
  }
  return false;
}

// Empty when "/" is a mount point; else one line that says what needs it
// (`what`, e.g. "ip netns") and what to do.
inline std::string RootNotMountPointReason(const std::string& what) {
  if (RootIsMountPoint()) return {};
  return "/ is not a mount point (chroot?): " + what +
         " needs it; bind-mount the root onto itself (mount --bind ROOT ROOT) before chroot";
}

// Empty when the test can run; else the reason it cannot.
std::string MissingForRealEbpf();

}  // namespace gpunoise::testing

#define GN_REQUIRE_REAL_EBPF()                                                  \
  do {                                                                          \
    std::string gn_missing_ = ::gpunoise::testing::MissingForRealEbpf();        \
    if (!gn_missing_.empty()) {                                                 \
      if (::gpunoise::testing::RootTestsRequired()) FAIL() << gn_missing_;      \
      GTEST_SKIP() << gn_missing_;                                              \
    }                                                                           \
  } while (0)

// A tool that a Debian package gives (tools/setup.sh installs it) is missing:
// a skip, except where root tests are required, where it fails.
#define GN_SKIP_MISSING_TOOL(reason)                                                     \
  do {                                                                                   \
    if (::gpunoise::testing::RootTestsRequired())                                        \
      FAIL() << reason << " (tools/setup.sh installs it; as root a skip is a failure)";  \
    GTEST_SKIP() << reason;                                                              \
  } while (0)

// What no Debian package gives (trace_processor_shell, an NVIDIA GPU): the one
// kind of skip allowed as root. `reason` says so.
#define GN_SKIP_NOT_PACKAGED(reason) GTEST_SKIP() << reason

// "/" must be a mount point for `what` (ip netns, a private tmpfs): fails,
// in one line, when it is not.
#define GN_REQUIRE_ROOT_MOUNT_POINT(what)                                           \
  do {                                                                             \
    std::string gn_why_ = ::gpunoise::testing::RootNotMountPointReason(what);      \
    if (!gn_why_.empty()) FAIL() << gn_why_;                                       \
  } while (0)
