#include "integration/support/privileges.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace gpunoise::testing {

bool IsRoot() { return ::geteuid() == 0; }

bool RootTestsRequired() {
  const char* v = std::getenv("GPUNOISE_REQUIRE_ROOT_TESTS");
  return v && std::strcmp(v, "1") == 0;
}

std::string MissingForRealEbpf() {
  if (!IsRoot()) return "needs root to load eBPF programs";
  if (::access("/sys/kernel/btf/vmlinux", R_OK) != 0) return "needs kernel BTF";
  return {};
}

}  // namespace gpunoise::testing
