#include "collect/kernel_health.h"

#include "common/files.h"
#include "common/strings.h"

namespace gpunoise::collect {

model::KernelHealthCounters ReadKernelHealth(const std::string& sys_root) {
  model::KernelHealthCounters out;
  for (std::string_view name : kKernelHealthCounters) {
    auto text = ReadFileToString(sys_root + "/kernel/" + std::string(name));
    if (!text.ok()) continue;
    if (auto v = ParseUint64(Trim(*text))) out[std::string(name)] = *v;
  }
  return out;
}

}  // namespace gpunoise::collect
