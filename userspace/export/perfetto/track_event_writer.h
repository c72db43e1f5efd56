// TrackEvent packets on one trusted packet sequence: track descriptors,
// slices, instants, counters and flows, for everything Perfetto has no native
// ftrace message for (system vectors, NIC counters, GPU work, findings).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "export/perfetto/trace_packet_builder.h"

namespace gpunoise::perfetto {

// The track event of a packet being filled: what args are added to.
class EventRef {
 public:
  explicit EventRef(TracePacketBuilder* packet) : packet_(packet) {}
  TracePacketBuilder* packet() const { return packet_; }

 private:
  TracePacketBuilder* packet_;
};

class TrackEventWriter {
 public:
  // `salt` keeps track uuids of different trace files apart, so that merged
  // traces do not collide.
  //
  // `default_track` (0: none) makes this a sequence of its own for one busy
  // track: its first packet names the track in TracePacketDefaults, and its
  // events on that track leave out their track_uuid (a 10-byte varint, over
  // a quarter of an idle sample) and say they need the sequence's state.
  TrackEventWriter(uint32_t sequence_id, uint64_t salt, uint64_t default_track = 0);

  uint32_t sequence_id() const { return sequence_id_; }
  uint64_t salt() const { return salt_; }
  uint64_t default_track() const { return default_track_; }
  uint64_t TrackUuid(std::string_view key) const;

  // Each Fill* clears `packet` first.
  void FillTrackDescriptor(TracePacketBuilder* packet, uint64_t uuid, std::string_view name,
                           uint64_t parent_uuid = 0, std::string_view description = {});
  // A track attached to a Linux thread, so its slices appear in that thread's
  // group beside the kernel's scheduling data for it. The packet goes out on
  // no sequence (sequence_ids.h says why).
  void FillThreadTrackDescriptor(TracePacketBuilder* packet, uint64_t uuid, int32_t pid, int32_t tid,
                                 std::string_view thread_name);
  void FillProcessTrackDescriptor(TracePacketBuilder* packet, uint64_t uuid, int32_t pid,
                                  std::string_view process_name);
  enum class CounterUnit { kNone, kCount, kBytes, kTimeNs };
  void FillCounterTrackDescriptor(TracePacketBuilder* packet, uint64_t uuid, std::string_view name,
                                  CounterUnit unit, std::string_view unit_name = {},
                                  uint64_t parent_uuid = 0);

  EventRef FillSliceBegin(TracePacketBuilder* packet, uint64_t ts, uint64_t track,
                             std::string_view name, std::string_view category = {});
  EventRef FillSliceEnd(TracePacketBuilder* packet, uint64_t ts, uint64_t track);
  EventRef FillInstant(TracePacketBuilder* packet, uint64_t ts, uint64_t track, std::string_view name,
                          std::string_view category = {});
  void FillCounter(TracePacketBuilder* packet, uint64_t ts, uint64_t track, double value);

  // Events whose name, category, arg names and string args are interned
  // (InternedData), for producers of many small events (the kwork
  // collector's IPIs and callbacks: one of each per remote wakeup under a
  // NET_RX flood). A string is defined in the packet of its first use, so a
  // reader of the sequence from its start resolves every iid. Args go in
  // through AddInternedArg; FinishInterned must come before the packet goes
  // out (the next Fill* aborts otherwise: the definitions would be lost).
  EventRef FillInternedSliceBegin(TracePacketBuilder* packet, uint64_t ts, uint64_t track, std::string_view name,
                                  std::string_view category);
  EventRef FillInternedInstant(TracePacketBuilder* packet, uint64_t ts, uint64_t track, std::string_view name,
                               std::string_view category);
  void AddInternedArg(EventRef event, std::string_view name, std::string_view value);
  void AddInternedArg(EventRef event, std::string_view name, int64_t value);
  void AddInternedArg(EventRef event, std::string_view name, uint64_t value);
  void FinishInterned(TracePacketBuilder* packet);

 private:
  enum InternTable { kEventNames, kCategories, kAnnotationNames, kAnnotationStrings, kInternTables };
  struct Definition {
    InternTable table;
    uint64_t iid;
    std::string_view value;  // into the table's key: map nodes do not move
  };
  // Clears `packet` for a new one; aborts on unfinished interned definitions.
  void Begin(TracePacketBuilder* packet);
  // Begin, then the timestamp and this writer's sequence fields.
  void Stamp(TracePacketBuilder* packet, uint64_t ts, bool needs_incremental_state = false);
  // Stamp, then the event's type and track (left out on the default track).
  EventRef Open(TracePacketBuilder* packet, uint64_t ts, uint64_t track, uint32_t type,
                bool needs_incremental_state = false);
  uint64_t Intern(InternTable table, std::string_view value);
  EventRef FillInterned(TracePacketBuilder* packet, uint64_t ts, uint64_t track, uint32_t type, std::string_view name,
                        std::string_view category);

  uint32_t sequence_id_;
  uint64_t salt_;
  uint64_t default_track_;
  bool first_packet_ = true;
  // Looked up by string_view: a key built per lookup was a tenth of the
  // recorder's CPU under a NET_RX flood.
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, uint64_t, StringHash, std::equal_to<>> interned_[kInternTables];
  std::vector<Definition> pending_;
};

// Debug annotations ("args" in the UI).
void AddArg(EventRef event, std::string_view name, std::string_view value);
void AddArg(EventRef event, std::string_view name, const char* value);
void AddArg(EventRef event, std::string_view name, int64_t value);
void AddArg(EventRef event, std::string_view name, uint64_t value);
void AddArg(EventRef event, std::string_view name, int32_t value);
void AddArg(EventRef event, std::string_view name, uint32_t value);
void AddArg(EventRef event, std::string_view name, double value);
void AddArg(EventRef event, std::string_view name, bool value);

// 64-bit FNV-1a.
uint64_t Fnv1a64(std::string_view data, uint64_t seed = 0xcbf29ce484222325ull);

}  // namespace gpunoise::perfetto
