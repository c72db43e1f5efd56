#include "collect/kubelet_pods.h"

#include <dirent.h>

#include <memory>

namespace gpunoise::collect {
namespace {

// A DNS label or subdomain: what the API server allows in names and
// namespaces (lower-case letters, digits, '-' and '.'), at most 253 long.
bool IsObjectName(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) return false;
  return true;
}

bool IsPodUid(std::string_view s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool IsContainerId(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// Entry names of a directory, without following or opening any of them.
template <typename Fn>
void ForEachEntry(const std::string& dir, Fn fn) {
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  if (!d) return;
  // A node has a few hundred pods at most; the bound keeps a hostile or
  // broken tree from stalling the scan.
  for (int n = 0; n < 100000; ++n) {
    const dirent* e = ::readdir(d.get());
    if (!e) break;
    std::string_view name = e->d_name;
    if (name != "." && name != "..") fn(name);
  }
}

}  // namespace

bool KubeletPods::AddPodDirectory(std::string_view entry) {
  size_t first = entry.find('_'), last = entry.rfind('_');
  if (first == std::string_view::npos || first == last) return false;
  std::string_view ns = entry.substr(0, first), name = entry.substr(first + 1, last - first - 1),
                   uid = entry.substr(last + 1);
  if (!IsObjectName(ns) || !IsObjectName(name) || !IsPodUid(uid)) return false;
  pods_[std::string(uid)] = {std::string(name), std::string(ns)};
  return true;
}

bool KubeletPods::AddContainerLog(std::string_view entry) {
  constexpr std::string_view kSuffix = ".log";
  if (entry.size() < kSuffix.size() + 65 || entry.substr(entry.size() - kSuffix.size()) != kSuffix) return false;
  entry.remove_suffix(kSuffix.size());
  std::string_view id = entry.substr(entry.size() - 64);
  entry.remove_suffix(64);
  if (!IsContainerId(id) || entry.empty() || entry.back() != '-') return false;
  entry.remove_suffix(1);
  size_t first = entry.find('_'), last = entry.rfind('_');
  if (first == std::string_view::npos || first == last) return false;
  std::string_view pod = entry.substr(0, first), ns = entry.substr(first + 1, last - first - 1),
                   container = entry.substr(last + 1);
  if (!IsObjectName(pod) || !IsObjectName(ns) || !IsObjectName(container)) return false;
  containers_[std::string(id)] = {std::string(container), std::string(pod), std::string(ns)};
  return true;
}

bool KubeletPods::AddPod(std::string_view uid, std::string_view name, std::string_view ns) {
  if (!IsObjectName(ns) || !IsObjectName(name) || !IsPodUid(uid)) return false;
  pods_.try_emplace(std::string(uid), KubeletPodNames{std::string(name), std::string(ns)});
  return true;
}

bool KubeletPods::AddContainer(std::string_view id, std::string_view name, std::string_view pod,
                               std::string_view ns) {
  if (!IsContainerId(id) || !IsObjectName(name) || !IsObjectName(pod) || !IsObjectName(ns)) return false;
  containers_.try_emplace(std::string(id), KubeletContainerNames{std::string(name), std::string(pod), std::string(ns)});
  return true;
}

KubeletPods KubeletPods::Read(const std::string& log_root) {
  KubeletPods k;
  ForEachEntry(log_root + "/pods", [&](std::string_view e) { k.AddPodDirectory(e); });
  ForEachEntry(log_root + "/containers", [&](std::string_view e) { k.AddContainerLog(e); });
  return k;
}

const KubeletPodNames* KubeletPods::Pod(std::string_view pod_uid) const {
  auto it = pods_.find(pod_uid);
  return it == pods_.end() ? nullptr : &it->second;
}

const KubeletContainerNames* KubeletPods::Container(std::string_view container_id) const {
  auto it = containers_.find(container_id);
  return it == containers_.end() ? nullptr : &it->second;
}

void KubeletPods::Name(model::ProcessSnapshot* snapshot) const {
  if (empty()) return;
  for (model::ProcessInfo& p : snapshot->processes) {
    model::ContainerIdentity& c = p.identity.container;
    if (c.pod_uid.empty()) continue;
    // The kubelet's record wins over the process's hostname (a pod may set
    // spec.hostname to anything).
    if (const KubeletPodNames* pod = Pod(c.pod_uid)) {
      c.pod_name = pod->name;
      c.pod_namespace = pod->pod_namespace;
    }
    if (c.container_id.empty()) continue;
    const KubeletContainerNames* container = Container(c.container_id);
    // A log link of another pod's container (a stale or forged one) names
    // nothing here.
    if (!container || (!c.pod_name.empty() && container->pod_name != c.pod_name)) continue;
    c.container_name = container->name;
    if (c.pod_name.empty()) {
      c.pod_name = container->pod_name;
      c.pod_namespace = container->pod_namespace;
    }
  }
}

}  // namespace gpunoise::collect
