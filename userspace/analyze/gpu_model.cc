#include "analyze/gpu_model.h"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "common/strings.h"

namespace gpunoise::analyze {

namespace {

// The thread a track belongs to (its own or an ancestor's), and its process.
struct TrackOwner {
  int32_t pid = 0, tid = 0;
};

TrackOwner OwnerOf(const TrackData& data, uint64_t uuid) {
  TrackOwner owner;
  for (int depth = 0; depth < 16 && uuid; ++depth) {
    auto it = data.tracks.find(uuid);
    if (it == data.tracks.end()) break;
    if (!owner.tid && it->second.tid) owner.tid = it->second.tid;
    if (!owner.pid && it->second.pid) owner.pid = it->second.pid;
    // The CUPTI library groups a process's streams inside the GPU's group
    // (a track of kind gpu_process, not a process descriptor).
    if (const model::TrackIdentity* id = data.Identity(uuid);
        !owner.pid && id && id->kind == model::TrackKind::kGpuProcess)
      owner.pid = id->pid;
    uuid = it->second.parent_uuid;
  }
  return owner;
}

// Work tracks are the streams, or the GPU's group itself for a producer
// that puts its work there without streams; not the GPU's other tracks
// (NVML's clock throttling slices, counters).
bool IsGpuWorkTrack(const TrackData& data, uint64_t uuid) {
  model::TrackKind kind = data.KindOf(uuid);
  return kind == model::TrackKind::kGpuStream || kind == model::TrackKind::kGpuDevice;
}

// The outermost GPU group above (or at) the work's track; a work track with
// none (another producer's lone stream track) is its own GPU.
uint64_t GpuOf(const TrackData& data, uint64_t uuid) {
  uint64_t gpu = uuid;
  for (int depth = 0; depth < 16 && uuid; ++depth) {
    auto it = data.tracks.find(uuid);
    if (it == data.tracks.end()) break;
    if (data.KindOf(uuid) == model::TrackKind::kGpuDevice) gpu = uuid;
    uuid = it->second.parent_uuid;
  }
  return gpu;
}

// What findings call the GPU: from its identity (UUID or index, model), so
// a renamed track is still "GPU-5f2a1c3e (H200)"; the track's name only
// for a group whose writer said neither (a lone stream of another
// producer, a process that never learned its GPU's index).
std::string GpuName(const TrackData& data, uint64_t gpu) {
  if (const model::TrackIdentity* id = data.Identity(gpu))
    if (std::string name = model::GpuDisplayName(*id); !name.empty()) return name;
  // A work track with an identity but no descriptor (a damaged trace) has
  // no name either.
  auto it = data.tracks.find(gpu);
  return it != data.tracks.end() ? it->second.name : fmt::format("GPU track {:#x}", gpu);
}

}  // namespace

GpuModel BuildGpuModel(const Timeline& t) {
  GpuModel m;
  const TrackData& data = t.tracks;
  std::unordered_map<uint64_t, bool> is_gpu;
  auto gpu_track = [&](uint64_t uuid) {
    auto it = is_gpu.find(uuid);
    if (it != is_gpu.end()) return it->second;
    bool gpu = IsGpuWorkTrack(data, uuid);
    is_gpu.emplace(uuid, gpu);
    if (gpu) m.gpu_tracks.insert(uuid);
    return gpu;
  };

  // Launch slices by flow id and by correlation id.
  std::unordered_map<uint64_t, uint32_t> launch_by_flow, launch_by_correlation;
  for (const TrackFlow& f : data.flows) {
    const TrackSlice& s = data.slices[f.slice];
    if (!f.terminating && !gpu_track(s.track) && OwnerOf(data, s.track).tid) launch_by_flow[f.flow_id] = f.slice;
  }
  for (uint32_t i = 0; i < data.slices.size(); ++i) {
    const TrackSlice& s = data.slices[i];
    if (s.correlation_id && !gpu_track(s.track) && OwnerOf(data, s.track).tid)
      launch_by_correlation[s.correlation_id] = i;
  }
  std::unordered_map<uint32_t, uint32_t> launch_of;  // GPU slice -> launch slice
  for (const TrackFlow& f : data.flows) {
    if (!gpu_track(data.slices[f.slice].track)) continue;
    auto it = launch_by_flow.find(f.flow_id);
    if (it != launch_by_flow.end()) launch_of[f.slice] = it->second;
  }

  for (uint32_t i = 0; i < data.slices.size(); ++i) {
    const TrackSlice& s = data.slices[i];
    if (!gpu_track(s.track)) continue;
    GpuWork w;
    w.start = s.start;
    w.end = s.end;
    w.track = s.track;
    w.name = s.name;
    w.pid = OwnerOf(data, s.track).pid;
    w.gpu = GpuOf(data, s.track);
    if (w.gpu && !m.gpu_names.count(w.gpu)) m.gpu_names[w.gpu] = GpuName(data, w.gpu);
    auto link = launch_of.find(i);
    const TrackSlice* launch = nullptr;
    if (link != launch_of.end()) launch = &data.slices[link->second];
    else if (s.correlation_id) {
      auto c = launch_by_correlation.find(s.correlation_id);
      if (c != launch_by_correlation.end()) launch = &data.slices[c->second];
    }
    if (launch) {
      TrackOwner owner = OwnerOf(data, launch->track);
      w.launch_tid = owner.tid;
      w.launch_ts = launch->start;
      if (!w.pid) w.pid = owner.pid ? owner.pid : t.TgidOf(owner.tid);
    }
    if (w.launch_tid) m.launch_tids.insert(w.launch_tid);
    m.work.push_back(w);
  }
  std::sort(m.work.begin(), m.work.end(), [](const GpuWork& a, const GpuWork& b) { return a.start < b.start; });
  return m;
}

}  // namespace gpunoise::analyze
