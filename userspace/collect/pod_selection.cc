#include "collect/pod_selection.h"

#include <optional>
#include <set>

#include "collect/cgroup_identity.h"
#include "common/strings.h"
#include "model/container_selector.h"

namespace gpunoise::collect {
namespace {

std::string Underscored(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c == '-') c = '_';
  return out;
}

// The prefix of `path` up to the component that names the pod (either
// driver's spelling) or the container; empty if none does.
std::string PrefixThrough(std::string_view path, std::string_view pod_uid, std::string_view container) {
  std::string prefix;
  for (std::string_view part : Split(path, '/')) {
    if (part.empty()) continue;
    prefix += "/" + std::string(part);
    bool pod = !pod_uid.empty() && (part.find("pod" + std::string(pod_uid)) != std::string_view::npos ||
                                    part.find("pod" + Underscored(pod_uid)) != std::string_view::npos);
    bool ctr = !container.empty() && part.find(container) != std::string_view::npos;
    if (pod || ctr) return prefix;
  }
  return {};
}

}  // namespace

bool IsPodSelector(std::string_view spec) {
  return StartsWith(spec, "pod-uid:") || StartsWith(spec, "pod:") || model::IsContainerSelector(spec);
}

Result<PodSelection> SelectPod(const model::ProcessSnapshot& processes, std::string_view spec) {
  bool by_name = StartsWith(spec, "pod:");
  bool by_pod = by_name || StartsWith(spec, "pod-uid:");
  std::string_view value = spec.substr(spec.find(':') + 1);
  if (value.empty()) return MakeError("--cgroup {}: needs a value", spec);
  // A name is resolved to its pod's UID: the cgroups know only that.
  std::string uid;
  if (by_name) {
    for (const model::ProcessInfo& p : processes.processes) {
      const model::ContainerIdentity& c = p.identity.container;
      if (c.pod_uid.empty() || c.pod_name.empty()) continue;
      if (c.pod_name != value && c.pod_namespace + "/" + c.pod_name != value) continue;
      if (!uid.empty() && uid != c.pod_uid)
        return MakeError("--cgroup {}: two pods have that name (give NAMESPACE/NAME or pod-uid:)", spec);
      uid = c.pod_uid;
    }
    if (uid.empty())
      return MakeError("--cgroup {}: no pod of that name on this node (names come from the kubelet's "
                       "/var/log/pods; see --kubelet-log-dir)", spec);
    value = uid;
  }
  std::optional<model::ContainerSelector> selector;
  if (!by_pod) {
    std::string why;
    selector = model::ParseContainerSelector(spec, &why);
    if (!selector) return MakeError("--cgroup {}: {}", spec, why);
  }
  PodSelection sel;
  std::string first_v2;
  std::set<std::string> containers;
  for (const model::ProcessInfo& p : processes.processes) {
    const model::ContainerIdentity& c = p.identity.container;
    bool match = by_pod ? c.pod_uid == value : selector->Matches(c);
    if (!match) continue;
    sel.pids.push_back(p.pid);
    if (first_v2.empty())
      for (const std::string& line : p.identity.cgroups)
        if (line.find(":/") == std::string::npos) first_v2 = line;  // the v2 line
    containers.insert(c.container_id);
  }
  if (sel.pids.empty() && selector && !selector->by_id())
    return MakeError("--cgroup {}: no process of this node is in a {} (names come from the kubelet's "
                     "/var/log/containers, see --kubelet-log-dir; an id is at least 12 digits)",
                     spec, selector->Describe());
  if (sel.pids.empty())
    return MakeError("--cgroup {}: no process of this node is in that {}", spec, by_pod ? "pod" : "container");
  sel.containers = containers.size();
  // Only a v2 path that itself names the pod (or the one container) holds
  // all of it; a name several pods' containers share (every pod of a Job
  // names its container alike) is their processes.
  if (by_pod || containers.size() == 1)
    sel.v2_path = PrefixThrough(first_v2, by_pod ? value : std::string_view(),
                                by_pod ? std::string_view() : *containers.begin());
  return sel;
}

}  // namespace gpunoise::collect
