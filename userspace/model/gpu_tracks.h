// Names and track ids of the per-GPU track groups, shared by the two writers
// that put data under them: the CUPTI library in each training process
// (kernels, copies per stream) and the recorder's NVML sampler (clocks,
// power, utilization). Both derive the group's uuid from the node and the
// GPU's UUID (CUPTI's device record, NVML's nvmlDeviceGetUUID), so every
// process on a node, whatever CUDA ordinal it sees the GPU under (a
// container's NVIDIA_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER),
// and the sampler land under one group per GPU. The physical index is the
// fallback when a writer has no UUID.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpunoise::model {

// 64-bit FNV-1a, the hash behind every track uuid gpunoise makes.
constexpr uint64_t HashFnv1a64(std::string_view data, uint64_t h = 0xcbf29ce484222325ull) {
  for (char c : data) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

// The group of one physical GPU of one node (`node_id`: the kernel's boot id,
// /proc/sys/kernel/random/boot_id). `physical_index` is NVML's index; a CUDA
// process maps its device ordinal to it through CUDA_VISIBLE_DEVICES.
inline uint64_t GpuGroupTrackUuid(std::string_view node_id, uint32_t physical_index) {
  uint64_t h = HashFnv1a64(node_id, HashFnv1a64("gpunoise gpu "));
  h = HashFnv1a64(std::to_string(physical_index), HashFnv1a64("/", h));
  return h ? h : 1;
}

// The group of one GPU of one node by its UUID ("GPU-5f2a1c3e-...").
inline uint64_t GpuGroupTrackUuidByUuid(std::string_view node_id, std::string_view gpu_uuid) {
  uint64_t h = HashFnv1a64(node_id, HashFnv1a64("gpunoise gpu uuid "));
  h = HashFnv1a64(gpu_uuid, HashFnv1a64("/", h));
  return h ? h : 1;
}

// "GPU-5f2a1c3e-...": "GPU-5f2a1c3e", unique among the GPUs of a node and
// short enough for a track name (the full UUID is in the description).
inline std::string_view ShortGpuUuid(std::string_view uuid) { return uuid.substr(0, 12); }

// "NVIDIA H200" -> "H200": the vendor prefix only takes room in track names.
inline std::string_view ShortGpuModel(std::string_view model) {
  constexpr std::string_view kVendor = "NVIDIA ";
  if (model.substr(0, kVendor.size()) == kVendor) model.remove_prefix(kVendor.size());
  return model;
}

// "GPU 0 (H200)"
inline std::string GpuTrackName(uint32_t index, std::string_view model) {
  std::string name = "GPU " + std::to_string(index);
  std::string_view short_model = ShortGpuModel(model);
  if (!short_model.empty()) name += " (" + std::string(short_model) + ")";
  return name;
}

// "GPU-5f2a1c3e (H200)": the group's name from its UUID, the same from every
// writer (the trace processor keeps a track's first name, so two writers
// naming one group differently would show whichever came first).
inline std::string GpuTrackNameByUuid(std::string_view uuid, std::string_view model) {
  std::string name(ShortGpuUuid(uuid));
  std::string_view short_model = ShortGpuModel(model);
  if (!short_model.empty()) name += " (" + std::string(short_model) + ")";
  return name;
}

// Formats 16 raw UUID bytes the way NVML and nvidia-smi print them.
// All zero bytes (a device record that carries none) give "".
inline std::string FormatGpuUuid(const unsigned char (&bytes)[16]) {
  bool zero = true;
  for (unsigned char b : bytes) zero = zero && b == 0;
  if (zero) return "";
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += kHex[bytes[i] >> 4];
    s += kHex[bytes[i] & 0xf];
  }
  return s;
}

}  // namespace gpunoise::model
