// `record --cgroup pod-uid:UID` (or container:ID, container:NAME): which tasks a pod or
// container is, resolved at the start of the recording from the processes'
// cgroups (collect/cgroup_identity.h). Where the cgroup-v2 hierarchy holds
// the pod (cgroup-v2 hosts), the kernel filters by the pod's v2 directory;
// where it does not (v1-only hosts, and hybrid hosts whose kubelet uses v1,
// since the kernel's cgroup-id helper sees only v2), by the pod's processes
// and their children.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "model/process_snapshot.h"

namespace gpunoise::collect {

// "pod-uid:...", "pod:NAME" or "pod:NAMESPACE/NAME" (names from the kubelet's
// log directories, collect/kubelet_pods.h), "container:ID" (12 hex digits or
// more) or "container:NAME", "container-name:NAME" (model/container_selector.h).
bool IsPodSelector(std::string_view spec);

struct PodSelection {
  std::vector<int> pids;  // the pod's processes now
  // The pod's (or container's) directory in the v2 hierarchy, relative to its
  // mount ("/kubepods.slice/.../kubepods-burstable-pod<uid>.slice"); empty
  // when v2 does not hold it.
  std::string v2_path;
  size_t containers = 0;  // distinct containers selected (a name may be several pods')
};

Result<PodSelection> SelectPod(const model::ProcessSnapshot& processes, std::string_view spec);

}  // namespace gpunoise::collect
