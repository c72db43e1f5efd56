// Pod and container names from the CRI, as a second source beside the
// kubelet's log tree (collect/kubelet_pods.h): where `crictl` is on PATH,
// `crictl pods -o json` and `crictl ps -a -o json` (the tool the node
// already has talks to the runtime's CRI socket; gpunoise links no gRPC
// stack). Without crictl, or when it fails or takes longer than a bound,
// the log tree alone names pods. What the log tree gave wins.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collect/kubelet_pods.h"
#include "common/result.h"

namespace gpunoise::collect {

// `crictl pods -o json`: {"items": [{"id", "metadata": {"name", "uid",
// "namespace"}}]}. Returns how many pods were taken; an error for text that
// is not such JSON.
Result<size_t> AddCrictlPods(std::string_view json, KubeletPods* pods);
// `crictl ps -a -o json`: {"containers": [{"id", "podSandboxId",
// "metadata": {"name"}, "labels": {"io.kubernetes.pod.name",
// "io.kubernetes.pod.namespace"}}]}.
Result<size_t> AddCrictlContainers(std::string_view json, KubeletPods* pods);

// The first executable `name` in PATH; nullopt if none.
std::optional<std::string> FindOnPath(std::string_view name, const char* path_env);

// Runs `argv` (argv[0] a path), stdout captured (at most 16 MiB), stderr
// discarded, killed after `timeout`. The error says why there is no output.
Result<std::string> RunBounded(const std::vector<std::string>& argv, std::chrono::milliseconds timeout);

// Both crictl queries into `pods` when crictl is on PATH; a failure leaves
// `pods` as it was and is returned as the error (the caller says it once).
Status AddCrictlNames(KubeletPods* pods);

}  // namespace gpunoise::collect
