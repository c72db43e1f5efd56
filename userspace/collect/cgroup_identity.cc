#include "collect/cgroup_identity.h"

#include "common/strings.h"

namespace gpunoise::collect {
namespace {

bool IsHex(std::string_view s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return !s.empty();
}

// Container ids are 64 hex digits in every runtime here.
bool IsContainerId(std::string_view s) { return s.size() == 64 && IsHex(s); }

// A pod UID as kubelet writes it into cgroup names: "pod" + the UID, with
// the systemd driver's dashes turned into underscores.
bool ParsePodUid(std::string_view s, std::string* uid) {
  if (!StartsWith(s, "pod")) return false;
  std::string u(s.substr(3));
  for (char& c : u)
    if (c == '_') c = '-';
  if (u.size() != 36) return false;
  for (size_t i = 0; i < u.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? u[i] != '-' : !IsHex(std::string_view(&u[i], 1))) return false;
  }
  *uid = std::move(u);
  return true;
}

std::string_view StripSuffix(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix
             ? s.substr(0, s.size() - suffix.size())
             : s;
}

struct ScopePrefix {
  std::string_view prefix;
  model::ContainerRuntime runtime;
};
// systemd scopes the runtimes make, "PREFIX<id>.scope". The conmon scopes
// of CRI-O and podman hold the monitor, not the container: not matched.
constexpr ScopePrefix kScopes[] = {
    {"cri-containerd-", model::ContainerRuntime::kContainerd},
    {"crio-", model::ContainerRuntime::kCrio},
    {"docker-", model::ContainerRuntime::kDocker},
    {"libpod-", model::ContainerRuntime::kPodman},
};

}  // namespace

std::vector<CgroupLine> ParseProcCgroup(std::string_view text) {
  std::vector<CgroupLine> out;
  for (std::string_view line : Split(text, '\n')) {
    if (line.empty()) continue;
    auto a = line.find(':');
    if (a == std::string_view::npos) continue;
    auto b = line.find(':', a + 1);
    if (b == std::string_view::npos) continue;
    auto id = ParseInt64(line.substr(0, a));
    if (!id) continue;
    CgroupLine l;
    l.hierarchy = static_cast<int>(*id);
    l.controllers = std::string(line.substr(a + 1, b - a - 1));
    l.path = std::string(line.substr(b + 1));  // a path may itself hold ':'
    out.push_back(std::move(l));
  }
  return out;
}

model::ContainerIdentity IdentifyCgroupPath(std::string_view path) {
  model::ContainerIdentity id;
  std::vector<std::string_view> parts;
  for (std::string_view p : Split(path, '/'))
    if (!p.empty()) parts.push_back(p);
  bool in_kubepods = false;
  bool saw_docker_dir = false, saw_libpod_dir = false;
  for (size_t i = 0; i < parts.size(); ++i) {
    std::string_view p = parts[i];
    std::string_view unit = StripSuffix(StripSuffix(p, ".slice"), ".scope");
    if (p == "kubepods" || p == "kubepods.slice") {
      in_kubepods = true;
      // A pod directly under kubepods is Guaranteed (no QoS level of its own).
      id.qos = model::PodQos::kGuaranteed;
      continue;
    }
    if (in_kubepods) {
      if (p == "burstable" || unit == "kubepods-burstable") id.qos = model::PodQos::kBurstable;
      else if (p == "besteffort" || unit == "kubepods-besteffort") id.qos = model::PodQos::kBestEffort;
      // systemd driver: "kubepods-burstable-pod<uid>.slice".
      std::string_view pod = unit;
      auto dash = pod.rfind('-');
      if (dash != std::string_view::npos && StartsWith(pod.substr(dash + 1), "pod")) pod = pod.substr(dash + 1);
      std::string uid;
      if (ParsePodUid(pod, &uid)) {
        id.pod_uid = uid;
        continue;
      }
    }
    if (p == "docker") saw_docker_dir = true;
    if (p == "libpod_parent") saw_libpod_dir = true;
    bool matched = false;
    for (const ScopePrefix& s : kScopes) {
      if (!StartsWith(unit, s.prefix)) continue;
      std::string_view rest = unit.substr(s.prefix.size());
      if (IsContainerId(rest)) {
        id.runtime = s.runtime;
        id.container_id = std::string(rest);
        matched = true;
      }
      break;
    }
    if (matched) continue;
    // cgroupfs drivers: the bare id as a directory name.
    if (IsContainerId(p)) {
      id.container_id = std::string(p);
      id.runtime = saw_docker_dir ? model::ContainerRuntime::kDocker
                   : saw_libpod_dir ? model::ContainerRuntime::kPodman
                                    : model::ContainerRuntime::kUnknown;
      continue;
    }
    // slurmstepd: ".../job_<id>/step_<n>/..." (v1 "/slurm/uid_U/job_J/...",
    // v2 "/system.slice/slurmstepd.scope/job_J/...").
    if (StartsWith(p, "job_") && p.size() > 4 && ParseUint64(p.substr(4))) id.slurm_job_id = std::string(p.substr(4));
  }
  if (!in_kubepods) id.qos = model::PodQos::kNone;
  if (!id.empty()) id.cgroup = std::string(path);
  return id;
}

model::ContainerIdentity IdentifyContainer(std::span<const CgroupLine> lines) {
  for (const CgroupLine& l : lines)
    if (l.hierarchy == 0 && l.controllers.empty()) {
      model::ContainerIdentity id = IdentifyCgroupPath(l.path);
      if (!id.empty()) return id;
    }
  for (const CgroupLine& l : lines) {
    if (l.hierarchy == 0) continue;
    model::ContainerIdentity id = IdentifyCgroupPath(l.path);
    if (!id.empty()) return id;
  }
  return {};
}

std::vector<std::string> CgroupPaths(std::span<const CgroupLine> lines) {
  std::vector<std::string> out;
  for (const CgroupLine& l : lines)
    out.push_back(l.hierarchy == 0 && l.controllers.empty() ? l.path : l.controllers + ":" + l.path);
  return out;
}

}  // namespace gpunoise::collect
