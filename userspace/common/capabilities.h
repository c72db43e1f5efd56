// Dropping the capabilities gpunoise no longer needs once its eBPF programs
// are loaded and attached (DESIGN.md decision 11). Raw capget/capset and
// prctl: no libcap needed for this much.
//
// Capabilities are per thread on Linux. DropCapabilitiesExcept() changes
// the calling thread and, through inheritance, every thread it creates
// afterwards; threads started earlier keep theirs, so each long-lived
// thread that needs nothing (the HTTP server's) drops everything itself
// when it starts (DropAllCapabilitiesOfThisThread).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include "common/result.h"

namespace gpunoise {

// Numbers from linux/capability.h.
enum Capability : int {
  kCapChown = 0,
  kCapDacOverride = 1,
  kCapDacReadSearch = 2,
  kCapFowner = 3,
  kCapSetpcap = 8,
  kCapNetAdmin = 12,
  kCapIpcLock = 14,
  kCapSysPtrace = 19,
  kCapSysAdmin = 21,
  kCapSysNice = 23,
  kCapSysResource = 24,
  kCapSyslog = 34,
  kCapPerfmon = 38,
  kCapBpf = 39,
};

using CapMask = uint64_t;
constexpr CapMask CapBit(int cap) { return CapMask{1} << cap; }
inline CapMask Caps(std::initializer_list<int> caps) {
  CapMask m = 0;
  for (int c : caps) m |= CapBit(c);
  return m;
}

struct ThreadCapabilities {
  CapMask effective = 0, permitted = 0, inheritable = 0;
};
Result<ThreadCapabilities> CurrentCapabilities();

// Keeps only `keep` (those of them the thread has) in the effective and
// permitted sets, empties the inheritable and ambient sets, removes every
// other capability from the bounding set (so no exec can bring one back),
// and sets no_new_privs. Returns what the thread holds afterwards.
Result<CapMask> DropCapabilitiesExcept(CapMask keep);
// The same with nothing kept.
Status DropAllCapabilitiesOfThisThread();

// "cap_bpf,cap_perfmon" (as capsh and /proc/PID/status decoders write
// them); "none" for an empty mask.
std::string CapabilityNames(CapMask mask);

}  // namespace gpunoise
