// NodeTrackWriter's NUMA part: instants on the node metadata track that
// analyze/numa_metadata.h reads back (typed args, no text to parse).
#include "common/cpu_list.h"
#include "export/perfetto/node_tracks.h"
#include "export/perfetto/track_event_writer.h"

namespace gpunoise::perfetto {

Status NodeTrackWriter::WriteNumaTopology(uint64_t ts, const model::NumaTopology& topology) {
  TracePacketBuilder packet;
  for (const model::NumaNodeCpus& n : topology.nodes) {
    EventRef e = writer_.FillInstant(&packet, ts, MetadataTrack(ts), kNumaNodeEventName, "gpunoise");
    AddArg(e, "node", n.node);
    AddArg(e, "cpus", FormatCpuList(n.cpus));
    GN_RETURN_IF_ERROR(out_(packet));
  }
  for (const model::NumaDevice& d : topology.devices) {
    EventRef e = writer_.FillInstant(&packet, ts, MetadataTrack(ts), kNumaDeviceEventName, "gpunoise");
    AddArg(e, "kind", d.kind);
    AddArg(e, "name", d.name);
    AddArg(e, "bus_id", d.bus_id);
    AddArg(e, "numa_node", d.numa_node);
    GN_RETURN_IF_ERROR(out_(packet));
  }
  return OkStatus();
}

Status NodeTrackWriter::WriteNicIrqCpus(uint64_t ts, const model::NicIrqAffinity& irq, std::string_view phase) {
  TracePacketBuilder packet;
  EventRef e = writer_.FillInstant(&packet, ts, MetadataTrack(ts), kNicIrqCpusEventName, "gpunoise");
  AddArg(e, "irq", irq.irq);
  AddArg(e, "device", irq.device);
  AddArg(e, "cpus", FormatCpuList(irq.cpus));
  AddArg(e, "effective", irq.effective);
  AddArg(e, "phase", phase);
  return out_(packet);
}

}  // namespace gpunoise::perfetto
