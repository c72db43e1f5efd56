#include "record/gpu/gpu_loss_packets.h"

#include "export/perfetto/trace_file_writer.h"
#include "export/perfetto/track_event_writer.h"

namespace gpunoise::gpu {

Status WriteGpuLoss(uint64_t ts, const model::GpuLoss& loss, perfetto::TrackEventWriter& writer,
                    perfetto::TraceFileWriter& out) {
  perfetto::TracePacketBuilder packet;
  uint64_t track = writer.TrackUuid(model::kGpuLossTrackName);
  writer.FillTrackDescriptor(&packet, track, model::kGpuLossTrackName, 0,
                             "what gpunoise collected of the GPU side, and what it lost");
  GN_RETURN_IF_ERROR(out.WritePacket(packet));
  auto e = writer.FillInstant(&packet, ts, track, model::kGpuLossEventName, "gpunoise");
  perfetto::AddArg(e, "gpu.processes", loss.processes);
  perfetto::AddArg(e, "gpu.fragments", loss.fragments);
  perfetto::AddArg(e, "gpu.cupti_dropped_records", loss.cupti_dropped_records);
  perfetto::AddArg(e, "gpu.chunks_not_written", loss.chunks_not_written);
  perfetto::AddArg(e, "gpu.fragments_unreadable", loss.fragments_unreadable);
  perfetto::AddArg(e, "gpu.fragments_truncated", loss.fragments_truncated);
  perfetto::AddArg(e, "gpu.fragments_late", loss.fragments_late);
  if (loss.processes_translated || loss.processes_unmapped || loss.threads_unmapped) {
    perfetto::AddArg(e, "gpu.pidns.processes_translated", loss.processes_translated);
    perfetto::AddArg(e, "gpu.pidns.processes_unmapped", loss.processes_unmapped);
    perfetto::AddArg(e, "gpu.pidns.threads_unmapped", loss.threads_unmapped);
  }
  if (loss.processes_not_captured)
    perfetto::AddArg(e, "gpu.processes_not_captured", loss.processes_not_captured);
  if (!loss.error.empty()) perfetto::AddArg(e, "gpu.error", loss.error);
  return out.WritePacket(packet);
}

}  // namespace gpunoise::gpu
