#include "collect/nvml_sampler.h"

#include <chrono>
#include <cstring>

#include "common/clock.h"

namespace gpunoise::gpu {

Result<std::unique_ptr<NvmlSampler>> NvmlSampler::Create(const NvmlApi& api) {
  if (!api.DeviceGetCount || !api.DeviceGetHandleByIndex)
    return MakeError("NVML lacks nvmlDeviceGetCount_v2/nvmlDeviceGetHandleByIndex_v2 (driver too old)");
  NvmlReturn r = api.Init();
  if (r != kNvmlSuccess) return MakeError("failed to initialize NVML: {}", api.Error(r));
  std::unique_ptr<NvmlSampler> s(new NvmlSampler(api));
  unsigned int count = 0;
  r = api.DeviceGetCount(&count);
  if (r != kNvmlSuccess) return MakeError("failed to count GPUs with NVML: {}", api.Error(r));
  if (count == 0) return MakeError("NVML found no GPU");
  for (unsigned int i = 0; i < count; ++i) {
    NvmlDevice dev = nullptr;
    if (api.DeviceGetHandleByIndex(i, &dev) != kNvmlSuccess) continue;
    GpuInfo info;
    info.index = i;
    char buf[kNvmlNameBuffer > kNvmlUuidBuffer ? kNvmlNameBuffer : kNvmlUuidBuffer] = {};
    if (api.DeviceGetName && api.DeviceGetName(dev, buf, kNvmlNameBuffer) == kNvmlSuccess) info.name = buf;
    buf[0] = 0;
    if (api.DeviceGetUUID && api.DeviceGetUUID(dev, buf, kNvmlUuidBuffer) == kNvmlSuccess) info.uuid = buf;
    NvmlPciInfo pci{};
    if (api.DeviceGetPciInfo && api.DeviceGetPciInfo(dev, &pci) == kNvmlSuccess)
      info.pci_bus_id.assign(pci.bus_id, strnlen(pci.bus_id, sizeof(pci.bus_id)));
    NvmlMemory mem{};
    if (api.DeviceGetMemoryInfo && api.DeviceGetMemoryInfo(dev, &mem) == kNvmlSuccess)
      info.memory_total = mem.total;
    s->gpus_.push_back(std::move(info));
    s->devices_.push_back(dev);
  }
  if (s->gpus_.empty()) return MakeError("NVML could not open any of its {} GPUs", count);
  return s;
}

NvmlSampler::~NvmlSampler() {
  Stop();
  if (api_.Shutdown) api_.Shutdown();
}

std::vector<GpuSample> NvmlSampler::TakeSamples() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<GpuSample> out;
  out.swap(samples_);
  return out;
}

void NvmlSampler::SampleOnce(uint64_t ts) {
  std::vector<GpuSample> batch;
  for (size_t i = 0; i < devices_.size(); ++i) {
    NvmlDevice dev = devices_[i];
    GpuSample s;
    s.ts = ts;
    s.gpu = gpus_[i].index;
    unsigned int v = 0;
    if (api_.DeviceGetClockInfo && api_.DeviceGetClockInfo(dev, kNvmlClockSm, &v) == kNvmlSuccess)
      s.sm_clock_mhz = v;
    NvmlUtilization u{};
    if (api_.DeviceGetUtilizationRates && api_.DeviceGetUtilizationRates(dev, &u) == kNvmlSuccess) {
      s.gpu_utilization = u.gpu;
      s.memory_utilization = u.memory;
    }
    NvmlMemory m{};
    if (api_.DeviceGetMemoryInfo && api_.DeviceGetMemoryInfo(dev, &m) == kNvmlSuccess)
      s.memory_used_bytes = static_cast<double>(m.used);
    if (api_.DeviceGetTemperature && api_.DeviceGetTemperature(dev, kNvmlTemperatureGpu, &v) == kNvmlSuccess)
      s.temperature_c = v;
    if (api_.DeviceGetPowerUsage && api_.DeviceGetPowerUsage(dev, &v) == kNvmlSuccess)
      s.power_w = v / 1000.0;
    unsigned long long reasons = 0;
    if (api_.DeviceGetThrottleReasons && api_.DeviceGetThrottleReasons(dev, &reasons) == kNvmlSuccess)
      s.throttle_reasons = reasons;
    batch.push_back(s);
  }
  std::lock_guard<std::mutex> lock(mu_);
  samples_.insert(samples_.end(), batch.begin(), batch.end());
}

void NvmlSampler::Start(uint64_t interval_ns) {
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this, interval_ns] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      lock.unlock();
      SampleOnce(BoottimeNs());
      lock.lock();
      cv_.wait_for(lock, std::chrono::nanoseconds(interval_ns), [this] { return stop_; });
    }
  });
}

void NvmlSampler::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
    SampleOnce(BoottimeNs());  // the state at the end of the recording
  }
}

}  // namespace gpunoise::gpu
