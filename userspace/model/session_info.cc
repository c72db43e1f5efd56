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

}  // namespace gpunoise::model
