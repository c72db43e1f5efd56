#include "import/trace_stats_reader.h"

#include "export/perfetto/protos/perfetto_fields.h"

namespace gpunoise::import {
namespace {


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
      case pf::TraceStats::kBufferStats: {
        if (e.type != WireType::kLengthDelimited) break;
        model::TraceBufferStats b;
        b.index = static_cast<uint32_t>(stats.buffers.size());
        ProtoReader br(e);
        ProtoField v;
        while (br.Next(&v)) {
          switch (v.id) {
            case pf::TraceStats::BufferStats::kBufferSize: b.buffer_size = v.int_value; break;
            case pf::TraceStats::BufferStats::kBytesWritten: b.bytes_written = v.int_value; break;
            case pf::TraceStats::BufferStats::kChunksWritten: b.chunks_written = v.int_value; break;
            case pf::TraceStats::BufferStats::kBytesOverwritten: b.bytes_overwritten = v.int_value; break;
            case pf::TraceStats::BufferStats::kChunksOverwritten: b.chunks_overwritten = v.int_value; break;
            case pf::TraceStats::BufferStats::kChunksDiscarded: b.chunks_discarded = v.int_value; break;
            case pf::TraceStats::BufferStats::kPatchesFailed: b.patches_failed = v.int_value; break;
            case pf::TraceStats::BufferStats::kAbiViolations: b.abi_violations = v.int_value; break;
            case pf::TraceStats::BufferStats::kTraceWriterPacketLoss: b.trace_writer_packet_loss = v.int_value; break;
            case pf::TraceStats::BufferStats::kReadaheadsFailed: b.readaheads_failed = v.int_value; break;
            case pf::TraceStats::BufferStats::kChunksRewritten: b.chunks_rewritten = v.int_value; break;
            default: break;
          }
        }
        if (br.error()) return Malformed(br, "TraceStats.BufferStats is malformed", error);
        stats.buffers.push_back(b);
        break;
      }
      case pf::TraceStats::kChunksDiscarded: stats.chunks_discarded = e.int_value; break;
      case pf::TraceStats::kPatchesDiscarded: stats.patches_discarded = e.int_value; break;
      case pf::TraceStats::kInvalidPackets: stats.invalid_packets = e.int_value; break;
      case pf::TraceStats::kFlushesRequested: stats.flushes_requested = e.int_value; break;
      case pf::TraceStats::kFlushesSucceeded: stats.flushes_succeeded = e.int_value; break;
      case pf::TraceStats::kFlushesFailed: stats.flushes_failed = e.int_value; break;
      case pf::TraceStats::kFinalFlushOutcome: stats.final_flush_failed = e.int_value == pf::TraceStats::FINAL_FLUSH_FAILED; break;
      case pf::TraceStats::kFilterStats: {
        if (e.type != WireType::kLengthDelimited) break;
        ProtoReader fr(e);
        ProtoField v;
        while (fr.Next(&v))
          if (v.id == pf::TraceStats::FilterStats::kErrors) stats.filter_errors = v.int_value;
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
