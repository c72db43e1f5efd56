#include "analyze/gpu_model.h"

#include <algorithm>
#include <cctype>
#include <unordered_map>

#include "common/strings.h"

namespace gpunoise::analyze {

bool IsGpuTrackPath(std::string_view path) {
  // Any component of the path ("GPU 0 (H200) / stream 7") starting "GPU".
  size_t pos = 0;
  while (pos < path.size()) {
    size_t end = path.find(" / ", pos);
    std::string_view part = path.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    if (part.size() >= 3 && std::toupper(static_cast<unsigned char>(part[0])) == 'G' &&
        std::toupper(static_cast<unsigned char>(part[1])) == 'P' &&
        std::toupper(static_cast<unsigned char>(part[2])) == 'U' &&
        (part.size() == 3 || !std::isalpha(static_cast<unsigned char>(part[3]))))
      return true;
    if (end == std::string_view::npos) break;
    pos = end + 3;
  }
  return false;
}

namespace {

// The thread a track belongs to (its own or an ancestor's), and its process.
struct TrackOwner {
  int32_t pid = 0, tid = 0;
};

// "python 4242" -> 4242
int32_t TrailingPid(std::string_view name) {
  size_t space = name.rfind(' ');
  if (space == std::string_view::npos || space + 1 >= name.size()) return 0;
  int32_t pid = 0;
  for (char c : name.substr(space + 1)) {
    if (c < '0' || c > '9' || pid > 100000000) return 0;
    pid = pid * 10 + (c - '0');
  }
  return pid;
}

TrackOwner OwnerOf(const TrackData& data, uint64_t uuid) {
  TrackOwner owner;
  for (int depth = 0; depth < 16 && uuid; ++depth) {
    auto it = data.tracks.find(uuid);
    if (it == data.tracks.end()) break;
    if (!owner.tid && it->second.tid) owner.tid = it->second.tid;
    if (!owner.pid && it->second.pid) owner.pid = it->second.pid;
    // The CUPTI library groups a process's streams under "<name> <pid>"
    // inside the GPU's group (a named track, not a process descriptor).
    if (!owner.pid && it->second.parent_uuid) {
      auto parent = data.tracks.find(it->second.parent_uuid);
      if (parent != data.tracks.end() && IsGpuTrackPath(parent->second.name) && !IsGpuTrackPath(it->second.name))
        owner.pid = TrailingPid(it->second.name);
    }
    uuid = it->second.parent_uuid;
  }
  return owner;
}

// Work tracks are the streams ("GPU 3 (H200) stream 7 (overlap 1)"), or a
// GPU-named track of a producer that has no streams; not the GPU's other
// tracks (NVML's "Clock throttling" slices, counters).
bool IsGpuWorkTrack(const TrackData& data, uint64_t uuid) {
  auto it = data.tracks.find(uuid);
  if (it == data.tracks.end() || it->second.is_counter) return false;
  if (!IsGpuTrackPath(data.TrackPath(uuid))) return false;
  std::string own = Lower(it->second.name);
  if (own.find("throttl") != std::string::npos) return false;
  return own.find("stream") != std::string::npos || IsGpuTrackPath(it->second.name);
}

// The outermost ancestor (or the track itself) whose own name starts "GPU".
uint64_t GpuOf(const TrackData& data, uint64_t uuid) {
  uint64_t gpu = 0;
  for (int depth = 0; depth < 16 && uuid; ++depth) {
    auto it = data.tracks.find(uuid);
    if (it == data.tracks.end()) break;
    if (IsGpuTrackPath(it->second.name)) gpu = uuid;
    uuid = it->second.parent_uuid;
  }
  return gpu;
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
    if (w.gpu && !m.gpu_names.count(w.gpu)) m.gpu_names[w.gpu] = data.tracks.at(w.gpu).name;
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
