#include "integration/support/privileges.h"

#include <unistd.h>

namespace gpunoise::testing {

std::string MissingForRealEbpf() {
  if (!IsRoot()) return "needs root to load eBPF programs";
  if (::access("/sys/kernel/btf/vmlinux", R_OK) != 0) return "needs kernel BTF";
  return {};
}

}  // namespace gpunoise::testing
