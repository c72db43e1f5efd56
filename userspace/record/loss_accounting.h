// The closing accounting of `gpunoise record` (record_session.h): per CPU
// and kind, per collector, per program and per map, what was read, lost in
// the rings, malformed or never written (DESIGN.md decision 3: lost events
// are counted, never silent).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "collect/collector.h"
#include "model/session_info.h"
#include "model/switch_chain.h"

namespace gpunoise::record {

class RecordIntake;

struct LossAccount {
  // One row per recorded CPU, and per CPU outside the recording that lost
  // records (its programs found no ring: it came online meanwhile).
  std::vector<model::CpuLoss> cpus;
  // Ring loss per collector (index in the session's list), by the owner of
  // each record kind (RecordIntake::OwnerOf).
  std::vector<uint64_t> collector_lost;
};

// `lost_by_kind[cpu][kind]`: the rings' loss counts
// (collect::RingTransport::LostByCpuAndKind). `chain`: the context-switch
// chain of what was written, null when it was not checked (task filters).
LossAccount AccountLoss(std::span<const std::vector<uint64_t>> lost_by_kind, const RecordIntake& intake,
                        std::span<const int> cpus, size_t collectors, const model::SwitchChain* chain);

// The collectors' reports with the recording's counts: events read (from
// `intake`) and ring loss (`collector_lost`), plus the maps that were full.
// Replaces session.collectors.
void ReportCollectors(std::span<const std::unique_ptr<collect::Collector>> collectors, const RecordIntake& intake,
                      std::span<const uint64_t> collector_lost, model::SessionInfo& session);

}  // namespace gpunoise::record
