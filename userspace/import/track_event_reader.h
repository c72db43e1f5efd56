// Decodes TrackDescriptor and TrackEvent packets (GPU work, launch calls,
// counters, gpunoise's session summary and findings) with the interning
// state of each packet sequence.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "import/packet_error.h"
#include "common/proto_wire_reader.h"
#include "model/trace_sink.h"

namespace gpunoise::import {

// What a TracePacket says about the sequence it belongs to.
struct PacketContext {
  uint64_t timestamp = 0;
  uint32_t sequence_id = 0;
  bool incremental_state_cleared = false;
  const ProtoField* interned_data = nullptr;
  const ProtoField* defaults = nullptr;  // TracePacketDefaults
};

class TrackEventReader {
 public:
  explicit TrackEventReader(model::TraceSink& sink) : sink_(sink) {}

  // Applies the packet's sequence state (cleared state, interned data,
  // defaults); call for every packet that has a sequence id.
  bool UpdateSequence(const PacketContext& ctx, PacketError* error);
  bool DecodeDescriptor(const ProtoField& field, PacketError* error);
  bool DecodeEvent(const PacketContext& ctx, const ProtoField& field, PacketError* error);

  uint64_t events() const { return events_; }

 private:
  struct SequenceState {
    std::unordered_map<uint64_t, std::string> event_names;
    std::unordered_map<uint64_t, std::string> categories;
    std::unordered_map<uint64_t, std::string> annotation_names;
    std::unordered_map<uint64_t, std::string> annotation_strings;
    uint64_t default_track = 0;
  };
  bool DecodeAnnotation(const ProtoField& field, SequenceState& seq, model::TrackArg* arg,
                        PacketError* error, const uint8_t* base);

  model::TraceSink& sink_;
  std::unordered_map<uint32_t, SequenceState> sequences_;
  model::TrackEventRecord record_;  // reused
  uint64_t events_ = 0;
};

}  // namespace gpunoise::import
