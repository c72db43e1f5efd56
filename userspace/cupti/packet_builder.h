// Perfetto TracePackets for the GPU timeline, encoded with ProtoWriter: track
// descriptors, slices, instants, counters, args and flows on one trusted
// packet sequence. The shape follows export/perfetto/track_event_writer.h,
// which does the same for the recorder itself.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/proto_wire.h"

namespace gpunoise::cupti {

struct TrackSpec {
  uint64_t uuid = 0;
  uint64_t parent_uuid = 0;
  std::string name;         // empty: the trace processor names it (thread and process tracks)
  std::string description;
  // At most one of these: a process track, a thread track, a counter track.
  int32_t process_pid = 0;
  std::string process_name;
  int32_t thread_pid = 0;
  int32_t thread_tid = 0;
  bool counter = false;
  std::string counter_unit_name;
  bool explicit_child_order = false;  // children sorted by sibling_order_rank
  int32_t sibling_order_rank = 0;
  // What the track is for the report (model/track_identity.h), written as an
  // identity instant beside the descriptor; empty: none.
  std::string_view identity_kind;
  uint64_t identity_process_track = 0;  // gpu_process: the process's own track
  // gpu_device: the GPU's UUID, NVML index (-1: unknown) and short model.
  std::string identity_gpu_uuid;
  int32_t identity_gpu_index = -1;
  std::string identity_gpu_model;
};

struct ClockReadings {
  uint64_t boottime = 0, monotonic = 0, realtime = 0;
};

class PacketBuilder;

// One TrackEvent packet under construction; written out when it goes out of
// scope, so args and flows can be added in any order.
class EventPacket {
 public:
  EventPacket(const EventPacket&) = delete;
  EventPacket& operator=(const EventPacket&) = delete;
  ~EventPacket();

  EventPacket& Arg(std::string_view name, std::string_view value);
  EventPacket& Arg(std::string_view name, const char* value) {
    return Arg(name, std::string_view(value ? value : ""));
  }
  EventPacket& Arg(std::string_view name, uint64_t value);
  EventPacket& Arg(std::string_view name, int64_t value);
  EventPacket& Arg(std::string_view name, uint32_t value) { return Arg(name, uint64_t{value}); }
  EventPacket& Arg(std::string_view name, int32_t value) { return Arg(name, int64_t{value}); }
  EventPacket& Arg(std::string_view name, double value);
  EventPacket& Arg(std::string_view name, bool value);
  // A flow that starts (or continues) at this slice.
  EventPacket& Flow(uint64_t flow_id);
  // A flow that ends at this slice.
  EventPacket& TerminatingFlow(uint64_t flow_id);
  // The UI highlights every slice that shares this string.
  EventPacket& Correlation(std::string_view id);

 private:
  friend class PacketBuilder;
  EventPacket(PacketBuilder* builder, size_t event_token);

  PacketBuilder* builder_;
  size_t event_token_;
};

class PacketBuilder {
 public:
  // Framed packets are appended to `out`.
  PacketBuilder(uint32_t sequence_id, std::string* out);

  uint32_t sequence_id() const { return sequence_id_; }
  std::string* out() const { return out_; }
  void set_out(std::string* out) { out_ = out; }

  // The next packet opens the sequence (first_packet_on_sequence, incremental
  // state cleared), so each chunk file reads on its own.
  void StartSequence() { sequence_start_pending_ = true; }

  void ClockSnapshot(const ClockReadings& clocks);
  void TrackDescriptor(const TrackSpec& track);

  [[nodiscard]] EventPacket SliceBegin(uint64_t ts, uint64_t track, std::string_view name,
                                       std::string_view category);
  void SliceEnd(uint64_t ts, uint64_t track);
  [[nodiscard]] EventPacket Instant(uint64_t ts, uint64_t track, std::string_view name,
                                    std::string_view category);
  void Counter(uint64_t ts, uint64_t track, double value);

 private:
  friend class EventPacket;
  // `on_sequence` false: no trusted_packet_sequence_id, for a thread's track
  // descriptor (export/perfetto/sequence_ids.h says why).
  ProtoWriter BeginPacket(uint64_t ts, bool on_sequence = true);
  void EndPacket();
  EventPacket BeginEvent(uint64_t ts, uint64_t track, uint64_t type, std::string_view name,
                         std::string_view category);

  uint32_t sequence_id_;
  std::string* out_;
  std::string scratch_;  // the packet being built, framed into out_ at the end
  bool sequence_start_pending_ = false;
};

}  // namespace gpunoise::cupti
