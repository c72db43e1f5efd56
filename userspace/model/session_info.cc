#include "model/session_info.h"

namespace gpunoise::model {

std::string_view CollectorStateName(CollectorState state) {
  switch (state) {
    case CollectorState::kActive: return "active";
    case CollectorState::kDegraded: return "degraded";
    case CollectorState::kDisabled: return "disabled";
    case CollectorState::kNotRequested: return "not requested";
  }
  return "?";
}

std::string_view MapLossKindName(MapLossKind kind) {
  switch (kind) {
    case MapLossKind::kFull: return "full";
    case MapLossKind::kOverwritten: return "overwritten";
    case MapLossKind::kUnpaired: return "unpaired";
  }
  return "full";
}

}  // namespace gpunoise::model

namespace gpunoise::model {

uint64_t TotalKernelAndUserLoss(const SessionInfo& session) {
  uint64_t total = session.bpf_recursion_misses + session.records_outside_cpus;
  for (const auto& cpu : session.cpus) total += cpu.lost + cpu.decode_errors + cpu.unwritten;
  return total;
}

}  // namespace gpunoise::model
