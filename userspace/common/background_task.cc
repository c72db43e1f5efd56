#include "common/background_task.h"

#include <sys/resource.h>
#include <unistd.h>

#include "common/capabilities.h"

namespace gpunoise {

void DemoteThisThread() {
  (void)DropAllCapabilitiesOfThisThread();
  ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 10);
}

bool ThisThreadHoldsCapabilities() {
  auto caps = CurrentCapabilities();
  return !caps.ok() || caps->effective || caps->permitted;
}

}  // namespace gpunoise
