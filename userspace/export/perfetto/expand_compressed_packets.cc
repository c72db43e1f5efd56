#include "export/perfetto/expand_compressed_packets.h"

#include <cstdint>
#include <span>
#include <vector>

#include "compression/inflate.h"
#include "export/perfetto/protos/perfetto_trace_subset.pb.h"

namespace gpunoise::perfetto {

Result<size_t> ExpandCompressedPackets(Trace* trace) {
  size_t blocks = 0;
  for (const TracePacket& p : trace->packet()) blocks += p.has_compressed_packets();
  if (blocks == 0) return blocks;

  google::protobuf::RepeatedPtrField<TracePacket> expanded;
  std::vector<uint8_t> inflated;
  Trace inner;
  for (int i = 0; i < trace->packet_size(); ++i) {
    TracePacket* packet = trace->mutable_packet(i);
    if (!packet->has_compressed_packets()) {
      *expanded.Add() = std::move(*packet);
      continue;
    }
    const std::string& bytes = packet->compressed_packets();
    Status st = compression::InflateZlib(
        std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), &inflated);
    if (!st.ok()) return MakeError("failed to inflate packet {}: {}", i, st.error().message);
    inner.Clear();
    if (!inner.ParseFromArray(inflated.data(), static_cast<int>(inflated.size())))
      return MakeError("failed to read packet {}: its compressed packets are not a trace", i);
    for (TracePacket& p : *inner.mutable_packet()) {
      if (p.has_compressed_packets())
        return MakeError("failed to read packet {}: a compressed block inside a compressed block", i);
      *expanded.Add() = std::move(p);
    }
  }
  trace->mutable_packet()->Swap(&expanded);
  return blocks;
}

}  // namespace gpunoise::perfetto
