// One TracePacket being encoded with the project's one wire codec
// (common/proto_wire.h), field numbers from the generated table: what every
// recorder-side writer fills, in place of libprotobuf's message classes (no
// product binary links libprotobuf; tests decode the bytes with it, as an
// independent reader).
//
// Fields are written in the order the writer calls them, not sorted by
// number as libprotobuf does; protobuf readers (the trace processor's
// decoder, libprotobuf) read fields in any order. Nested messages are opened
// and closed in order. Fill* functions leave the message they wrote open, so
// that a caller can add to it (args of a track event, labels of a process
// track) through In(); bytes() closes whatever is still open.
// A singular nested message must be opened once per packet: the trace
// processor keeps only the last occurrence of a non-repeated field, where
// libprotobuf would merge them.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "common/proto_wire.h"

namespace gpunoise::perfetto {

class TracePacketBuilder {
 public:
  void Clear() {
    bytes_.clear();
    open_.clear();
  }

  // A writer at the innermost open message.
  ProtoWriter w() { return ProtoWriter(&bytes_); }

  void Open(uint32_t field) { open_.push_back({field, ProtoWriter(&bytes_).BeginMessage(field)}); }
  void Close() {
    ProtoWriter(&bytes_).EndMessage(open_.back().token);
    open_.pop_back();
  }

  // Back at the packet's top level.
  void CloseAll() {
    while (!open_.empty()) Close();
  }
  // A writer inside the open message `field`, closing the messages opened
  // after it. The message must be open: anything else is a writer bug that
  // would put fields into the wrong message, so it aborts.
  ProtoWriter In(uint32_t field) {
    while (!open_.empty() && open_.back().field != field) Close();
    if (open_.empty()) std::abort();
    return w();
  }

  // The encoded packet, every open message closed. Closing changes no
  // field, so a const packet can be asked for its bytes.
  std::string_view bytes() const {
    while (!open_.empty()) {
      ProtoWriter(&bytes_).EndMessage(open_.back().token);
      open_.pop_back();
    }
    return bytes_;
  }

 private:
  struct OpenMessage {
    uint32_t field;
    size_t token;
  };
  mutable std::string bytes_;
  mutable std::vector<OpenMessage> open_;
};

}  // namespace gpunoise::perfetto
