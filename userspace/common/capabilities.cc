#include "common/capabilities.h"

#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gpunoise {
namespace {

// The highest capability this kernel knows (CAP_LAST_CAP may be older than
// the kernel, or newer).
int LastCap() {
  static const int last = [] {
    int cap = 63;
    while (cap > 0 && ::prctl(PR_CAPBSET_READ, cap, 0, 0, 0) < 0) --cap;
    return cap;
  }();
  return last;
}

constexpr const char* kNames[] = {
    "cap_chown", "cap_dac_override", "cap_dac_read_search", "cap_fowner", "cap_fsetid", "cap_kill",
    "cap_setgid", "cap_setuid", "cap_setpcap", "cap_linux_immutable", "cap_net_bind_service",
    "cap_net_broadcast", "cap_net_admin", "cap_net_raw", "cap_ipc_lock", "cap_ipc_owner", "cap_sys_module",
    "cap_sys_rawio", "cap_sys_chroot", "cap_sys_ptrace", "cap_sys_pacct", "cap_sys_admin", "cap_sys_boot",
    "cap_sys_nice", "cap_sys_resource", "cap_sys_time", "cap_sys_tty_config", "cap_mknod", "cap_lease",
    "cap_audit_write", "cap_audit_control", "cap_setfcap", "cap_mac_override", "cap_mac_admin", "cap_syslog",
    "cap_wake_alarm", "cap_block_suspend", "cap_audit_read", "cap_perfmon", "cap_bpf", "cap_checkpoint_restore"};

Status Set(const ThreadCapabilities& c) {
  __user_cap_header_struct header{};
  __user_cap_data_struct data[2]{};
  header.version = _LINUX_CAPABILITY_VERSION_3;
  for (int i = 0; i < 2; ++i) {
    data[i].effective = static_cast<uint32_t>(c.effective >> (32 * i));
    data[i].permitted = static_cast<uint32_t>(c.permitted >> (32 * i));
    data[i].inheritable = static_cast<uint32_t>(c.inheritable >> (32 * i));
  }
  if (::syscall(SYS_capset, &header, data) != 0)
    return MakeError("failed to drop capabilities: capset: {}", std::strerror(errno));
  return OkStatus();
}

}  // namespace

Result<ThreadCapabilities> CurrentCapabilities() {
  __user_cap_header_struct header{};
  __user_cap_data_struct data[2]{};
  header.version = _LINUX_CAPABILITY_VERSION_3;
  if (::syscall(SYS_capget, &header, data) != 0)
    return MakeError("failed to read capabilities: capget: {}", std::strerror(errno));
  ThreadCapabilities c;
  for (int i = 0; i < 2; ++i) {
    c.effective |= CapMask{data[i].effective} << (32 * i);
    c.permitted |= CapMask{data[i].permitted} << (32 * i);
    c.inheritable |= CapMask{data[i].inheritable} << (32 * i);
  }
  return c;
}

Result<CapMask> DropCapabilitiesExcept(CapMask keep) {
  GN_ASSIGN_OR_RETURN(ThreadCapabilities now, CurrentCapabilities());
  // The bounding set first: dropping from it needs CAP_SETPCAP, which the
  // capset below may remove. Without CAP_SETPCAP (a non-root gpunoise with
  // file capabilities) the bounding set stays; no_new_privs and the empty
  // inheritable and ambient sets still keep an exec from gaining anything.
  if (now.effective & CapBit(kCapSetpcap)) {
    for (int cap = 0; cap <= LastCap(); ++cap) {
      if (keep & CapBit(cap)) continue;
      if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
        return MakeError("failed to drop {} from the bounding set: {}", kNames[cap < 41 ? cap : 0], std::strerror(errno));
    }
  }
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);  // EINVAL on kernels without ambient caps
  ThreadCapabilities next;
  next.permitted = now.permitted & keep;
  next.effective = next.permitted;
  GN_RETURN_IF_ERROR(Set(next));
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return MakeError("failed to set no_new_privs: {}", std::strerror(errno));
  GN_ASSIGN_OR_RETURN(ThreadCapabilities after, CurrentCapabilities());
  return after.effective;
}

Status DropAllCapabilitiesOfThisThread() {
  auto r = DropCapabilitiesExcept(0);
  if (!r.ok()) return r.error();
  return OkStatus();
}

std::string CapabilityNames(CapMask mask) {
  std::string out;
  for (int cap = 0; cap < 64; ++cap) {
    if (!(mask & CapBit(cap))) continue;
    if (!out.empty()) out += ',';
    out += cap < static_cast<int>(std::size(kNames)) ? kNames[cap] : "cap_" + std::to_string(cap);
  }
  return out.empty() ? "none" : out;
}

}  // namespace gpunoise
