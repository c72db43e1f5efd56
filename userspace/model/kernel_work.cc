#include "model/kernel_work.h"

namespace gpunoise::model {

std::string_view KernelWorkName(KernelWorkKind kind) {
  switch (kind) {
    case KernelWorkKind::kIpiSend: return "ipi send";
    case KernelWorkKind::kIpiCallback: return "ipi callback";
    case KernelWorkKind::kWorkItem: return "work item";
    case KernelWorkKind::kHrtimer: return "hrtimer";
  }
  return "kernel work";
}

std::optional<KernelWorkKind> KernelWorkKindFromName(std::string_view name) {
  for (auto kind : {KernelWorkKind::kIpiSend, KernelWorkKind::kIpiCallback, KernelWorkKind::kWorkItem,
                    KernelWorkKind::kHrtimer})
    if (KernelWorkName(kind) == name) return kind;
  return std::nullopt;
}

}  // namespace gpunoise::model
