#include "import/trace_stats_reader.h"

#include "import/perfetto_fields.h"

namespace gpunoise::import {
namespace {

namespace f = fields::trace_stats;

bool Malformed(const ProtoReader& r, const char* what, PacketError* error) {
  *error = {r.error_offset(), what};
  return false;
}

}  // namespace

bool DecodeTraceStats(const ProtoField& field, model::TraceSink& sink, PacketError* error) {
  model::TraceServiceStats stats;
  ProtoReader r(field);
  ProtoField e;
  while (r.Next(&e)) {
    switch (e.id) {
      case f::kBufferStats: {
        if (e.type != WireType::kLengthDelimited) break;
        model::TraceBufferStats b;
        b.index = static_cast<uint32_t>(stats.buffers.size());
        ProtoReader br(e);
        ProtoField v;
        while (br.Next(&v)) {
          switch (v.id) {
            case f::kBufBufferSize: b.buffer_size = v.int_value; break;
            case f::kBufBytesWritten: b.bytes_written = v.int_value; break;
            case f::kBufChunksWritten: b.chunks_written = v.int_value; break;
            case f::kBufBytesOverwritten: b.bytes_overwritten = v.int_value; break;
            case f::kBufChunksOverwritten: b.chunks_overwritten = v.int_value; break;
            case f::kBufChunksDiscarded: b.chunks_discarded = v.int_value; break;
            case f::kBufPatchesFailed: b.patches_failed = v.int_value; break;
            case f::kBufAbiViolations: b.abi_violations = v.int_value; break;
            case f::kBufTraceWriterPacketLoss: b.trace_writer_packet_loss = v.int_value; break;
            case f::kBufReadaheadsFailed: b.readaheads_failed = v.int_value; break;
            case f::kBufChunksRewritten: b.chunks_rewritten = v.int_value; break;
            default: break;
          }
        }
        if (br.error()) return Malformed(br, "TraceStats.BufferStats is malformed", error);
        stats.buffers.push_back(b);
        break;
      }
      case f::kChunksDiscarded: stats.chunks_discarded = e.int_value; break;
      case f::kPatchesDiscarded: stats.patches_discarded = e.int_value; break;
      case f::kInvalidPackets: stats.invalid_packets = e.int_value; break;
      case f::kFlushesRequested: stats.flushes_requested = e.int_value; break;
      case f::kFlushesSucceeded: stats.flushes_succeeded = e.int_value; break;
      case f::kFlushesFailed: stats.flushes_failed = e.int_value; break;
      case f::kFinalFlushOutcome: stats.final_flush_failed = e.int_value == f::kFinalFlushFailed; break;
      case f::kFilterStats: {
        if (e.type != WireType::kLengthDelimited) break;
        ProtoReader fr(e);
        ProtoField v;
        while (fr.Next(&v))
          if (v.id == f::kFilterErrors) stats.filter_errors = v.int_value;
        if (fr.error()) return Malformed(fr, "TraceStats.FilterStats is malformed", error);
        break;
      }
      default: break;
    }
  }
  if (r.error()) return Malformed(r, "TraceStats is malformed", error);
  sink.OnTraceStats(stats);
  return true;
}

}  // namespace gpunoise::import
