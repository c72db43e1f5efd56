#include "collect/system_checks.h"

#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/files.h"

namespace gpunoise::collect {
namespace {

constexpr int kCapSysAdmin = 21;
constexpr int kCapPerfmon = 38;
constexpr int kCapBpf = 39;

bool HasEffectiveCap(int cap) {
  __user_cap_header_struct header{};
  __user_cap_data_struct data[2]{};
  header.version = _LINUX_CAPABILITY_VERSION_3;
  header.pid = 0;
  if (syscall(SYS_capget, &header, data) != 0) return false;
  return data[cap / 32].effective & (1u << (cap % 32));
}

}  // namespace

Status CheckPrivileges() {
  if (HasEffectiveCap(kCapSysAdmin)) return OkStatus();
  if (HasEffectiveCap(kCapBpf) && HasEffectiveCap(kCapPerfmon)) return OkStatus();
  if (::geteuid() != 0)
    return MakeError(
        "gpunoise needs root (or CAP_BPF and CAP_PERFMON) to load eBPF programs: run it with sudo");
  return MakeError(
      "gpunoise runs as root but lacks CAP_BPF+CAP_PERFMON (and CAP_SYS_ADMIN): run it in a "
      "privileged container or grant those capabilities");
}

Status CheckKernelBtf(const std::string& default_path) {
  // Tests point this elsewhere to exercise the error path.
  const char* override_path = std::getenv("GPUNOISE_BTF_PATH_FOR_TESTING");
  std::string btf_path = override_path ? override_path : default_path;
  if (!PathExists(btf_path))
    return MakeError(
        "this kernel has no BTF ({} is missing): gpunoise's collectors need a kernel built with "
        "CONFIG_DEBUG_INFO_BTF=y",
        btf_path);
  return OkStatus();
}

Result<std::string> EnsureTracefs() {
  // Tests use a stand-in tracefs listing only some events, to exercise
  // missing-tracepoint handling; it is never mounted over.
  if (const char* fake = std::getenv("GPUNOISE_TRACEFS_FOR_TESTING")) {
    if (PathExists(std::string(fake) + "/events")) return std::string(fake);
    return MakeError("tracefs is not mounted at {}: mount it with 'mount -t tracefs nodev {}'", fake, fake);
  }
  for (const char* path : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
    if (PathExists(std::string(path) + "/events")) return std::string(path);
  }
  if (::mount("nodev", "/sys/kernel/tracing", "tracefs", 0, nullptr) == 0 &&
      PathExists("/sys/kernel/tracing/events"))
    return std::string("/sys/kernel/tracing");
  int err = errno;
  return MakeError(
      "tracefs is not mounted and mounting it failed ({}): mount it with "
      "'mount -t tracefs nodev /sys/kernel/tracing'",
      std::strerror(err));
}

}  // namespace gpunoise::collect
