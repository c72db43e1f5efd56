#include "record/loss_accounting.h"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "collect/record_decoder.h"
#include "record/record_intake.h"

namespace gpunoise::record {

LossAccount AccountLoss(std::span<const std::vector<uint64_t>> lost_by_kind, const RecordIntake& intake,
                        std::span<const int> cpus, size_t collectors, const model::SwitchChain* chain) {
  const std::vector<CpuBatch>& batches = intake.batches();
  LossAccount account;
  account.collector_lost.assign(collectors, 0);
  for (size_t cpu = 0; cpu < std::max(lost_by_kind.size(), batches.size()); ++cpu) {
    bool recorded = cpu < batches.size() && std::find(cpus.begin(), cpus.end(), static_cast<int>(cpu)) != cpus.end();
    model::CpuLoss row;
    row.cpu = static_cast<uint32_t>(cpu);
    if (cpu < lost_by_kind.size()) {
      const std::vector<uint64_t>& kinds = lost_by_kind[cpu];
      for (int kind = 0; kind < GN_REC_KIND_MAX && static_cast<size_t>(kind) < kinds.size(); ++kind) {
        uint64_t n = kinds[kind];
        if (!n) continue;
        row.lost += n;
        std::string_view name = collect::RecordKindName(static_cast<uint16_t>(kind));
        row.lost_by_kind[name.empty() ? fmt::format("kind{}", kind) : std::string(name)] += n;
        if (int owner = intake.OwnerOf(static_cast<uint16_t>(kind));
            owner >= 0 && static_cast<size_t>(owner) < account.collector_lost.size())
          account.collector_lost[static_cast<size_t>(owner)] += n;
      }
    }
    if (cpu < batches.size()) {
      const CpuBatch& b = batches[cpu];
      row.events = b.events_total;
      row.bytes = b.bytes_total;
      row.decode_errors = b.decode_errors;
      row.unwritten = b.unwritten;
      row.unwritten_by_kind = b.unwritten_by_kind;
    }
    row.unseen_switches = chain ? chain->breaks(row.cpu) : 0;
    // A CPU outside the recording has a row only when it lost something
    // (its programs found no ring: it came online during the recording).
    if (recorded || row.lost) account.cpus.push_back(std::move(row));
  }
  return account;
}

void ReportCollectors(std::span<const std::unique_ptr<collect::Collector>> collectors, const RecordIntake& intake,
                      std::span<const uint64_t> collector_lost, model::SessionInfo& session) {
  session.collectors.clear();
  for (size_t i = 0; i < collectors.size(); ++i) {
    model::CollectorReport report = collectors[i]->report();
    report.events = intake.collector_events(i);
    report.lost = i < collector_lost.size() ? collector_lost[i] : 0;
    session.collectors.push_back(std::move(report));
    collectors[i]->AddMapLosses(session.map_losses);
  }
}

}  // namespace gpunoise::record
