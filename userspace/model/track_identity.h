// What a track is, as typed data: the vehicle that lets the report find its
// tracks without reading their names (names are for people and may change).
//
// The vehicle (docs/report.md, "Track identity"): Perfetto's TrackDescriptor
// has no args, so each typed track gets one TrackEvent instant, category
// kTrackIdentityCategory, whose debug annotations say which track
// (`track_uuid`) and what it is (`kind`, then the kind's fields: `device`,
// `metric`, `cpu`, `detail`, `process_track`, `gpu_uuid`, `gpu_index`,
// `gpu_model`). The trace processor keeps debug annotations
// in its args table, so they are also visible in the UI and in SQL. The keys
// below are machine identifiers, never UI labels: renaming a track leaves
// them, and the findings, unchanged.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/gpu_tracks.h"

namespace gpunoise::model {

inline constexpr std::string_view kTrackIdentityCategory = "gpunoise.track";
inline constexpr std::string_view kTrackIdentityEventName = "track identity";

// The `kind` keys, written into traces: never change one, only add. Here
// (not only in the .cc) because the CUPTI library, which links no model
// code, writes the GPU ones.
inline constexpr std::string_view kTrackKindNetMetadata = "net_metadata";
inline constexpr std::string_view kTrackKindNodeMetadata = "node_metadata";
inline constexpr std::string_view kTrackKindNetCounter = "net_counter";
inline constexpr std::string_view kTrackKindGpuDevice = "gpu_device";
inline constexpr std::string_view kTrackKindGpuProcess = "gpu_process";
inline constexpr std::string_view kTrackKindGpuStream = "gpu_stream";
inline constexpr std::string_view kTrackKindNodeCounter = "node_counter";
inline constexpr std::string_view kTrackKindKernelHealth = "kernel_health_counter";

enum class TrackKind : uint8_t {
  kUnknown,
  kNetMetadata,   // the network collectors' metadata instants ("irq", "napi", "net device", ...)
  kNodeMetadata,  // the node collectors' metadata instants ("cpu quota", "affinity", ...)
  kNetCounter,    // a per-device network counter (device, metric, cpu, detail)
  kGpuDevice,     // one GPU's group, shared by every process on the node and NVML
  kGpuProcess,    // one process's group of streams inside a GPU's (pid)
  kGpuStream,     // a stream lane: GPU work (kernels, copies, memsets)
  kNodeCounter,   // a node collector's counter (NodeMetric; cpu, or the cgroup's path in `detail`)
  // One of the kernel's own trouble counters (/sys/kernel/*_count): the
  // file's name ("softlockup_count", ...) in `detail`, the value since boot.
  kKernelHealthCounter,
};

// What a node counter track counts (export/perfetto/node_tracks.h).
enum class NodeMetric : uint8_t {
  kUnknown,
  kCpuSteal,           // cpu: share stolen from one sample to the next (0..1)
  kCgroupNrThrottled,  // detail: the cgroup; increases since the recording started
  kCgroupThrottledNs,
  kCgroupNrPeriods,
  kCpuIdleState,       // cpu: the cpuidle state index from entry to exit, -1 while not idle
  kCpuFrequency,       // cpu: kHz
  // cpu: NET_RX softirqs that ran untimed (storm sampling, bpf/irq.bpf.c)
  // since the recording started, cumulative; a sample stands at the timed
  // entry after them (or at the end of the recording for the last ones).
  kNetRxUntimed,
};

// What a network counter track counts. Per-CPU metrics carry `cpu`; kDrops
// carries the drop reason and kNicEvents/kNicCounter the event or counter
// name in `detail`.
enum class NetMetric : uint8_t {
  kUnknown,
  kRxPackets,
  kRxGbit,
  kTxPackets,
  kTxGbit,
  kTxErrors,
  kQueuedPackets,
  kNapiPolls,
  kNapiFullBudget,
  kNapiPackets,
  kTxTimeouts,  // cumulative count
  kDrops,
  kNicEvents,   // NIC-driver tracepoint hits per second
  kNicCounter,  // an ethtool counter's rate
  kCpuNapiPackets,
  kCpuRxPackets,
};

struct TrackIdentity {
  TrackKind kind = TrackKind::kUnknown;
  std::string device;  // kNetCounter: the device label ("eth0", "eth0@netns 4026532")
  NetMetric metric = NetMetric::kUnknown;
  int32_t cpu = -1;
  std::string detail;
  // kGpuProcess: the process's own track (`process_track`), whose process
  // descriptor holds the pid (translated to the host's for a container);
  // `pid` is resolved from it when the trace is read.
  uint64_t process_track = 0;
  int32_t pid = 0;
  NodeMetric node_metric = NodeMetric::kUnknown;  // kNodeCounter, written as `metric`
  // kGpuDevice: the GPU as NVML and CUPTI name it (full "GPU-5f2a1c3e-..."
  // UUID, NVML's index, the model without the vendor, "H200"), each when
  // the writer knew it; what the report names a GPU after and finds its
  // NUMA node by.
  std::string gpu_uuid;
  int32_t gpu_index = -1;
  std::string gpu_model;
};

std::string_view TrackKindKey(TrackKind kind);
std::optional<TrackKind> TrackKindFromKey(std::string_view key);
std::string_view NetMetricKey(NetMetric metric);
std::optional<NetMetric> NetMetricFromKey(std::string_view key);
std::string_view NodeMetricKey(NodeMetric metric);
std::optional<NodeMetric> NodeMetricFromKey(std::string_view key);

// kGpuDevice: "GPU-5f2a1c3e (H200)" by UUID, else "GPU 3 (H200)" by index
// (model/gpu_tracks.h, the names the writers give the group); "" when the
// identity has neither.
// Inline: the CUPTI library's tests check it against the names it writes.
inline std::string GpuDisplayName(const TrackIdentity& id) {
  if (!id.gpu_uuid.empty()) return GpuTrackNameByUuid(id.gpu_uuid, id.gpu_model);
  if (id.gpu_index >= 0) return GpuTrackName(static_cast<uint32_t>(id.gpu_index), id.gpu_model);
  return {};
}

}  // namespace gpunoise::model
