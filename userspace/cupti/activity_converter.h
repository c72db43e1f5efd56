// CUPTI activity records -> Perfetto TrackEvent packets (docs/gpu.md says
// why TrackEvent and not Perfetto's GpuRenderStageEvent).
//
// Needs CUPTI's headers for the record layouts but never calls CUPTI, so the
// tests feed it records of the real types without a GPU or a driver.
//
// Timeline it builds, per process:
//   GPU group "GPU-5f2a1c3e (H200)", keyed by the GPU's UUID (shared by every
//   process on the node, whatever ordinal it sees the GPU under, and by the
//   recorder's NVML counters)
//     "<process> <pid>"
//       "GPU-5f2a1c3e (H200) stream 7": kernels, copies, memsets, graph launches
//   thread tracks (real Linux tid, beside the kernel's scheduling data):
//     CUDA API calls, NVTX push/pop ranges and marks, synchronization waits;
//     a flow from each launch call to the GPU work it launched
//   process tracks: NVTX ranges that do not nest on one thread, CUPTI
//   overhead, synchronization whose thread is unknown, dropped records.
#pragma once

#include <cupti_activity.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cupti/kernel_names.h"
#include "cupti/lane_set.h"
#include "cupti/nvtx_payload.h"
#include "cupti/packet_builder.h"

namespace gpunoise::cupti {

struct ConverterOptions {
  int32_t pid = 0;
  std::string process_name;
  // The kernel's boot id: GPU groups are per node, and track ids of two
  // nodes never collide in a merged trace.
  std::string node_id;
  // CLOCK_BOOTTIME when capture started; with the pid it names this process
  // uniquely even if the pid is reused.
  uint64_t start_ts = 0;
  uint32_t sequence_id = 1;
  // CUDA device ordinal -> physical GPU index (CUDA_VISIBLE_DEVICES). Empty:
  // the ordinal is the physical index. -1 entries: unknown (UUID or MIG).
  std::vector<int> visible_devices;
  // The process's rank in its job (RANK, else SLURM_PROCID, from its own
  // environment) and on its node (LOCAL_RANK, else SLURM_LOCALID); -1:
  // not set. Written in the capture summary: the cross-node report ranks by it.
  int32_t rank = -1;
  int32_t local_rank = -1;
  // Name of a CUDA runtime (runtime = true) or driver API function from its
  // CUPTI callback id, e.g. "cudaLaunchKernel_v7000"; empty if unknown.
  std::function<std::string(bool runtime, uint32_t cbid)> api_name;
};

struct ConverterStats {
  uint64_t records = 0;
  uint64_t kernels = 0;
  uint64_t memcpys = 0;
  uint64_t memsets = 0;
  uint64_t graph_launches = 0;
  uint64_t synchronizations = 0;
  uint64_t api_calls = 0;
  uint64_t nvtx_ranges = 0;
  uint64_t nvtx_marks = 0;
  uint64_t overheads = 0;
  uint64_t devices = 0;
  // Records CUPTI could not store for lack of buffer space
  // (cuptiActivityGetNumDroppedRecords).
  uint64_t dropped_records = 0;
  uint64_t chunks_not_written = 0;
  // Records of kinds gpunoise does not convert, or without timestamps.
  uint64_t skipped_records = 0;
  // NVTX range ends without a start, and starts dropped at the open-range cap.
  uint64_t nvtx_unmatched = 0;
  // NCCL calls decoded from extended NVTX payloads (AddNcclCalls): joined
  // with their range; without a range (none started on the thread after
  // it); dropped (the hooks' queue or the converter's pending cap was full).
  uint64_t nccl_payloads = 0;
  uint64_t nccl_payloads_unmatched = 0;
  uint64_t nccl_payloads_dropped = 0;
};

class ActivityConverter {
 public:
  explicit ActivityConverter(ConverterOptions options);

  // One record, as cuptiActivityGetNextRecord returns it.
  void Convert(const CUpti_Activity* record);
  void AddDroppedRecords(uint64_t count) { stats_.dropped_records += count; }
  // Chunks the fragment writer dropped, unwritten (fragment_writer.h): the
  // summary says how many.
  void SetChunksNotWritten(uint64_t count) { stats_.chunks_not_written = count; }
  // NCCL calls decoded during their NVTX push (NvtxHooks), before CUPTI's
  // records of the same ranges arrive: each range started on a thread takes
  // the latest call on that thread at or before its start. `dropped`: calls
  // the hooks could not queue.
  void AddNcclCalls(std::vector<NcclCall> calls, uint64_t dropped);
  static constexpr size_t kMaxPendingNcclCalls = 1 << 16;

  // Everything converted since the last call as one self-contained trace
  // chunk: a clock snapshot, every track descriptor, then the events. A
  // final chunk also closes what is still open (NVTX ranges, synchronization
  // waits whose API call never arrived) and carries the capture summary.
  std::string TakeChunk(const ClockReadings& now, bool final);

  const ConverterStats& stats() const { return stats_; }
  // Whether the next chunk would carry anything new (events, or a changed
  // dropped-record count).
  bool has_events() const {
    return !body_.empty() || stats_.dropped_records != last_dropped_written_;
  }

  // Track uuids, public for tests.
  uint64_t ProcessTrackUuid() const;
  uint64_t ThreadTrackUuid(uint32_t tid) const;
  // Of the stream's track under the device's current GPU group.
  uint64_t StreamTrackUuid(uint32_t device, uint32_t context, uint32_t stream, size_t lane) const;
  uint64_t FlowId(uint32_t correlation_id) const;
  // "pid/correlation": what Perfetto's UI groups a launch and its GPU work by.
  std::string CorrelationName(uint32_t correlation_id) const;
  // The GPU end of a launch: the flow from the CPU call that launched it and
  // the correlation name; nothing for records with no correlation id.
  void LinkToLaunch(EventPacket& e, uint32_t correlation_id) const;

 private:
  struct Device {
    std::string model;  // "NVIDIA H200", empty until the device record arrives
    std::string uuid;  // "GPU-...", empty when the record has none
    std::string description;
  };
  struct ApiCall {
    uint32_t tid = 0;
    uint64_t start = 0, end = 0;
  };
  struct PendingSync {
    uint32_t correlation_id;
    uint32_t type;
    uint64_t start, end;
    uint32_t context, stream, event;
  };
  struct OpenRange {
    std::string name, domain;
    uint64_t start = 0;
    uint32_t tid = 0;
    // A scalar NVTX payload (MARKER_DATA record of the same id), e.g. a
    // communicator's hash on a collective's range; written as arg "payload".
    bool has_payload = false;
    uint64_t payload = 0;
    // The NCCL call's typed fields, from its extended payload (AddNcclCalls);
    // written as args nccl_comm, nccl_bytes, ... instead of "payload".
    std::optional<NcclCallParams> nccl;
  };

  uint64_t Key(std::string_view what) const;
  uint32_t PhysicalIndex(uint32_t ordinal) const;
  // The GPU group of an ordinal: by the device record's UUID once known, else
  // by the physical index (IndexGroupUuid), else this process's own.
  uint64_t GroupUuid(uint32_t ordinal) const;
  uint64_t IndexGroupUuid(uint32_t ordinal) const;
  std::string GpuName(uint32_t ordinal) const;
  std::string IndexGpuName(uint32_t ordinal) const;
  uint64_t StreamKey(uint64_t group, uint32_t device, uint32_t context, uint32_t stream,
                     size_t lane) const;
  std::string StreamName(std::string_view gpu, uint32_t stream, size_t lane) const;
  void Register(TrackSpec spec);
  uint64_t EnsureGpuGroup(uint32_t ordinal);
  // `ordinal`'s GPU group `uuid` (its UUID's, or its index's when made
  // before the device record), with the GPU's identity.
  void EnsureGroupTrack(uint64_t uuid, uint32_t ordinal, std::string name, std::string description);
  uint64_t EnsureGpuProcessGroup(uint32_t ordinal);
  uint64_t EnsureStreamTrack(uint32_t device, uint32_t context, uint32_t stream, uint64_t start,
                             uint64_t end);
  uint64_t EnsureThreadTrack(uint32_t tid);
  uint64_t EnsureProcessTrack();
  uint64_t EnsureProcessLane(std::string_view group, LaneSet& lanes, uint64_t start,
                             uint64_t end);
  void RenameDeviceTracks(uint32_t ordinal, uint64_t old_group);
  const std::string& ApiName(bool runtime, uint32_t cbid);

  void OnKernel(const CUpti_ActivityKernel10& k);
  void OnMemcpy(const CUpti_ActivityMemcpy6& m);
  void OnPeerMemcpy(const CUpti_ActivityMemcpyPtoP4& m);
  void OnMemset(const CUpti_ActivityMemset4& m);
  void OnGraph(const CUpti_ActivityGraphTrace2& g);
  void OnApi(const CUpti_ActivityAPI& a);
  void OnSync(const CUpti_ActivitySynchronization2& s);
  void OnMarker(const CUpti_ActivityMarker2& m);
  void OnMarkerData(const CUpti_ActivityMarkerData2& m);
  void OnOverhead(const CUpti_ActivityOverhead3& o);
  void OnDevice(const CUpti_ActivityDevice5& d);

  void EmitSync(const PendingSync& s, const ApiCall* api);
  void EmitRange(const OpenRange& range, uint64_t end, uint32_t end_tid, bool on_thread,
                 bool unterminated);
  void EndRange(uint32_t id, uint64_t ts, uint32_t tid);
  void RememberApiCall(uint32_t correlation_id, const ApiCall& call);
  void Close(uint64_t now);
  void WriteSummary(uint64_t now);

  ConverterOptions options_;
  uint64_t salt_;  // hashes node, pid and start: every uuid of this process
  ConverterStats stats_;
  std::string body_;
  PacketBuilder builder_;
  KernelNames kernel_names_;

  std::vector<TrackSpec> tracks_;  // in creation order, re-emitted in every chunk
  std::unordered_map<uint64_t, size_t> track_index_;
  std::map<uint32_t, Device> devices_;
  // Stream tracks of each device: (context, stream) -> lanes.
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, LaneSet> stream_lanes_;
  std::map<std::pair<bool, uint32_t>, std::string> api_names_;

  // Recent API calls by correlation id, so synchronization records (which
  // carry no thread) can be drawn inside the call that waited.
  static constexpr size_t kApiCallsKept = 1 << 16;
  std::unordered_map<uint32_t, ApiCall> api_calls_;
  std::deque<uint32_t> api_call_order_;
  std::unordered_map<uint32_t, PendingSync> pending_syncs_;

  static constexpr size_t kMaxOpenRanges = 1 << 16;
  std::unordered_map<uint32_t, OpenRange> open_ranges_;
  std::unordered_map<uint32_t, std::vector<uint32_t>> thread_range_stacks_;
  std::unordered_map<uint32_t, std::deque<NcclCall>> pending_nccl_;  // by tid, in time order
  size_t pending_nccl_count_ = 0;

  LaneSet nvtx_lanes_{32};
  LaneSet overhead_lanes_{8};
  LaneSet sync_lanes_{8};
  uint64_t last_dropped_written_ = 0;  // the counter appears with the first loss
  uint64_t last_ts_ = 0;
};

}  // namespace gpunoise::cupti
