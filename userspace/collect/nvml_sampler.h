// Samples every GPU's SM clock, utilization, memory use, temperature, power
// and clock-throttle reasons through NVML at a fixed interval, on a thread
// of its own, for the duration of a recording.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "collect/nvml_api.h"

namespace gpunoise::gpu {

struct GpuInfo {
  uint32_t index = 0;  // NVML's index: the physical GPU
  std::string name;    // "NVIDIA H200"
  std::string uuid;    // "GPU-...": the key CUPTI's device records share
  uint64_t memory_total = 0;
  std::string pci_bus_id;  // "00000000:3B:00.0", empty if NVML gave none (last: aggregate inits)
};

// One reading of one GPU; a value NVML could not give is absent.
struct GpuSample {
  uint64_t ts = 0;  // CLOCK_BOOTTIME
  uint32_t gpu = 0;
  std::optional<double> sm_clock_mhz;
  std::optional<double> gpu_utilization;     // percent
  std::optional<double> memory_utilization;  // percent
  std::optional<double> memory_used_bytes;
  std::optional<double> temperature_c;
  std::optional<double> power_w;
  std::optional<uint64_t> throttle_reasons;
};

class NvmlSampler {
 public:
  // Initializes NVML and lists the GPUs; an error (NVML missing, no GPU)
  // means no counters for this recording.
  static Result<std::unique_ptr<NvmlSampler>> Create(const NvmlApi& api);
  ~NvmlSampler();

  void Start(uint64_t interval_ns);
  void Stop();

  // One reading of every GPU; public for tests.
  void SampleOnce(uint64_t ts);

  const std::vector<GpuInfo>& gpus() const { return gpus_; }
  // Valid once stopped.
  const std::vector<GpuSample>& samples() const { return samples_; }
  // Hands over the samples taken so far (the monitor's way: one reading per
  // interval, nothing kept).
  std::vector<GpuSample> TakeSamples();

 private:
  explicit NvmlSampler(const NvmlApi& api) : api_(api) {}

  NvmlApi api_;
  std::vector<GpuInfo> gpus_;
  std::vector<NvmlDevice> devices_;
  std::vector<GpuSample> samples_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace gpunoise::gpu
