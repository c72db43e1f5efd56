// NVML sampling and its Perfetto form, against a fake NVML (no driver here).
#include "collect/nvml_sampler.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "export/perfetto/node_tracks.h"
#include "export/perfetto/trace_view.h"
#include "export/perfetto/trace_file_writer.h"
#include "export/perfetto/track_event_writer.h"
#include "record/gpu/gpu_counter_packets.h"
#include "model/gpu_tracks.h"

namespace gpunoise::gpu {
namespace {

// Two GPUs; GPU 1 reports SW power cap + HW thermal slowdown from its
// second reading on, and cannot report power.
struct FakeNvml {
  static inline int init_calls = 0;
  static inline int shutdown_calls = 0;
  static inline int readings = 0;
  static NvmlDevice Handle(unsigned i) { return reinterpret_cast<NvmlDevice>(static_cast<uintptr_t>(i + 1)); }
  static unsigned Index(NvmlDevice d) { return static_cast<unsigned>(reinterpret_cast<uintptr_t>(d) - 1); }

  static NvmlApi Api() {
    NvmlApi api;
    api.Init = [] { ++init_calls; return kNvmlSuccess; };
    api.Shutdown = [] { ++shutdown_calls; return kNvmlSuccess; };
    api.ErrorString = [](NvmlReturn) { return "fake error"; };
    api.DeviceGetCount = [](unsigned* n) { *n = 2; return kNvmlSuccess; };
    api.DeviceGetHandleByIndex = [](unsigned i, NvmlDevice* d) { *d = Handle(i); return kNvmlSuccess; };
    api.DeviceGetName = [](NvmlDevice, char* buf, unsigned len) {
      std::strncpy(buf, "NVIDIA H200", len);
      return kNvmlSuccess;
    };
    api.DeviceGetUUID = [](NvmlDevice d, char* buf, unsigned len) {
      std::snprintf(buf, len, "GPU-0000000%u-aaaa-bbbb-cccc-dddddddddddd", Index(d));
      return kNvmlSuccess;
    };
    api.DeviceGetPciInfo = [](NvmlDevice d, NvmlPciInfo* pci) {
      std::snprintf(pci->bus_id, sizeof(pci->bus_id), "00000000:%X:00.0", 0x3b + Index(d));
      return kNvmlSuccess;
    };
    api.DeviceGetClockInfo = [](NvmlDevice d, unsigned type, unsigned* mhz) {
      *mhz = type == kNvmlClockSm ? 1980 - 100 * Index(d) : 0;
      return kNvmlSuccess;
    };
    api.DeviceGetUtilizationRates = [](NvmlDevice, NvmlUtilization* u) {
      u->gpu = 97;
      u->memory = 40;
      return kNvmlSuccess;
    };
    api.DeviceGetMemoryInfo = [](NvmlDevice, NvmlMemory* m) {
      m->total = 141ull << 30;
      m->used = 80ull << 30;
      m->free = m->total - m->used;
      return kNvmlSuccess;
    };
    api.DeviceGetTemperature = [](NvmlDevice, unsigned, unsigned* c) { *c = 71; return kNvmlSuccess; };
    api.DeviceGetPowerUsage = [](NvmlDevice d, unsigned* mw) {
      *mw = 650500;
      return Index(d) == 1 ? 3 /* NVML_ERROR_NOT_SUPPORTED */ : kNvmlSuccess;
    };
    api.DeviceGetThrottleReasons = [](NvmlDevice d, unsigned long long* r) {
      ++readings;
      *r = Index(d) == 1 && readings > 2 ? (kThrottleSwPowerCap | kThrottleHwThermal) : kThrottleGpuIdle;
      return kNvmlSuccess;
    };
    return api;
  }
};

TEST(NvmlSampler, ReadsEveryCounterOfEveryGpu) {
  FakeNvml::readings = 0;
  auto sampler = NvmlSampler::Create(FakeNvml::Api());
  ASSERT_TRUE(sampler.ok()) << sampler.error().message;
  ASSERT_EQ((*sampler)->gpus().size(), 2u);
  EXPECT_EQ((*sampler)->gpus()[1].name, "NVIDIA H200");
  EXPECT_EQ((*sampler)->gpus()[1].uuid, "GPU-00000001-aaaa-bbbb-cccc-dddddddddddd");
  (*sampler)->SampleOnce(1000);
  (*sampler)->SampleOnce(2000);
  const auto& s = (*sampler)->samples();
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].ts, 1000u);
  EXPECT_EQ(*s[0].sm_clock_mhz, 1980);
  EXPECT_EQ(*s[1].sm_clock_mhz, 1880);
  EXPECT_EQ(*s[0].gpu_utilization, 97);
  EXPECT_EQ(*s[0].memory_utilization, 40);
  EXPECT_EQ(*s[0].memory_used_bytes, static_cast<double>(80ull << 30));
  EXPECT_EQ(*s[0].temperature_c, 71);
  EXPECT_DOUBLE_EQ(*s[0].power_w, 650.5);
  EXPECT_FALSE(s[1].power_w);  // not supported: absent, not zero
  EXPECT_EQ(*s[3].throttle_reasons, kThrottleSwPowerCap | kThrottleHwThermal);
}

TEST(NvmlSampler, SamplesOnItsOwnThreadUntilStopped) {
  auto sampler = NvmlSampler::Create(FakeNvml::Api());
  ASSERT_TRUE(sampler.ok());
  (*sampler)->Start(5000000);  // 5 ms
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  (*sampler)->Stop();
  size_t n = (*sampler)->samples().size();
  EXPECT_GE(n, 6u);  // two GPUs, a few readings, plus the final one
  EXPECT_EQ(n % 2, 0u);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ((*sampler)->samples().size(), n);
}

TEST(NvmlSampler, NoGpuIsAnError) {
  NvmlApi api = FakeNvml::Api();
  api.DeviceGetCount = [](unsigned* n) { *n = 0; return kNvmlSuccess; };
  auto sampler = NvmlSampler::Create(api);
  ASSERT_FALSE(sampler.ok());
  EXPECT_EQ(sampler.error().message, "NVML found no GPU");
  api.Init = [] { return 9; };
  sampler = NvmlSampler::Create(api);
  ASSERT_FALSE(sampler.ok());
  EXPECT_EQ(sampler.error().message, "failed to initialize NVML: fake error");
}

TEST(NvmlSampler, MissingLibraryIsAnError) {
  auto api = LoadNvml("/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(api.ok());
  EXPECT_NE(api.error().message.find("/nonexistent/libnvidia-ml.so.1"), std::string::npos);
}

std::string TempFile() {
  char tmpl[] = "/tmp/gpunoise-nvml-test-XXXXXX";
  int fd = mkstemp(tmpl);
  close(fd);
  return tmpl;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(GpuCounterPackets, CountersSitUnderTheSharedGpuGroup) {
  FakeNvml::readings = 0;
  auto sampler = NvmlSampler::Create(FakeNvml::Api());
  ASSERT_TRUE(sampler.ok());
  for (uint64_t ts : {1000, 2000, 3000}) (*sampler)->SampleOnce(ts);
  std::string path = TempFile();
  auto out = perfetto::TraceFileWriter::Create(path, 0);
  ASSERT_TRUE(out.ok());
  perfetto::TrackEventWriter writer(2, 99);
  ASSERT_TRUE(WriteGpuCounters((*sampler)->gpus(), (*sampler)->samples(), "node-a", writer, *out).ok());
  ASSERT_TRUE(out->Commit().ok());
  testing::TraceView v(ReadAll(path));
  unlink(path.c_str());
  ASSERT_TRUE(v.parsed());

  // Keyed by UUID, the key the CUPTI library's groups have (activity_converter_test).
  const auto* gpu1 = v.Track(model::GpuGroupTrackUuidByUuid("node-a", "GPU-00000001-aaaa-bbbb-cccc-dddddddddddd"));
  ASSERT_NE(gpu1, nullptr);
  EXPECT_EQ(gpu1->name(), "GPU-00000001 (H200)");
  EXPECT_NE(gpu1->description().find("NVML index 1, PCI 00000000:3C:00.0"), std::string::npos)
      << gpu1->description();
  int counters_under_gpu1 = 0;
  uint64_t clock_track = 0, power_track = 0, memory_track = 0;
  for (const auto& [uuid, d] : v.tracks()) {
    if (d->parent_uuid() != gpu1->uuid() || !d->has_counter()) continue;
    ++counters_under_gpu1;
    if (d->name() == "SM clock") {
      clock_track = uuid;
      EXPECT_EQ(d->counter().unit_name(), "MHz");
    }
    if (d->name() == "Power") power_track = uuid;
    if (d->name() == "Memory used") {
      memory_track = uuid;
      EXPECT_EQ(d->counter().unit(), perfetto::CounterDescriptor::UNIT_SIZE_BYTES);
    }
  }
  EXPECT_EQ(counters_under_gpu1, 7);  // six counters and the reason bitmask
  auto clock = v.Counter(clock_track);
  ASSERT_EQ(clock.size(), 3u);
  EXPECT_EQ(clock[0], std::make_pair(uint64_t{1000}, 1880.0));
  EXPECT_TRUE(v.Counter(power_track).empty());  // unsupported: no points
  EXPECT_EQ(v.Counter(memory_track).size(), 3u);

  // Throttling from the second reading of GPU 1 on, named by its reasons.
  const auto* throttling = v.TrackNamed("Clock throttling");
  ASSERT_NE(throttling, nullptr);
  bool found = false;
  for (const auto& [uuid, d] : v.tracks()) {
    if (d->name() != "Clock throttling" || d->parent_uuid() != gpu1->uuid()) continue;
    auto slices = v.SlicesOn(uuid);
    ASSERT_EQ(slices.size(), 1u);
    EXPECT_EQ(slices[0].name, "SW power cap, HW thermal slowdown");
    EXPECT_EQ(slices[0].start, 2000u);
    EXPECT_EQ(slices[0].end, 3000u);
    found = true;
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(v.unclosed(), 0u);
}

// numa_locality joins GPU tracks (by UUID) to sysfs (by PCI address).
TEST(GpuCounterPackets, EachGpusPciAddressIsNamedByUuidOnTheNodeTrack) {
  FakeNvml::readings = 0;
  auto sampler = NvmlSampler::Create(FakeNvml::Api());
  ASSERT_TRUE(sampler.ok());
  (*sampler)->SampleOnce(1000);
  std::string path = TempFile();
  auto out = perfetto::TraceFileWriter::Create(path, 0);
  ASSERT_TRUE(out.ok());
  perfetto::TrackEventWriter writer(2, 99);
  ASSERT_TRUE(WriteGpuCounters((*sampler)->gpus(), (*sampler)->samples(), "node-a", writer, *out).ok());
  ASSERT_TRUE(out->Commit().ok());
  testing::TraceView v(ReadAll(path));
  unlink(path.c_str());
  const auto* node = v.TrackNamed(std::string(perfetto::kNodeMetadataTrackName));
  ASSERT_NE(node, nullptr);
  std::map<std::string, std::string> bus_by_uuid;
  for (const auto& p : v.trace().packet()) {
    if (!p.has_track_event() || p.track_event().name() != perfetto::kGpuBusIdEventName) continue;
    EXPECT_EQ(p.track_event().track_uuid(), node->uuid());
    std::string uuid, bus;
    for (const auto& a : p.track_event().debug_annotations()) {
      if (a.name() == "uuid") uuid = a.string_value();
      if (a.name() == "bus_id") bus = a.string_value();
    }
    bus_by_uuid[uuid] = bus;
  }
  ASSERT_EQ(bus_by_uuid.size(), (*sampler)->gpus().size());
  EXPECT_EQ(bus_by_uuid["GPU-00000001-aaaa-bbbb-cccc-dddddddddddd"], "00000000:3C:00.0");
}

TEST(GpuCounterPackets, UnavailableNvmlLeavesANote) {
  std::string path = TempFile();
  auto out = perfetto::TraceFileWriter::Create(path, 0);
  ASSERT_TRUE(out.ok());
  perfetto::TrackEventWriter writer(2, 99);
  ASSERT_TRUE(WriteNvmlUnavailable(500, "libnvidia-ml.so.1: not found", writer, *out).ok());
  ASSERT_TRUE(out->Commit().ok());
  testing::TraceView v(ReadAll(path));
  unlink(path.c_str());
  auto note = v.InstantNamed("NVML unavailable");
  ASSERT_TRUE(note);
  EXPECT_EQ(note->start, 500u);
  EXPECT_EQ(v.Track(note->track)->name(), std::string(kGpuCountersTrackName));
  EXPECT_EQ(note->Arg("reason")->string_value(), "libnvidia-ml.so.1: not found");
  int counters = 0;
  for (const auto& [uuid, d] : v.tracks()) counters += d->has_counter();
  EXPECT_EQ(counters, 0);
}

TEST(ThrottleReasons, NamesLeaveIdleOutAndKeepUnknownBits) {
  EXPECT_EQ(ThrottleReasonNames(kThrottleGpuIdle), "");
  EXPECT_EQ(ThrottleReasonNames(kThrottleHwPowerBrake | kThrottleGpuIdle), "HW power brake");
  EXPECT_EQ(ThrottleReasonNames(kThrottleSwThermal | 0x1000), "SW thermal slowdown, other (0x1000)");
}

}  // namespace
}  // namespace gpunoise::gpu
