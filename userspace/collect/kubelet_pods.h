// Pod names, namespaces and container names of a Kubernetes node without a
// kubelet or CRI client: the kubelet names each pod's log directory
// /var/log/pods/<namespace>_<pod name>_<pod uid>/ and links each container's
// log as /var/log/containers/<pod name>_<namespace>_<container name>-<container
// id>.log (what `crictl` and log shippers read too). Names of Kubernetes
// objects are DNS labels or subdomains, which hold no '_', so the split is
// unambiguous. Only directory entries' names are read; no link is followed.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "model/process_snapshot.h"

namespace gpunoise::collect {

struct KubeletPodNames {
  std::string name, pod_namespace;
};
struct KubeletContainerNames {
  std::string name;  // the container's name in the pod spec ("prep")
  std::string pod_name, pod_namespace;
};

class KubeletPods {
 public:
  // Reads `<log_root>/pods` and `<log_root>/containers`; a node without
  // them (not a Kubernetes node) gives an empty index.
  static KubeletPods Read(const std::string& log_root = "/var/log");
  // One directory entry each; false (and nothing kept) for names not laid
  // out as the kubelet lays them out.
  bool AddPodDirectory(std::string_view entry);
  bool AddContainerLog(std::string_view entry);
  // The same facts from another source (collect/crictl_pods.h), checked
  // alike; an entry the log tree already gave is kept as it is.
  bool AddPod(std::string_view pod_uid, std::string_view name, std::string_view pod_namespace);
  bool AddContainer(std::string_view container_id, std::string_view name, std::string_view pod_name,
                    std::string_view pod_namespace);

  const KubeletPodNames* Pod(std::string_view pod_uid) const;
  const KubeletContainerNames* Container(std::string_view container_id) const;
  bool empty() const { return pods_.empty() && containers_.empty(); }
  // Every pod by uid (collect/pod_fragment_dirs.h makes a directory each).
  const std::map<std::string, KubeletPodNames, std::less<>>& pods() const { return pods_; }

  // Fills pod name and namespace (where the process's own hostname did not
  // give them) and the container's name of each process in a pod.
  void Name(model::ProcessSnapshot* snapshot) const;

 private:
  std::map<std::string, KubeletPodNames, std::less<>> pods_;              // by pod uid
  std::map<std::string, KubeletContainerNames, std::less<>> containers_;  // by container id
};

}  // namespace gpunoise::collect
