#include "record/gpu/gpu_counter_packets.h"

#include <fmt/format.h>

#include <map>

#include "export/perfetto/node_tracks.h"
#include "export/perfetto/trace_file_writer.h"
#include "export/perfetto/track_event_writer.h"
#include "model/gpu_tracks.h"

namespace gpunoise::gpu {

using perfetto::TrackEventWriter;

namespace {

struct CounterSpec {
  const char* name;
  TrackEventWriter::CounterUnit unit;
  const char* unit_name;
  std::optional<double> GpuSample::*value;
};

constexpr CounterSpec kCounters[] = {
    {"SM clock", TrackEventWriter::CounterUnit::kNone, "MHz", &GpuSample::sm_clock_mhz},
    {"GPU utilization", TrackEventWriter::CounterUnit::kNone, "%", &GpuSample::gpu_utilization},
    {"Memory utilization", TrackEventWriter::CounterUnit::kNone, "%", &GpuSample::memory_utilization},
    {"Memory used", TrackEventWriter::CounterUnit::kBytes, "", &GpuSample::memory_used_bytes},
    {"Temperature", TrackEventWriter::CounterUnit::kNone, "°C", &GpuSample::temperature_c},
    {"Power", TrackEventWriter::CounterUnit::kNone, "W", &GpuSample::power_w},
};

}  // namespace

Status WriteGpuCounters(const std::vector<GpuInfo>& gpus, const std::vector<GpuSample>& samples,
                        std::string_view node_id, TrackEventWriter& writer,
                        perfetto::TraceFileWriter& out) {
  perfetto::TracePacketBuilder packet;
  auto write = [&]() { return out.WritePacket(packet); };
  std::map<uint32_t, const GpuInfo*> by_index;
  for (const auto& g : gpus) by_index[g.index] = &g;
  // NVML's PCI address of each GPU, by UUID: GPU work's tracks are named by
  // UUID, sysfs gives each PCI address its NUMA node (numa_locality).
  if (!samples.empty()) {
    uint64_t node_track = 0;
    for (const auto& g : gpus) {
      if (g.pci_bus_id.empty()) continue;
      if (!node_track) {
        node_track = writer.TrackUuid(perfetto::kNodeMetadataTrackName);
        writer.FillTrackDescriptor(&packet, node_track, perfetto::kNodeMetadataTrackName, 0,
                                   "NVML's PCI address of each GPU (docs/report.md)");
        GN_RETURN_IF_ERROR(write());
      }
      auto e = writer.FillInstant(&packet, samples.front().ts, node_track, perfetto::kGpuBusIdEventName, "gpunoise");
      perfetto::AddArg(e, "uuid", g.uuid);
      perfetto::AddArg(e, "index", g.index);
      perfetto::AddArg(e, "bus_id", g.pci_bus_id);
      GN_RETURN_IF_ERROR(write());
    }
  }
  // Per GPU: the group, its counter tracks, the throttling track.
  std::map<std::pair<uint32_t, size_t>, uint64_t> counter_tracks;
  std::map<uint32_t, uint64_t> throttle_tracks, reason_tracks;
  for (const auto& g : gpus) {
    // By UUID, the key the CUPTI library's groups have too (its processes see
    // the GPU under ordinals of their own); the index only without one.
    uint64_t group = g.uuid.empty() ? model::GpuGroupTrackUuid(node_id, g.index)
                                    : model::GpuGroupTrackUuidByUuid(node_id, g.uuid);
    std::string name = g.uuid.empty() ? model::GpuTrackName(g.index, g.name)
                                      : model::GpuTrackNameByUuid(g.uuid, g.name);
    writer.FillTrackDescriptor(&packet, group, name, 0,
                               fmt::format("{}, {}, NVML index {}, PCI {}, {} MiB", g.name, g.uuid,
                                           g.index, g.pci_bus_id.empty() ? "unknown" : g.pci_bus_id,
                                           g.memory_total >> 20));
    GN_RETURN_IF_ERROR(write());
    for (size_t c = 0; c < std::size(kCounters); ++c) {
      uint64_t uuid = writer.TrackUuid(fmt::format("nvml {} {}", g.index, kCounters[c].name));
      writer.FillCounterTrackDescriptor(&packet, uuid, kCounters[c].name, kCounters[c].unit,
                                        kCounters[c].unit_name, group);
      GN_RETURN_IF_ERROR(write());
      counter_tracks[{g.index, c}] = uuid;
    }
    uint64_t reasons = writer.TrackUuid(fmt::format("nvml {} throttle reasons", g.index));
    writer.FillCounterTrackDescriptor(&packet, reasons, "Clock throttle reasons (bitmask)",
                                      TrackEventWriter::CounterUnit::kNone, "", group);
    GN_RETURN_IF_ERROR(write());
    reason_tracks[g.index] = reasons;
    uint64_t throttling = writer.TrackUuid(fmt::format("nvml {} throttling", g.index));
    writer.FillTrackDescriptor(&packet, throttling, "Clock throttling", group,
                               "periods in which NVML reports a clock limit other than idle");
    GN_RETURN_IF_ERROR(write());
    throttle_tracks[g.index] = throttling;
  }

  std::map<uint32_t, uint64_t> open_reasons;  // GPU -> reasons of the open slice
  uint64_t last_ts = 0;
  for (const GpuSample& s : samples) {
    if (!by_index.count(s.gpu)) continue;
    last_ts = std::max(last_ts, s.ts);
    for (size_t c = 0; c < std::size(kCounters); ++c) {
      const auto& v = s.*(kCounters[c].value);
      if (!v) continue;
      writer.FillCounter(&packet, s.ts, counter_tracks[{s.gpu, c}], *v);
      GN_RETURN_IF_ERROR(write());
    }
    if (!s.throttle_reasons) continue;
    writer.FillCounter(&packet, s.ts, reason_tracks[s.gpu], static_cast<double>(*s.throttle_reasons));
    GN_RETURN_IF_ERROR(write());
    uint64_t limits = *s.throttle_reasons & ~kThrottleGpuIdle;
    auto open = open_reasons.find(s.gpu);
    uint64_t current = open == open_reasons.end() ? 0 : open->second;
    if (limits == current) continue;
    uint64_t track = throttle_tracks[s.gpu];
    if (current) {
      writer.FillSliceEnd(&packet, s.ts, track);
      GN_RETURN_IF_ERROR(write());
      open_reasons.erase(s.gpu);
    }
    if (limits) {
      auto e = writer.FillSliceBegin(&packet, s.ts, track, ThrottleReasonNames(limits), "gpu.throttle");
      perfetto::AddArg(e, "reasons", limits);
      GN_RETURN_IF_ERROR(write());
      open_reasons[s.gpu] = limits;
    }
  }
  for (const auto& [gpu, reasons] : open_reasons) {
    writer.FillSliceEnd(&packet, last_ts, throttle_tracks[gpu]);
    GN_RETURN_IF_ERROR(write());
  }
  return OkStatus();
}

Status WriteNvmlUnavailable(uint64_t ts, std::string_view reason, TrackEventWriter& writer,
                            perfetto::TraceFileWriter& out) {
  perfetto::TracePacketBuilder packet;
  uint64_t track = writer.TrackUuid(kGpuCountersTrackName);
  writer.FillTrackDescriptor(&packet, track, kGpuCountersTrackName, 0,
                             "GPU clocks, utilization, memory, temperature, power from NVML");
  GN_RETURN_IF_ERROR(out.WritePacket(packet));
  auto e = writer.FillInstant(&packet, ts, track, "NVML unavailable", "gpunoise");
  perfetto::AddArg(e, "reason", reason);
  return out.WritePacket(packet);
}

}  // namespace gpunoise::gpu
