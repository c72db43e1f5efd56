// The drain of `gpunoise record` (record_session.h): rings -> staging ->
// trace file, once per loop turn and, after the detach, to the end. What
// the file cannot take is counted as unwritten per CPU and kind, never
// dropped silently (DESIGN.md decision 3).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "collect/batch_flush.h"
#include "common/result.h"
#include "model/session_info.h"
#include "model/switch_chain.h"
#include "record/drain_lanes.h"
#include "record/record_intake.h"

namespace gpunoise::collect {
class RingTransport;
}
namespace gpunoise::perfetto {
class TraceSink;
}

namespace gpunoise::record {

// Writes every CPU's staged events that may go out now to `sink`, one
// bundle per CPU; a CPU whose ring lost records since the last call
// (`lost_per_cpu` rises) gets a bundle marked lost even when empty.
// `final`: nothing more will come, nothing is held back for order. A CPU
// that hit `records_per_drain` (not 0) writes only what is certain to be
// in order (record/cpu_staging.h). `chain`, when set, sees every event
// written. On a write error the sink's unwritten events are counted. With
// `lanes`, the lanes take what to write and encode it, CPU k on lane
// k mod N; the writes follow in CPU order on this thread, as without.
Status WriteStaged(std::vector<CpuBatch>& batches, std::span<const uint64_t> lost_per_cpu, bool final,
                   uint64_t records_per_drain, model::SwitchChain* chain, perfetto::TraceSink& sink,
                   DrainLanes* lanes = nullptr);

// The CPUs `flusher` found idle (no flush, collect/batch_flush.h) after the
// drain that followed: each whose staging has read the flusher's stream up
// to the idle batch's seq ends a batch there, at the read's time, as the
// empty batch its flush would have written; each other one is flushed next
// time.
void TakeIdleBatches(collect::BatchFlusher& flusher, std::vector<CpuBatch>& batches);

// Counts, per CPU and kind, what the sink accepted but the file never got.
void CountSinkUnwritten(std::vector<CpuBatch>& batches, perfetto::TraceSink& sink);

// Counts what is still staged as unwritten, and empties the staging: after
// a write error the file takes nothing more.
void DiscardStaged(std::vector<CpuBatch>& batches);

class RecordDrain {
 public:
  // `gate_opened`: when the rings began to fill (CLOCK_BOOTTIME). `lanes`
  // (null: none) read the rings and encode beside the drain thread.
  RecordDrain(collect::RingTransport& transport, std::span<collect::BatchFlusher> flushers,
              std::vector<CpuBatch>& batches, perfetto::TraceSink& sink, uint64_t records_per_drain,
              bool check_switch_chain, uint64_t gate_opened, DrainLanes* lanes = nullptr)
      : transport_(transport),
        lanes_(lanes),
        flushers_(flushers),
        batches_(batches),
        sink_(sink),
        records_per_drain_(records_per_drain),
        check_switch_chain_(check_switch_chain),
        last_read_end_(gate_opened) {}

  // Flushes the batching collectors' batches, then reads every ring (at most
  // records_per_drain records per CPU) into the staging.
  Result<uint64_t> Drain();
  // Staging -> file (WriteStaged with the rings' loss counts now).
  Status Flush(bool final);
  // Whether the last Flush found that a ring had lost records since the one before.
  bool found_new_loss() const { return found_new_loss_; }
  void CountUnwritten() { CountSinkUnwritten(batches_, sink_); }
  void Discard() { DiscardStaged(batches_); }
  // After the programs were detached: reads the rings to the end and writes
  // what they held, or (after a write error) counts it unwritten; the first
  // error goes to `late_error`, its cause to `session.end_reason`. The
  // recorder's pace (SessionInfo::unread_before_loss_ns, ...) goes to `session`.
  void DrainToEnd(model::SessionInfo& session, std::optional<Error>& late_error);

  // The context-switch chain of what was written (unchecked: empty).
  const model::SwitchChain& switch_chain() const { return switch_chain_; }
  bool check_switch_chain() const { return check_switch_chain_; }

 private:
  collect::RingTransport& transport_;
  DrainLanes* lanes_;
  std::span<collect::BatchFlusher> flushers_;
  std::vector<CpuBatch>& batches_;
  perfetto::TraceSink& sink_;
  const uint64_t records_per_drain_;
  const bool check_switch_chain_;
  model::SwitchChain switch_chain_;
  // The recorder's pace while the gate is open: the stretch between the ends
  // of the last two reads of the rings (unread_*), and the longest such
  // stretch after which a drain found new ring loss. The gate closes before
  // DrainToEnd.
  bool gate_open_ = true;
  uint64_t last_read_end_;
  uint64_t unread_ns_ = 0, unread_from_ = 0;
  uint64_t lost_seen_ = 0;
  bool found_new_loss_ = false;
  uint64_t unread_before_loss_ns_ = 0, unread_before_loss_from_ = 0, first_ring_loss_seen_ = 0;
};

}  // namespace gpunoise::record
