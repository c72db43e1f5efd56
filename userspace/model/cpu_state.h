// What the CPUs under the threads did beyond the scheduler's events
// (bpf/cpustate.h): idle periods with their state, frequency changes, and
// NUMA balancing (task moves between nodes, page migrations).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gpunoise::model {

enum class CpuStateKind : uint8_t { kIdle = 0, kFrequency = 1 };

struct CpuStateEvent {
  uint64_t begin = 0, end = 0;  // CLOCK_BOOTTIME; idle entry and exit; equal for a frequency change
  uint32_t value = 0;           // idle: cpuidle state index; frequency: kHz
  uint32_t cpu = 0;
  CpuStateKind kind = CpuStateKind::kIdle;
};

enum class NumaEventKind : uint8_t { kMove = 0, kSwap = 1, kMigrate = 2 };
// "numa move", "numa swap", "numa migrate pages": the instants' names in the trace.
std::string_view NumaEventName(NumaEventKind kind);
std::optional<NumaEventKind> NumaEventKindFromName(std::string_view name);

// include/linux/migrate_mode.h enum migrate_reason: the one NUMA balancing uses.
inline constexpr int32_t kMigrateReasonNumaMisplaced = 5;

struct NumaEvent {
  uint64_t ts = 0;
  int32_t tid = 0;        // moved task; swap: the source; migrate: the task migrating its pages
  int32_t other_tid = 0;  // swap: the other task
  int32_t src_cpu = -1, dst_cpu = -1, src_nid = -1, dst_nid = -1;
  uint64_t succeeded = 0, failed = 0;  // migrate: pages
  int32_t reason = -1;                 // migrate: enum migrate_reason
  uint32_t cpu = 0;                    // where it fired
  NumaEventKind kind = NumaEventKind::kMove;
};

}  // namespace gpunoise::model
