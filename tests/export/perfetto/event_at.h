// Test helper: one kernel event at a time, CPU and current task.
#pragma once

#include <cstdint>
#include <utility>

#include "model/events.h"

namespace gpunoise::testing {

inline model::Event EventAt(uint64_t ts, model::Payload payload, uint32_t cpu, int32_t tid) {
  model::Event e;
  e.ts = ts;
  e.cpu = cpu;
  e.tid = tid;
  e.payload = std::move(payload);
  return e;
}

}  // namespace gpunoise::testing
