// What the environment asks of libgpunoise_cupti.so (model/gpu_capture.h
// names the variables), parsed once at injection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

namespace gpunoise::cupti {

struct InjectionSettings {
  std::string dir;  // empty: capture is off
  uint64_t flush_ns = 1000000000ull;
  uint64_t keep_ns = 0;
  bool all_api = false;
  bool graph_nodes = false;
  size_t buffer_bytes = 4u << 20;
  size_t max_buffers = 16;
  // Held back while the directory is not writable yet (fragment_writer.h).
  size_t hold_bytes = 32u << 20;
  std::string cupti_path;
  std::vector<int> visible_devices;
  // The process's rank in its job and on its node, as launchers set them
  // (torchrun: RANK, LOCAL_RANK; srun: SLURM_PROCID, SLURM_LOCALID); -1: unset.
  int32_t rank = -1;
  int32_t local_rank = -1;
};

// `getenv` is injectable for tests.
InjectionSettings ReadInjectionSettings(
    const std::function<const char*(const char*)>& getenv_fn);

// CUDA_VISIBLE_DEVICES -> physical index per CUDA ordinal. Empty when unset.
// Entries that are not plain numbers (GPU UUIDs, MIG ids) map to -1; like
// CUDA, the list ends at the first negative number.
std::vector<int> ParseVisibleDevices(const char* value);

// Inside a container the runtime (nvidia-container-toolkit) exposes only the
// GPUs NVIDIA_VISIBLE_DEVICES names, as CUDA ordinals 0..n-1 in that order,
// and CUDA_VISIBLE_DEVICES then picks among those: physical =
// nvidia[cuda[ordinal]]. Empty, "all", "none" and "void" leave the ordinals
// alone; UUIDs map to -1 (the device record's UUID names the GPU then).
// Outside a container the variable does nothing, so callers pass
// `in_container` (a pid namespace other than the host's).
std::vector<int> ComposeVisibleDevices(const char* nvidia_visible, const char* cuda_visible,
                                       bool in_container);

// The first of `names` set to a non-negative integer; -1 if none is.
int32_t ParseRank(const std::function<const char*(const char*)>& getenv_fn,
                  std::initializer_list<const char*> names);

// Which CUDA API calls are recorded by default: calls that launch work
// (kernels, graphs, copies, memsets) and calls that wait for it.
bool IsRecordedByDefault(const std::string& api_name);

}  // namespace gpunoise::cupti
