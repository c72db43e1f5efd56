// A container named on the command line, by id or by name: `container:`
// for `record --cgroup` and `report --focus` (model/process_identity.h has
// what it is matched against).
//
// Ids and names cannot be confused: a value of 12 to 64 lower-case hex
// digits is an id (runtimes print 12, cgroups hold 64); anything else is a
// name, which Kubernetes makes a DNS label (lower-case letters, digits and
// '-'). A name that happens to be 12 or more hex digits ("deadbeefcafe") is
// named with `container-name:`, which never takes an id.
//   container:aaaa0f52b1c9            id prefix
//   container:prep                    every container named prep
//   container:data-loader-7f9c/prep   prep of that pod (any namespace)
//   container:ml/data-loader-7f9c/prep
//   container-name:deadbeefcafe
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "model/process_identity.h"

namespace gpunoise::model {

inline constexpr std::string_view kContainerSelectorPrefix = "container:";
inline constexpr std::string_view kContainerNameSelectorPrefix = "container-name:";

struct ContainerSelector {
  std::string id_prefix;  // set: by id
  std::string name, pod_name, pod_namespace;  // by name; pod and namespace may be empty
  bool by_id() const { return !id_prefix.empty(); }
  // A container's name is known only where the recorder had the kubelet's
  // log tree (container_name empty otherwise): such a container matches no
  // name.
  bool Matches(const ContainerIdentity& c) const;
  // "container id aaaa0f52b1c9", "container ml/data-loader-7f9c/prep".
  std::string Describe() const;
};

// "container:..." or "container-name:...".
bool IsContainerSelector(std::string_view spec);

// 12 to 64 lower-case hex digits.
bool IsContainerIdPrefix(std::string_view value);

// Parses a whole spec ("container:prep"). nullopt with `error` set (without
// the spec; the caller names it) for a value that is neither an id nor a
// name.
std::optional<ContainerSelector> ParseContainerSelector(std::string_view spec, std::string* error);

}  // namespace gpunoise::model
