#include "record/drain_lanes.h"

#include <algorithm>

#include "export/perfetto/trace_sink.h"

namespace gpunoise::record {

size_t DrainLanesFor(size_t online_cpus) {
  constexpr size_t kCpusPerLane = 128, kMaxLanes = 8;
  return std::clamp<size_t>((online_cpus + kCpusPerLane - 1) / kCpusPerLane, 1, kMaxLanes);
}

std::string_view DrainLanes::IrqNames::IrqName(int32_t irq) {
  auto it = names_.find(irq);
  if (it != names_.end()) return it->second;
  // The sink's names live as long as the sink; the view stays valid.
  return names_.emplace(irq, sink_.LockedIrqName(irq)).first->second;
}

Result<std::unique_ptr<DrainLanes>> DrainLanes::Start(size_t lanes, perfetto::TraceSink& sink, size_t max_cpu) {
  if (lanes < 2) return MakeError("drain lanes: {} asked for; one lane is the drain thread alone", lanes);
  std::unique_ptr<DrainLanes> d(new DrainLanes());
  GN_ASSIGN_OR_RETURN(d->fork_join_, ForkJoin::Start("gn-drain-lane", lanes));
  for (size_t i = 0; i < lanes; ++i) d->lanes_.push_back(std::make_unique<Lane>(sink.LaneEncoder(), sink));
  d->bundles_.resize(max_cpu + 1);
  return d;
}

}  // namespace gpunoise::record
