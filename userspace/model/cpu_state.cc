#include "model/cpu_state.h"

namespace gpunoise::model {

std::string_view NumaEventName(NumaEventKind kind) {
  switch (kind) {
    case NumaEventKind::kMove: return "numa move";
    case NumaEventKind::kSwap: return "numa swap";
    case NumaEventKind::kMigrate: return "numa migrate pages";
  }
  return "numa";
}

std::optional<NumaEventKind> NumaEventKindFromName(std::string_view name) {
  for (auto kind : {NumaEventKind::kMove, NumaEventKind::kSwap, NumaEventKind::kMigrate})
    if (NumaEventName(kind) == name) return kind;
  return std::nullopt;
}

}  // namespace gpunoise::model
