// The converter's tracks: the process and thread tracks the API calls sit
// on, the per-GPU groups and their stream lanes, uuids and flow ids.
#include "cupti/activity_converter.h"

#include <algorithm>
#include <cstring>

#include "cupti/activity_names.h"
#include "model/gpu_capture.h"
#include "model/gpu_tracks.h"
#include "model/track_identity.h"

namespace gpunoise::cupti {
namespace {

// A device whose physical index the capture never learned.
constexpr uint32_t kUnknownIndex = UINT32_MAX;

}  // namespace

uint64_t ActivityConverter::Key(std::string_view what) const {
  uint64_t h = model::HashFnv1a64(what, salt_);
  return h ? h : 1;
}

uint64_t ActivityConverter::ProcessTrackUuid() const { return Key("process"); }

uint64_t ActivityConverter::ThreadTrackUuid(uint32_t tid) const {
  return Key("thread " + std::to_string(tid));
}

uint64_t ActivityConverter::StreamKey(uint64_t group, uint32_t device, uint32_t context,
                                      uint32_t stream, size_t lane) const {
  return Key("stream " + std::to_string(group) + " " + std::to_string(device) + " " +
             std::to_string(context) + " " + std::to_string(stream) + " " + std::to_string(lane));
}

uint64_t ActivityConverter::StreamTrackUuid(uint32_t device, uint32_t context, uint32_t stream,
                                            size_t lane) const {
  return StreamKey(GroupUuid(device), device, context, stream, lane);
}

std::string ActivityConverter::StreamName(std::string_view gpu, uint32_t stream,
                                          size_t lane) const {
  std::string name = std::string(gpu) + " stream " + std::to_string(stream);
  if (lane > 0) name += " (overlap " + std::to_string(lane) + ")";
  return name;
}

uint64_t ActivityConverter::FlowId(uint32_t correlation_id) const {
  return Key("flow " + std::to_string(correlation_id));
}

std::string ActivityConverter::CorrelationName(uint32_t correlation_id) const {
  return std::to_string(options_.pid) + "/" + std::to_string(correlation_id);
}

void ActivityConverter::LinkToLaunch(EventPacket& e, uint32_t correlation_id) const {
  if (!correlation_id) return;
  e.TerminatingFlow(FlowId(correlation_id));
  e.Correlation(CorrelationName(correlation_id));
}

uint32_t ActivityConverter::PhysicalIndex(uint32_t ordinal) const {
  if (options_.visible_devices.empty()) return ordinal;
  if (ordinal < options_.visible_devices.size() && options_.visible_devices[ordinal] >= 0)
    return static_cast<uint32_t>(options_.visible_devices[ordinal]);
  return kUnknownIndex;
}

uint64_t ActivityConverter::IndexGroupUuid(uint32_t ordinal) const {
  uint32_t physical = PhysicalIndex(ordinal);
  // Without a physical index (CUDA_VISIBLE_DEVICES by UUID) the group is this
  // process's own: it cannot be matched with other processes or NVML.
  return physical == kUnknownIndex ? Key("gpu ordinal " + std::to_string(ordinal))
                                   : model::GpuGroupTrackUuid(options_.node_id, physical);
}

uint64_t ActivityConverter::GroupUuid(uint32_t ordinal) const {
  auto it = devices_.find(ordinal);
  if (it == devices_.end() || it->second.uuid.empty()) return IndexGroupUuid(ordinal);
  return model::GpuGroupTrackUuidByUuid(options_.node_id, it->second.uuid);
}

std::string ActivityConverter::IndexGpuName(uint32_t ordinal) const {
  auto it = devices_.find(ordinal);
  std::string_view model = it == devices_.end() ? std::string_view() : it->second.model;
  uint32_t physical = PhysicalIndex(ordinal);
  return model::GpuTrackName(physical == kUnknownIndex ? ordinal : physical, model);
}

std::string ActivityConverter::GpuName(uint32_t ordinal) const {
  auto it = devices_.find(ordinal);
  if (it == devices_.end() || it->second.uuid.empty()) return IndexGpuName(ordinal);
  return model::GpuTrackNameByUuid(it->second.uuid, it->second.model);
}

void ActivityConverter::Register(TrackSpec spec) {
  auto it = track_index_.find(spec.uuid);
  if (it != track_index_.end()) {
    tracks_[it->second] = std::move(spec);
    return;
  }
  track_index_.emplace(spec.uuid, tracks_.size());
  tracks_.push_back(std::move(spec));
}

uint64_t ActivityConverter::EnsureProcessTrack() {
  uint64_t uuid = ProcessTrackUuid();
  if (!track_index_.count(uuid)) {
    TrackSpec t;
    t.uuid = uuid;
    t.process_pid = options_.pid;
    t.process_name = options_.process_name;
    Register(std::move(t));
  }
  return uuid;
}

uint64_t ActivityConverter::EnsureThreadTrack(uint32_t tid) {
  uint64_t uuid = ThreadTrackUuid(tid);
  if (!track_index_.count(uuid)) {
    TrackSpec t;
    t.uuid = uuid;
    t.thread_pid = options_.pid;
    t.thread_tid = static_cast<int32_t>(tid);
    Register(std::move(t));
  }
  return uuid;
}

void ActivityConverter::EnsureGroupTrack(uint64_t uuid, uint32_t ordinal, std::string name,
                                         std::string description) {
  auto it = track_index_.find(uuid);
  if (it != track_index_.end() && tracks_[it->second].name == name &&
      tracks_[it->second].description == description)
    return;
  TrackSpec t;
  t.uuid = uuid;
  t.name = std::move(name);
  t.description = std::move(description);
  t.identity_kind = model::kTrackKindGpuDevice;
  // What the report names the GPU after and finds its NUMA node by: the
  // UUID of the UUID's group, the physical index of the index's group.
  auto dev = devices_.find(ordinal);
  if (dev != devices_.end()) t.identity_gpu_model = std::string(model::ShortGpuModel(dev->second.model));
  if (dev != devices_.end() && !dev->second.uuid.empty() && uuid == GroupUuid(ordinal))
    t.identity_gpu_uuid = dev->second.uuid;
  else if (uint32_t physical = PhysicalIndex(ordinal); physical != kUnknownIndex && physical <= INT32_MAX)
    t.identity_gpu_index = static_cast<int32_t>(physical);
  Register(std::move(t));
}

uint64_t ActivityConverter::EnsureGpuGroup(uint32_t ordinal) {
  uint64_t uuid = GroupUuid(ordinal);
  auto dev = devices_.find(ordinal);
  EnsureGroupTrack(uuid, ordinal, GpuName(ordinal), dev == devices_.end() ? "" : dev->second.description);
  return uuid;
}

// One per GPU group the process's work on the ordinal went to (two when the
// device record came after the first work: see RenameDeviceTracks).
uint64_t ActivityConverter::EnsureGpuProcessGroup(uint32_t ordinal) {
  uint64_t group = GroupUuid(ordinal);
  uint64_t uuid = Key("gpu process " + std::to_string(ordinal) + " " + std::to_string(group));
  if (!track_index_.count(uuid)) {
    TrackSpec t;
    t.uuid = uuid;
    t.parent_uuid = EnsureGpuGroup(ordinal);
    t.name = (options_.process_name.empty() ? std::string("process") : options_.process_name) +
             " " + std::to_string(options_.pid);
    // fragment_pid_translator.cc finds the group by this description.
    t.description = "GPU work of process " + std::to_string(options_.pid);
    // The pid is the process track's, which the recorder translates to the
    // host's for a process in a container (record/gpu/fragment_pid_translator.h).
    t.identity_kind = model::kTrackKindGpuProcess;
    t.identity_process_track = EnsureProcessTrack();
    Register(std::move(t));
  }
  return uuid;
}

uint64_t ActivityConverter::EnsureStreamTrack(uint32_t device, uint32_t context,
                                              uint32_t stream, uint64_t start, uint64_t end) {
  LaneSet& lanes = stream_lanes_.try_emplace({device, context, stream}, 8).first->second;
  size_t lane = lanes.Place(start, end);
  uint64_t uuid = StreamTrackUuid(device, context, stream, lane);
  if (!track_index_.count(uuid)) {
    TrackSpec t;
    t.uuid = uuid;
    t.parent_uuid = EnsureGpuProcessGroup(device);
    t.name = StreamName(GpuName(device), stream, lane);
    // The ordinal is this process's view only: a label, never the key.
    t.description = "CUDA stream " + std::to_string(stream) + " of context " +
                    std::to_string(context) + " on CUDA device " + std::to_string(device) +
                    " in process " + std::to_string(options_.pid);
    t.identity_kind = model::kTrackKindGpuStream;
    Register(std::move(t));
  }
  return uuid;
}

uint64_t ActivityConverter::EnsureProcessLane(std::string_view group, LaneSet& lanes,
                                              uint64_t start, uint64_t end) {
  size_t lane = lanes.Place(start, end);
  std::string name(group);
  if (lane > 0) name += " " + std::to_string(lane + 1);
  uint64_t uuid = Key("lane " + name);
  if (!track_index_.count(uuid)) {
    TrackSpec t;
    t.uuid = uuid;
    t.parent_uuid = EnsureProcessTrack();
    t.name = std::move(name);
    Register(std::move(t));
  }
  return uuid;
}

// The device record names the GPU. Tracks made before it arrived stay under
// the group they were made in (the trace processor keeps a track under its
// first parent), so they keep the index's name with the model filled in; the
// device's later work goes to the UUID's group.
void ActivityConverter::RenameDeviceTracks(uint32_t ordinal, uint64_t old_group) {
  bool used = false;
  std::string name = old_group == GroupUuid(ordinal) ? GpuName(ordinal) : IndexGpuName(ordinal);
  for (auto& [key, lanes] : stream_lanes_) {
    auto [device, context, stream] = key;
    if (device != ordinal) continue;
    for (size_t lane = 0; lane < lanes.lanes(); ++lane) {
      auto it = track_index_.find(StreamKey(old_group, device, context, stream, lane));
      if (it == track_index_.end()) continue;
      used = true;
      tracks_[it->second].name = StreamName(name, stream, lane);
    }
  }
  if (!used) return;
  auto dev = devices_.find(ordinal);
  EnsureGroupTrack(old_group, ordinal, name, dev == devices_.end() ? "" : dev->second.description);
}

}  // namespace gpunoise::cupti
