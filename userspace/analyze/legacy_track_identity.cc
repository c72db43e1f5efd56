#include "analyze/legacy_track_identity.h"

#include <array>
#include <cctype>
#include <charconv>
#include <string_view>
#include <utility>

namespace gpunoise::analyze {
namespace {

using M = model::NetMetric;

// The names gpunoise gave these tracks before they had identities. Frozen:
// new names go into the identity, not here.
constexpr std::string_view kOldNetMetadataTrack = "gpunoise network";
constexpr std::string_view kOldNodeMetadataTrack = "gpunoise node";
constexpr std::string_view kOldNetRoot = "Network / ";

constexpr std::array<std::pair<std::string_view, M>, 10> kOldMetrics{{
    {"rx packets/s", M::kRxPackets},
    {"rx Gbit/s", M::kRxGbit},
    {"tx packets/s", M::kTxPackets},
    {"tx Gbit/s", M::kTxGbit},
    {"tx errors/s", M::kTxErrors},
    {"queued packets/s", M::kQueuedPackets},
    {"napi polls/s", M::kNapiPolls},
    {"napi full-budget polls/s", M::kNapiFullBudget},
    {"napi packets/s", M::kNapiPackets},
    {"tx timeouts", M::kTxTimeouts},
}};

// "<device> <metric>": "eth0 rx packets/s", "eth0 drops/s NO_SOCKET",
// "eth0 cpu3 napi packets/s", "eth0 nic rx_missed/s".
model::TrackIdentity OldNetCounter(std::string_view name) {
  model::TrackIdentity id;
  id.kind = model::TrackKind::kNetCounter;
  size_t space = name.find(' ');
  id.device = std::string(name.substr(0, space));
  std::string_view metric = name.substr(space + 1);
  for (const auto& [old, m] : kOldMetrics)
    if (metric == old) id.metric = m;
  if (id.metric != M::kUnknown) return id;
  if (metric.starts_with("drops/s ")) {
    id.metric = M::kDrops;
    id.detail = std::string(metric.substr(8));
  } else if (metric.starts_with("nic ") && metric.ends_with("/s") && metric.size() > 6) {
    // NIC-driver events and ethtool counters: the report reads both alike.
    id.metric = M::kNicCounter;
    id.detail = std::string(metric.substr(4, metric.size() - 6));
  } else if (metric.starts_with("cpu")) {
    std::string_view rest = metric.substr(3);
    int32_t cpu = -1;
    auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), cpu);
    std::string_view tail = rest.substr(static_cast<size_t>(p - rest.data()));
    if (ec == std::errc() && cpu >= 0) {
      if (tail == " napi packets/s") id.metric = M::kCpuNapiPackets;
      if (tail == " rx packets/s") id.metric = M::kCpuRxPackets;
      if (id.metric != M::kUnknown) id.cpu = cpu;
    }
  }
  return id;
}

constexpr std::string_view kOldNodeRoot = "Node / ";

// "<prefix><N><suffix>" -> N.
bool NumberBetween(std::string_view name, std::string_view prefix, std::string_view suffix, int32_t* n) {
  if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix) || !name.ends_with(suffix))
    return false;
  std::string_view digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), *n);
  return ec == std::errc() && p == digits.data() + digits.size() && *n >= 0;
}

// The node collectors' counters under "Node": "cpu3 steal", "cpu3 idle
// state", "cpu3 frequency", "cgroup /kubepods/x nr_throttled" (and
// "throttled ns", "nr_periods").
std::optional<model::TrackIdentity> OldNodeCounter(std::string_view name) {
  using N = model::NodeMetric;
  model::TrackIdentity id;
  id.kind = model::TrackKind::kNodeCounter;
  constexpr std::array<std::pair<std::string_view, N>, 3> kPerCpu{{
      {" steal", N::kCpuSteal}, {" idle state", N::kCpuIdleState}, {" frequency", N::kCpuFrequency}}};
  constexpr std::array<std::pair<std::string_view, N>, 3> kPerCgroup{{
      {" nr_throttled", N::kCgroupNrThrottled}, {" throttled ns", N::kCgroupThrottledNs},
      {" nr_periods", N::kCgroupNrPeriods}}};
  for (const auto& [suffix, metric] : kPerCpu)
    if (int32_t cpu = -1; NumberBetween(name, "cpu", suffix, &cpu)) {
      id.node_metric = metric;
      id.cpu = cpu;
      return id;
    }
  constexpr std::string_view kCgroupPrefix = "cgroup ";
  if (!name.starts_with(kCgroupPrefix)) return std::nullopt;
  std::string_view tail = name.substr(kCgroupPrefix.size());
  for (const auto& [suffix, metric] : kPerCgroup)
    if (tail.size() > suffix.size() && tail.ends_with(suffix)) {
      id.node_metric = metric;
      id.detail = std::string(tail.substr(0, tail.size() - suffix.size()));
      return id;
    }
  return std::nullopt;
}

bool Contains(std::string_view haystack, std::string_view needle) {
  std::string lower(haystack);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.find(needle) != std::string::npos;
}

// A counter named like one of the kernel's trouble counters (other
// producers: "softlockup_count", "node0 rcu stall count"): its file.
std::optional<model::TrackIdentity> OldKernelHealthCounter(std::string_view name) {
  constexpr std::array<std::pair<std::string_view, std::string_view>, 8> kOld{{
      {"softlockup", "softlockup_count"}, {"hardlockup", "hardlockup_count"},
      {"rcu_stall", "rcu_stall_count"},   {"rcu stall", "rcu_stall_count"},
      {"warn_count", "warn_count"},       {"oops_count", "oops_count"},
      {"warn count", "warn_count"},       {"oops count", "oops_count"}}};
  for (const auto& [old, file] : kOld)
    if (Contains(name, old)) {
      model::TrackIdentity id;
      id.kind = model::TrackKind::kKernelHealthCounter;
      id.detail = std::string(file);
      return id;
    }
  return std::nullopt;
}

// "GPU 0 (H200) / stream 7": any component of the path starting "GPU" (and
// not "GPUx").
bool IsOldGpuPath(std::string_view path) {
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


// The GPU a group's name says (model/gpu_tracks.h): "GPU-5f2a1c3e (H200)"
// (the UUID's first 12 characters) or "GPU 3 (H200)" (NVML's index).
void OldGpuName(std::string_view name, model::TrackIdentity* id) {
  std::string_view first = name.substr(0, name.find(' '));
  std::string_view rest = name.substr(first.size());
  if (first.starts_with("GPU-") && first.size() >= 12) {
    id->gpu_uuid = std::string(first);
  } else if (first == "GPU" && rest.size() > 1) {
    rest.remove_prefix(1);
    std::string_view digits = rest.substr(0, rest.find(' '));
    int32_t index = -1;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (ec != std::errc() || p != digits.data() + digits.size() || index < 0) return;
    id->gpu_index = index;
    rest.remove_prefix(digits.size());
  } else {
    return;
  }
  if (rest.starts_with(" (") && rest.ends_with(")")) id->gpu_model = std::string(rest.substr(2, rest.size() - 3));
}

// GPU tracks as the CUPTI library (and docs/report.md for other producers)
// named them: work on a stream track ("GPU 3 (H200) stream 7 (overlap 1)")
// or on a GPU-named track of a producer without streams, never on the
// GPU's throttling slices; the GPU's group named "GPU ..."; a process's
// group "<name> <pid>" inside it.
std::optional<model::TrackIdentity> OldGpuTrack(const TrackData& tracks, const model::TrackInfo& track) {
  model::TrackIdentity id;
  const bool own_gpu = IsOldGpuPath(track.name);
  const bool work_capable = !track.is_counter && !Contains(track.name, "throttl");
  if (work_capable && Contains(track.name, "stream") && IsOldGpuPath(tracks.TrackPath(track.uuid))) {
    id.kind = model::TrackKind::kGpuStream;
    return id;
  }
  // A GPU-named track is the GPU's group, and holds work when a producer
  // put it there without streams.
  if (work_capable && own_gpu) {
    id.kind = model::TrackKind::kGpuDevice;
    OldGpuName(track.name, &id);
    return id;
  }
  auto parent = tracks.tracks.find(track.parent_uuid);
  if (track.parent_uuid && parent != tracks.tracks.end() && IsOldGpuPath(parent->second.name)) {
    if (int32_t pid = TrailingPid(track.name); pid > 0) {
      id.kind = model::TrackKind::kGpuProcess;
      id.pid = pid;
      return id;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<model::TrackIdentity> LegacyTrackIdentity(const TrackData& tracks, uint64_t uuid) {
  auto it = tracks.tracks.find(uuid);
  if (it == tracks.tracks.end()) return std::nullopt;
  const model::TrackInfo& track = it->second;
  model::TrackIdentity id;
  if (track.name == kOldNetMetadataTrack) {
    id.kind = model::TrackKind::kNetMetadata;
    return id;
  }
  if (track.name == kOldNodeMetadataTrack) {
    id.kind = model::TrackKind::kNodeMetadata;
    return id;
  }
  if (track.is_counter && track.name.find(' ') != std::string::npos &&
      tracks.TrackPath(uuid).starts_with(kOldNetRoot))
    return OldNetCounter(track.name);
  if (track.is_counter && tracks.TrackPath(uuid).starts_with(kOldNodeRoot))
    if (auto node = OldNodeCounter(track.name)) return node;
  if (track.is_counter)
    if (auto health = OldKernelHealthCounter(track.name)) return health;
  return OldGpuTrack(tracks, track);
}

}  // namespace gpunoise::analyze
