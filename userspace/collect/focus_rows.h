// The monitor's per-CPU focus counters are one row per CPU that two
// collectors fill, each its own columns (runqlat: switches and waits;
// irqtime: interrupt time), whichever reads first.
#pragma once

#include <cstdint>
#include <vector>

#include "model/kernel_aggregates.h"

namespace gpunoise::collect {

// The row of `cpu` in `rows`, appended (all zero but the CPU) when absent.
inline model::FocusCpuCounters& FocusRowOf(std::vector<model::FocusCpuCounters>& rows, uint32_t cpu) {
  for (auto& row : rows)
    if (row.cpu == cpu) return row;
  rows.emplace_back();
  rows.back().cpu = cpu;
  return rows.back();
}

}  // namespace gpunoise::collect
