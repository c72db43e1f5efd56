// The CUPTI activity converter on records as bytes: each record is the
// bytes of one CUPTI record type (kernel, copy, memset, graph, API call,
// synchronization, NVTX marker, overhead, device, or a kind it skips), with
// its string pointers aimed at strings from the input, as CUPTI's are.
// Chunks are taken in between, the way the flusher does, and a final one
// closes whatever is still open.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>

#include "cupti/activity_converter.h"

namespace {

using gpunoise::cupti::ActivityConverter;
using gpunoise::cupti::ClockReadings;
using gpunoise::cupti::ConverterOptions;

// Large and aligned enough for any record type below.
union RecordStorage {
  CUpti_Activity header;
  CUpti_ActivityKernel10 kernel;
  CUpti_ActivityMemcpy6 memcpy;
  CUpti_ActivityMemcpyPtoP4 peer;
  CUpti_ActivityMemset4 memset;
  CUpti_ActivityGraphTrace2 graph;
  CUpti_ActivityAPI api;
  CUpti_ActivitySynchronization2 sync;
  CUpti_ActivityMarker2 marker;
  CUpti_ActivityOverhead3 overhead;
  CUpti_ActivityDevice5 device;
};

constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_KERNEL,        CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,        CUPTI_ACTIVITY_KIND_MEMCPY2,
    CUPTI_ACTIVITY_KIND_MEMSET,        CUPTI_ACTIVITY_KIND_GRAPH_TRACE,
    CUPTI_ACTIVITY_KIND_RUNTIME,       CUPTI_ACTIVITY_KIND_DRIVER,
    CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
    CUPTI_ACTIVITY_KIND_MARKER,        CUPTI_ACTIVITY_KIND_OVERHEAD,
    CUPTI_ACTIVITY_KIND_DEVICE,        CUPTI_ACTIVITY_KIND_NAME,
};

size_t RecordBytes(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: return sizeof(CUpti_ActivityGraphTrace2);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_MARKER: return sizeof(CUpti_ActivityMarker2);
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
    case CUPTI_ACTIVITY_KIND_DEVICE: return sizeof(CUpti_ActivityDevice5);
    default: return sizeof(CUpti_Activity);
  }
}

ClockReadings Clocks(FuzzedDataProvider& in) {
  ClockReadings c;
  c.boottime = in.ConsumeIntegral<uint64_t>();
  c.monotonic = in.ConsumeIntegral<uint64_t>();
  c.realtime = in.ConsumeIntegral<uint64_t>();
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  ConverterOptions options;
  options.pid = in.ConsumeIntegral<int32_t>();
  options.process_name = in.ConsumeRandomLengthString(32);
  options.node_id = "fuzz";
  options.start_ts = in.ConsumeIntegral<uint64_t>();
  options.sequence_id = in.ConsumeIntegral<uint32_t>();
  for (int n = in.ConsumeIntegralInRange(0, 4); n > 0; --n)
    options.visible_devices.push_back(in.ConsumeIntegralInRange(-2, 16));
  options.api_name = [](bool runtime, uint32_t cbid) {
    if (cbid % 5 == 0) return std::string();
    return std::string(runtime ? "cudaLaunchKernel_v7000" : "cuLaunchKernel") + std::to_string(cbid % 3);
  };
  ActivityConverter converter(std::move(options));

  // Strings the records point at live until the converter is done.
  std::deque<std::string> strings;
  auto text = [&]() -> const char* {
    if (in.ConsumeBool()) return nullptr;
    strings.push_back(in.ConsumeRandomLengthString(64));
    return strings.back().c_str();
  };

  while (in.remaining_bytes() > 0) {
    uint8_t op = in.ConsumeIntegral<uint8_t>();
    if (op < 8) {  // what the flusher does between buffers
      converter.AddDroppedRecords(in.ConsumeIntegralInRange<uint64_t>(0, 1000));
      (void)converter.has_events();
      (void)converter.TakeChunk(Clocks(in), false);
      continue;
    }
    CUpti_ActivityKind kind = in.PickValueInArray(kKinds);
    RecordStorage record;
    std::memset(&record, 0, sizeof(record));
    std::string bytes = in.ConsumeBytesAsString(RecordBytes(kind));
    std::memcpy(&record, bytes.data(), bytes.size());
    record.header.kind = kind;
    switch (kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        record.kernel.name = text();
        record.kernel.reserved0 = nullptr;
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY: record.memcpy.reserved0 = nullptr; break;
      case CUPTI_ACTIVITY_KIND_MEMCPY2: record.peer.reserved0 = nullptr; break;
      case CUPTI_ACTIVITY_KIND_MARKER:
        record.marker.name = text();
        record.marker.domain = text();
        break;
      case CUPTI_ACTIVITY_KIND_OVERHEAD: record.overhead.overheadData = nullptr; break;
      case CUPTI_ACTIVITY_KIND_DEVICE: record.device.name = text(); break;
      default: break;
    }
    converter.Convert(&record.header);
  }
  (void)converter.TakeChunk(ClockReadings{}, true);
  return 0;
}
