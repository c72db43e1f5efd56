#include "collect/kernel_health.h"

#include "common/files.h"
#include "common/strings.h"

namespace gpunoise::collect {

model::KernelHealthCounters ReadKernelHealth(const std::string& sys_root) {
  return KernelHealthReader(sys_root).Read();
}

KernelHealthReader::KernelHealthReader(const std::string& sys_root) {
  for (std::string_view name : kKernelHealthCounters) {
    RereadableFile file(sys_root + "/kernel/" + std::string(name));
    if (file.Read().ok()) files_.emplace_back(std::string(name), std::move(file));
  }
}

model::KernelHealthCounters KernelHealthReader::Read() const {
  model::KernelHealthCounters out;
  for (const auto& [name, file] : files_) {
    auto text = file.Read();
    if (!text.ok()) continue;
    if (auto v = ParseUint64(Trim(*text))) out[name] = *v;
  }
  return out;
}

}  // namespace gpunoise::collect
