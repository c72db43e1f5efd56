// Where a recording's events go: a Perfetto trace file with native ftrace
// bundles per CPU and drain, plus the metadata packets around them.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "export/perfetto/ftrace_bundle_encoder.h"
#include "export/perfetto/metadata_packets.h"
#include "export/perfetto/net_tracks.h"
#include "export/perfetto/nic_tracks.h"
#include "export/perfetto/node_tracks.h"
#include "export/perfetto/trace_file_writer.h"
#include "export/perfetto/track_event_writer.h"
#include "model/event_view.h"
#include "model/events.h"
#include "model/host_info.h"
#include "model/irq_info.h"
#include "model/net_counters.h"
#include "model/process_snapshot.h"
#include "model/session_info.h"

namespace gpunoise::perfetto {

class TraceSink : public perfetto::IrqNameSource {
 public:
  using IrqNameFallback = std::function<std::optional<std::string>(int32_t irq)>;

  static Result<std::unique_ptr<TraceSink>> Create(
      const std::string& path, perfetto::TraceCompression compression = perfetto::TraceCompression::kNone,
      int share_gid = -1);  // >= 0: 0640 and of that group (TraceFileWriter::Create)
  ~TraceSink() override;

  void set_irq_table(model::IrqTable irqs) { irqs_ = std::move(irqs); }
  void set_irq_name_fallback(IrqNameFallback fallback) { irq_fallback_ = std::move(fallback); }
  // When the collectors were attached: every CPU's data is complete from here.
  void set_data_start(uint64_t ts) { data_start_ = ts; }
  // The clock snapshot the header and footer carry, instead of the clocks
  // read when they are written: for a trace of an earlier boot (blackbox
  // collect), whose BOOTTIME is not this boot's.
  void set_clock_readings(const perfetto::ClockReadings& clocks) { clock_override_ = clocks; }

  Status WriteHeader(const model::HostInfo& host, const model::ProcessSnapshot& processes,
                     const model::SessionInfo& session);
  // `events`: one CPU's events of one drain, sorted by timestamp. Timed
  // NET_RX entries that speak for untimed ones (SoftirqEntry::
  // untimed_before) move that CPU's untimed counter track, at most one
  // sample a millisecond (and one of the old value at the timed entry
  // before, where the count had not risen since the last sample).
  Status WriteCpuBatch(uint32_t cpu, model::EventView events, bool lost_events);
  // WriteCpuBatch in two parts, for drain lanes (record/drain_lanes.h).
  // First the bundle's bytes, into `bytes`: lanes encode different CPUs'
  // at once, each with an encoder and irq names of its own (LaneEncoder,
  // LockedIrqName); nothing of the sink changes. Then the rest, on one
  // thread, CPU by CPU: `bundle` is what EncodeCpuBundle made of the same
  // events (empty bytes where it had nothing to encode).
  void EncodeCpuBundle(uint32_t cpu, model::EventView events, bool lost_events,
                       perfetto::FtraceBundleEncoder& encoder, perfetto::IrqNameSource& irq_names,
                       std::string* bytes) const;
  Status WriteEncodedCpuBatch(uint32_t cpu, model::EventView events, bool lost_events, std::string_view bundle);
  perfetto::FtraceBundleEncoder LaneEncoder() const { return encoder_; }
  // IrqName for a lane: the names not in the table are made once, under a lock.
  std::string_view LockedIrqName(int32_t irq);
  // The untimed NET_RX softirqs of each CPU (index) as the kernel counted
  // them at the end: a last sample at `ts` where they exceed what the
  // records carried (those after the last timed entry, or carried by a
  // record that was lost) or where the last sample was held back.
  Status WriteNetRxUntimedTotals(uint64_t ts, std::span<const uint64_t> kernel_totals);
  // The untimed NET_RX softirqs written so far, all CPUs.
  uint64_t netrx_untimed() const;
  // After a write error: calls fn(cpu, kind, n) for the events of every batch
  // the file never got, also those the writer had accepted into its buffer
  // before the error, and forgets them.
  // Pushes every event written so far to the file (before the closing
  // accounting, so that what a failure drops is still counted).
  Status FlushEvents() { return writer_.Flush(); }
  void TakeUnwritten(const std::function<void(uint32_t cpu, std::string_view kind, uint64_t n)>& fn);
  Status WriteFooter(const model::ProcessSnapshot& processes, const model::SessionInfo& session);

  // Network counters and metadata (export/perfetto/net_tracks.h).
  void set_nic_event_names(std::vector<std::string> names) {
    encoder_.set_nic_event_names(std::move(names));
  }
  Status WriteNetIrqMap(uint64_t ts) { return net_tracks_.WriteIrqMap(ts, irqs_); }
  Status WriteNetRates(const model::NetSnapshot& earlier, const model::NetSnapshot& later,
                       const model::NetNames& names) {
    return net_tracks_.WriteRates(earlier, later, names);
  }
  Status CloseNetRates(uint64_t ts) { return net_tracks_.CloseRates(ts); }
  Status WriteNetTotals(const model::NetSnapshot& baseline, const model::NetSnapshot& final,
                        const model::NetNames& names) {
    return net_tracks_.WriteTotals(baseline, final, names);
  }
  Status WriteRdmaPorts(uint64_t ts, const std::vector<model::RdmaPort>& deltas) {
    return net_tracks_.WriteRdmaPorts(ts, deltas);
  }
  Status WriteNicStatus(uint64_t ts, const model::CollectorReport& nic) {
    return net_tracks_.WriteNicStatus(ts, nic);
  }
  // The NIC's own counters, link events, PCIe health (export/perfetto/nic_tracks.h).
  perfetto::NicTrackWriter& nic_tracks() { return nic_tracks_; }
  // Steal and CPU-quota counters (export/perfetto/node_tracks.h).
  perfetto::NodeTrackWriter& node_tracks() { return node_tracks_; }
  Status Commit();

  // For appending packets after the footer (record_session.h append_extra).
  perfetto::TraceFileWriter& writer() { return writer_; }
  uint64_t bytes_written() const { return writer_.bytes_written(); }
  uint64_t packet_bytes() const { return writer_.packet_bytes(); }
  bool disk_full() const { return writer_.disk_full(); }
  // A write to the file failed (disk full or another error): it takes no
  // more events.
  bool failed() const { return !first_error_.ok() || writer_.disk_full(); }
  const std::string& path() const { return writer_.path(); }
  const std::string& temp_path() const { return writer_.temp_path(); }

  std::string_view IrqName(int32_t irq) override;

 private:
  explicit TraceSink(perfetto::TraceFileWriter writer);
  // The events at `positions` of `events` (those without an ftrace form).
  Status WriteVectorSlices(uint32_t cpu, model::EventView events, std::span<const uint32_t> positions);
  Status Write(const TracePacketBuilder& packet);
  Status WriteSerialized(std::string_view packet);
  void RememberIdentities(const model::ProcessSnapshot& processes);

  perfetto::TraceFileWriter writer_;
  perfetto::FtraceBundleEncoder encoder_;
  perfetto::TrackEventWriter track_events_;
  perfetto::NetTrackWriter net_tracks_;
  perfetto::NicTrackWriter nic_tracks_;
  perfetto::NodeTrackWriter node_tracks_;
  std::unique_ptr<TracePacketBuilder> packet_;
  std::string bundle_bytes_;  // one CPU batch's packet, reused
  std::vector<uint32_t> vector_positions_;  // one CPU batch's events without an ftrace form, reused
  std::vector<uint64_t> last_bundle_end_;  // per CPU
  // Per CPU: untimed NET_RX softirqs the records carried, the last sample
  // written (its time and value) and the last timed NET_RX entry.
  struct UntimedCount {
    uint64_t total = 0, sampled = 0, sampled_at = 0, last_entry = 0;
    bool written = false;
  };
  std::vector<UntimedCount> untimed_;
  // A timed NET_RX entry that speaks for `count` untimed ones, and the
  // timed NET_RX entry before it on its CPU (0: none).
  struct UntimedEntry {
    uint64_t ts = 0, previous_entry = 0;
    uint32_t count = 0;
  };
  std::vector<UntimedEntry> untimed_seen_;  // one batch's, reused
  Status NoteUntimed(uint32_t cpu, const UntimedEntry& e);
  uint64_t data_start_ = 0;
  std::optional<perfetto::ClockReadings> clock_override_;
  // Each CPU's "Vectors Cpu N" slices, on a sequence of their own
  // (CpuVectorSequenceId) whose default track is that CPU's; by CPU.
  std::vector<std::unique_ptr<perfetto::TrackEventWriter>> vector_writers_;
  uint64_t vector_parent_track_ = 0;
  model::IrqTable irqs_;
  std::map<int32_t, std::string> fallback_names_;
  std::mutex irq_names_mu_;  // fallback_names_, from drain lanes
  IrqNameFallback irq_fallback_;
  Status first_error_;
  std::map<int32_t, model::ProcessIdentity> identities_;  // by host pid
  std::map<int32_t, uint64_t> identity_starts_;           // its start, to tell a reused pid

  // Events of batches the writer accepted whose packets may not be in the
  // file yet (the writer buffers), up to packet number `last_packet`.
  struct PendingEvents {
    uint64_t last_packet = 0;
    uint32_t cpu = 0;
    std::array<uint32_t, model::kEventKinds> kinds{};
  };
  std::deque<PendingEvents> pending_;
  void ForgetDurable();
};

}  // namespace gpunoise::perfetto
