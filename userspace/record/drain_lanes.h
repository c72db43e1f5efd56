// Drain lanes (`record --drain-threads N`): the drain's two per-event
// stages, reading the rings into each CPU's staging and encoding each CPU's
// bundle, split over N threads, each with every N-th CPU. What stays on the
// drain thread is per batch, not per event: the order of the file (CPU by
// CPU, as before), loss accounting, and the write. One drain thread holds
// about 8 million events/s (docs/performance.md, "Scale model"), about
// 30,000 a second per CPU of a 256-CPU node.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/fork_join.h"
#include "common/result.h"
#include "export/perfetto/ftrace_bundle_encoder.h"

namespace gpunoise::perfetto {
class TraceSink;
}

namespace gpunoise::record {

// `--drain-threads auto`: one lane per 128 online CPUs, at most 8.
size_t DrainLanesFor(size_t online_cpus);

class DrainLanes {
 public:
  // `lanes` >= 2 (one is the drain thread itself); bundles for CPUs
  // 0..max_cpu.
  static Result<std::unique_ptr<DrainLanes>> Start(size_t lanes, perfetto::TraceSink& sink, size_t max_cpu);

  size_t lanes() const { return fork_join_->lanes(); }
  ForkJoin& fork_join() { return *fork_join_; }
  // The lanes' own threads, for the drain's scheduling policy.
  std::vector<pid_t> tids() const { return fork_join_->tids(); }
  perfetto::FtraceBundleEncoder& encoder(size_t lane) { return lanes_[lane]->encoder; }
  perfetto::IrqNameSource& irq_names(size_t lane) { return lanes_[lane]->names; }
  // CPU `cpu`'s bundle of this turn, encoded by its lane.
  std::string& bundle(size_t cpu) { return bundles_[cpu]; }

 private:
  // Names from the sink, each asked for once per lane.
  class IrqNames : public perfetto::IrqNameSource {
   public:
    explicit IrqNames(perfetto::TraceSink& sink) : sink_(sink) {}
    std::string_view IrqName(int32_t irq) override;

   private:
    perfetto::TraceSink& sink_;
    std::unordered_map<int32_t, std::string_view> names_;
  };
  struct Lane {
    Lane(perfetto::FtraceBundleEncoder e, perfetto::TraceSink& sink) : encoder(std::move(e)), names(sink) {}
    perfetto::FtraceBundleEncoder encoder;
    IrqNames names;
  };
  DrainLanes() = default;

  std::unique_ptr<ForkJoin> fork_join_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::vector<std::string> bundles_;
};

}  // namespace gpunoise::record
