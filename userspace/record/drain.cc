#include "record/drain.h"

#include <algorithm>

#include "collect/ring_transport.h"
#include "common/clock.h"
#include "export/perfetto/trace_sink.h"

namespace gpunoise::record {
namespace {

// The end reason of a recording whose file failed, unless one was given.
void NoteFileFailure(model::SessionInfo& session, const perfetto::TraceSink& sink) {
  if (session.end_reason != "disk full" && session.end_reason != "write error")
    session.end_reason = sink.disk_full() ? "disk full" : "write error";
}

uint64_t LostNow(std::span<const uint64_t> lost_per_cpu, size_t cpu) {
  return cpu < lost_per_cpu.size() ? lost_per_cpu[cpu] : 0;
}

// The events CPU `b` writes now: all of them when `final`; a CPU that hit
// `records_per_drain` (not 0) only what is certain to be in order.
model::EventView TakeWritable(CpuBatch& b, bool final, uint64_t records_per_drain) {
  const bool cut = !final && records_per_drain && b.drained >= records_per_drain;
  return b.staging.Writable(cut, final);
}

// Writes what CPU `cpu` took (`write` puts it in the sink), after the chain
// has seen it. On a write error, what failed to reach the file, this batch
// and what the writer had buffered before it, is lost in user space:
// counted.
template <typename Write>
Status WriteTaken(std::vector<CpuBatch>& batches, size_t cpu, model::EventView events, model::SwitchChain* chain,
                  perfetto::TraceSink& sink, Write write) {
  if (chain)
    for (const model::Event& ev : events) chain->Observe(ev);
  Status st = write();
  batches[cpu].staging.Written();
  if (!st.ok()) CountSinkUnwritten(batches, sink);
  return st;
}

// WriteStaged with lanes: each lane takes its CPUs' writable events and
// encodes their bundles at once; then this thread writes them in CPU order.
// After a write error the CPUs after the failed one took their events but
// wrote nothing: they stay staged (DiscardStaged counts them).
Status WriteStagedInLanes(std::vector<CpuBatch>& batches, std::span<const uint64_t> lost_per_cpu, bool final,
                          uint64_t records_per_drain, model::SwitchChain* chain, perfetto::TraceSink& sink,
                          DrainLanes& lanes) {
  const size_t n = batches.size(), k = lanes.lanes();
  std::vector<model::EventView> views(n);
  std::vector<uint8_t> taken(n, 0);  // 1: to write; 2: also a new loss
  lanes.fork_join().Run([&](size_t lane) {
    for (size_t cpu = lane; cpu < n; cpu += k) {
      CpuBatch& b = batches[cpu];
      const bool new_loss = LostNow(lost_per_cpu, cpu) > b.lost_seen;
      if (b.staging.staged() == 0 && !new_loss) continue;
      taken[cpu] = new_loss ? 2 : 1;
      views[cpu] = TakeWritable(b, final, records_per_drain);
      sink.EncodeCpuBundle(static_cast<uint32_t>(cpu), views[cpu], new_loss, lanes.encoder(lane),
                           lanes.irq_names(lane), &lanes.bundle(cpu));
    }
  });
  for (size_t cpu = 0; cpu < n; ++cpu) {
    if (!taken[cpu]) continue;
    batches[cpu].lost_seen = LostNow(lost_per_cpu, cpu);
    GN_RETURN_IF_ERROR(WriteTaken(batches, cpu, views[cpu], chain, sink, [&] {
      return sink.WriteEncodedCpuBatch(static_cast<uint32_t>(cpu), views[cpu], taken[cpu] == 2, lanes.bundle(cpu));
    }));
  }
  return OkStatus();
}

}  // namespace

Status WriteStaged(std::vector<CpuBatch>& batches, std::span<const uint64_t> lost_per_cpu, bool final,
                   uint64_t records_per_drain, model::SwitchChain* chain, perfetto::TraceSink& sink,
                   DrainLanes* lanes) {
  if (lanes) return WriteStagedInLanes(batches, lost_per_cpu, final, records_per_drain, chain, sink, *lanes);
  for (size_t cpu = 0; cpu < batches.size(); ++cpu) {
    CpuBatch& b = batches[cpu];
    const uint64_t lost_now = LostNow(lost_per_cpu, cpu);
    const bool new_loss = lost_now > b.lost_seen;
    b.lost_seen = lost_now;
    if (b.staging.staged() == 0 && !new_loss) continue;
    model::EventView events = TakeWritable(b, final, records_per_drain);
    GN_RETURN_IF_ERROR(WriteTaken(batches, cpu, events, chain, sink, [&] {
      return sink.WriteCpuBatch(static_cast<uint32_t>(cpu), events, new_loss);
    }));
  }
  return OkStatus();
}

void TakeIdleBatches(collect::BatchFlusher& flusher, std::vector<CpuBatch>& batches) {
  uint32_t stream = flusher.stream();
  for (const collect::IdleBatch& idle : flusher.idle()) {
    auto cpu = static_cast<size_t>(idle.cpu);
    if (stream < CpuStaging::kMaxStreams && cpu < batches.size() && batches[cpu].next_batch_seq[stream] == idle.seq)
      batches[cpu].staging.EndBatch(idle.ts, stream, /*from_ring=*/false);
    else
      flusher.FlushNextTime(idle.cpu);
  }
}

void CountSinkUnwritten(std::vector<CpuBatch>& batches, perfetto::TraceSink& sink) {
  sink.TakeUnwritten([&](uint32_t c, std::string_view kind, uint64_t n) {
    if (c < batches.size()) batches[c].CountUnwritten(kind, n);
  });
}

void DiscardStaged(std::vector<CpuBatch>& batches) {
  for (CpuBatch& b : batches) {
    b.CountUnwritten(b.staging.Writable(false, true));
    b.staging.Written();
  }
}

Result<uint64_t> RecordDrain::Drain() {
  for (CpuBatch& b : batches_) b.drained = 0;
  // Batches out first: the drain then reads everything stamped before the
  // flush (the staging holds back what came after, record/cpu_staging.h).
  // Idle CPUs are not flushed; their read stands in for the empty batch once
  // the drain has read their stream that far.
  for (collect::BatchFlusher& f : flushers_) f.FlushAll();
  auto drained = transport_.DrainAll(records_per_drain_, lanes_ ? &lanes_->fork_join() : nullptr);
  if (gate_open_) {
    // From the end of the last read to the end of this one: a stall inside
    // a read (between two rings) left rings unread too.
    uint64_t now = BoottimeNs();
    unread_ns_ = now - std::min(now, last_read_end_);
    unread_from_ = last_read_end_;
    last_read_end_ = now;
  }
  if (drained.ok())
    for (collect::BatchFlusher& f : flushers_) TakeIdleBatches(f, batches_);
  return drained;
}

Status RecordDrain::Flush(bool final) {
  std::vector<uint64_t> lost = transport_.LostPerCpu();
  uint64_t lost_total = 0;
  for (uint64_t n : lost) lost_total += n;
  found_new_loss_ = lost_total > lost_seen_;
  if (found_new_loss_) {
    // New loss: it happened while the rings went unread before this drain.
    lost_seen_ = lost_total;
    if (!first_ring_loss_seen_) first_ring_loss_seen_ = BoottimeNs();
    if (unread_ns_ > unread_before_loss_ns_) {
      unread_before_loss_ns_ = unread_ns_;
      unread_before_loss_from_ = unread_from_;
    }
  }
  return WriteStaged(batches_, lost, final, records_per_drain_, check_switch_chain_ ? &switch_chain_ : nullptr,
                     sink_, lanes_);
}

void RecordDrain::DrainToEnd(model::SessionInfo& session, std::optional<Error>& late_error) {
  // The programs are detached, so the rings only empty from here. After a
  // write error they are still read to the end, to count what they held.
  // The last stretch ended when the gate closed (session.end_ts), however
  // long the detach took after it.
  if (gate_open_ && session.end_ts > last_read_end_) {
    unread_ns_ = session.end_ts - last_read_end_;
    unread_from_ = last_read_end_;
  }
  gate_open_ = false;
  bool file_failed = sink_.failed();
  if (file_failed) {
    // Whatever the failing write was (events, counters), what the writer had
    // buffered is gone.
    CountUnwritten();
  }
  while (true) {
    auto drained = Drain();
    if (!drained.ok()) {
      if (!late_error) late_error = drained.error();
      break;
    }
    if (file_failed) {
      Discard();
    } else if (Status st = Flush(!transport_.backlog()); !st.ok()) {
      if (!late_error) late_error = st.error();
      NoteFileFailure(session, sink_);
      file_failed = true;
      Discard();
    }
    if (!transport_.backlog()) break;
  }
  if (!file_failed) {
    Status st = Flush(true);  // anything held back for order
    if (st.ok()) st = sink_.FlushEvents();
    if (!st.ok()) {
      if (!late_error) late_error = st.error();
      NoteFileFailure(session, sink_);
      CountUnwritten();
    }
  }
  Discard();
  session.unread_before_loss_ns = unread_before_loss_ns_;
  session.unread_before_loss_from = unread_before_loss_from_;
  session.first_ring_loss_seen = first_ring_loss_seen_;
}

}  // namespace gpunoise::record
