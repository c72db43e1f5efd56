#include "model/container_selector.h"

#include <vector>

namespace gpunoise::model {
namespace {

bool IsHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// What the API server accepts in pod, namespace and container names (DNS
// labels and subdomains): lower-case letters, digits, '-' and '.'.
bool IsObjectName(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) return false;
  return true;
}

std::vector<std::string_view> SplitSlash(std::string_view s) {
  std::vector<std::string_view> out;
  while (true) {
    size_t slash = s.find('/');
    out.push_back(s.substr(0, slash));
    if (slash == std::string_view::npos) return out;
    s.remove_prefix(slash + 1);
  }
}

}  // namespace

bool IsContainerIdPrefix(std::string_view value) {
  if (value.size() < 12 || value.size() > 64) return false;
  for (char c : value)
    if (!IsHex(c)) return false;
  return true;
}

bool IsContainerSelector(std::string_view spec) {
  return spec.starts_with(kContainerSelectorPrefix) || spec.starts_with(kContainerNameSelectorPrefix);
}

std::optional<ContainerSelector> ParseContainerSelector(std::string_view spec, std::string* error) {
  bool name_only = spec.starts_with(kContainerNameSelectorPrefix);
  if (!name_only && !spec.starts_with(kContainerSelectorPrefix)) {
    *error = "not a container selector";
    return std::nullopt;
  }
  std::string_view value =
      spec.substr(name_only ? kContainerNameSelectorPrefix.size() : kContainerSelectorPrefix.size());
  if (value.empty()) {
    *error = "needs a container id or name";
    return std::nullopt;
  }
  ContainerSelector sel;
  if (!name_only && IsContainerIdPrefix(value)) {
    sel.id_prefix = std::string(value);
    return sel;
  }
  std::vector<std::string_view> parts = SplitSlash(value);
  bool names_ok = parts.size() <= 3;
  for (std::string_view p : parts) names_ok = names_ok && IsObjectName(p);
  if (!names_ok) {
    *error = name_only ? "give NAME, POD/NAME or NAMESPACE/POD/NAME (Kubernetes names: lower-case letters, "
                         "digits, '-', '.')"
                       : "give a container id (12 to 64 hex digits) or a name (NAME, POD/NAME or "
                         "NAMESPACE/POD/NAME; lower-case letters, digits, '-', '.')";
    return std::nullopt;
  }
  sel.name = std::string(parts.back());
  if (parts.size() >= 2) sel.pod_name = std::string(parts[parts.size() - 2]);
  if (parts.size() == 3) sel.pod_namespace = std::string(parts[0]);
  return sel;
}

bool ContainerSelector::Matches(const ContainerIdentity& c) const {
  if (by_id()) return !c.container_id.empty() && c.container_id.starts_with(id_prefix);
  if (c.container_name.empty() || c.container_name != name) return false;
  if (!pod_name.empty() && c.pod_name != pod_name) return false;
  return pod_namespace.empty() || c.pod_namespace == pod_namespace;
}

std::string ContainerSelector::Describe() const {
  if (by_id()) return "container id " + id_prefix;
  std::string out = "container ";
  if (!pod_namespace.empty()) out += pod_namespace + "/";
  if (!pod_name.empty()) out += pod_name + "/";
  return out + name;
}

}  // namespace gpunoise::model
