// Records of the real CUPTI types and the converter's options, shared by
// the converter's tests (activity_converter_test.cc, gpu_identity_test.cc).
#pragma once

#include <cupti_activity.h>

#include <cstring>
#include <string>

#include "cupti/activity_converter.h"
#include "export/perfetto/trace_view.h"

namespace gpunoise::cupti {
namespace {

using testing::Slice;
using testing::TraceView;

constexpr int32_t kPid = 4242;
constexpr uint32_t kTid = 4243;
constexpr char kNode[] = "5a0c9d5e-0000-4000-8000-000000000001";
constexpr uint32_t kLaunchCbid = 211;
constexpr uint32_t kSyncCbid = 131;
constexpr uint32_t kMemcpyCbid = 31;

inline ConverterOptions Options() {
  ConverterOptions o;
  o.pid = kPid;
  o.process_name = "train.py";
  o.node_id = kNode;
  o.start_ts = 1000;
  o.sequence_id = 77;
  o.api_name = [](bool runtime, uint32_t cbid) -> std::string {
    if (!runtime) return cbid == kLaunchCbid ? "cuLaunchKernel" : "";
    switch (cbid) {
      case kLaunchCbid: return "cudaLaunchKernel_v7000";
      case kSyncCbid: return "cudaStreamSynchronize_v3020";
      case kMemcpyCbid: return "cudaMemcpyAsync_v3020";
      default: return "";
    }
  };
  return o;
}

template <typename T>
T Zeroed() {
  T t;
  std::memset(&t, 0, sizeof(t));
  return t;
}

inline const CUpti_Activity* AsRecord(const void* r) { return static_cast<const CUpti_Activity*>(r); }

constexpr const char* kDeviceUuid = "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f";

// A device record; uuid_base shifts the UUID's bytes (0x10: kDeviceUuid),
// -1 leaves it out (all zero, as records of some drivers have it).
inline CUpti_ActivityDevice5 Device(uint32_t id, const char* name, int uuid_base = 0x10) {
  auto d = Zeroed<CUpti_ActivityDevice5>();
  d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d.id = id;
  d.name = name;
  d.numMultiprocessors = 132;
  d.computeCapabilityMajor = 9;
  d.globalMemorySize = 141ull << 30;
  if (uuid_base >= 0)
    for (int i = 0; i < 16; ++i) d.uuid.bytes[i] = static_cast<char>(uuid_base + i);
  return d;
}

inline CUpti_ActivityKernel10 Kernel(uint64_t start, uint64_t end, uint32_t stream, uint32_t corr,
                              const char* name = "_Z5scaleIfEvPT_S0_i") {
  auto k = Zeroed<CUpti_ActivityKernel10>();
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = start;
  k.end = end;
  k.deviceId = 0;
  k.contextId = 1;
  k.streamId = stream;
  k.gridX = 128, k.gridY = 1, k.gridZ = 1;
  k.blockX = 256, k.blockY = 1, k.blockZ = 1;
  k.registersPerThread = 32;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 2048;
  k.correlationId = corr;
  k.name = name;
  return k;
}

inline CUpti_ActivityAPI Api(CUpti_ActivityKind kind, uint32_t cbid, uint64_t start, uint64_t end,
                      uint32_t corr, uint32_t tid = kTid) {
  auto a = Zeroed<CUpti_ActivityAPI>();
  a.kind = kind;
  a.cbid = cbid;
  a.start = start;
  a.end = end;
  a.processId = kPid;
  a.threadId = tid;
  a.correlationId = corr;
  return a;
}

inline CUpti_ActivityMarker2 Marker(CUpti_ActivityFlag flag, uint32_t id, uint64_t ts, uint32_t tid,
                             const char* name, const char* domain = nullptr) {
  auto m = Zeroed<CUpti_ActivityMarker2>();
  m.kind = CUPTI_ACTIVITY_KIND_MARKER;
  m.flags = flag;
  m.id = id;
  m.timestamp = ts;
  m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  m.objectId.pt.processId = kPid;
  m.objectId.pt.threadId = tid;
  m.name = name;
  m.domain = domain;
  return m;
}

inline ClockReadings Now(uint64_t boottime) { return ClockReadings{boottime, boottime - 7, boottime + 99}; }

inline const std::string& StringArg(const Slice& s, const std::string& name) {
  static const std::string kMissing = "<missing>";
  auto* a = s.Arg(name);
  return a ? a->string_value() : kMissing;
}
inline uint64_t UintArg(const Slice& s, const std::string& name) {
  auto* a = s.Arg(name);
  return a ? a->uint_value() : ~0ull;
}
inline int64_t IntArg(const Slice& s, const std::string& name) {
  auto* a = s.Arg(name);
  return a ? a->int_value() : -1;
}

}  // namespace
}  // namespace gpunoise::cupti
