// The CUPTI activity converter on records as bytes: each record is the
// bytes of one CUPTI record type (kernel, copy, memset, graph, API call,
// synchronization, NVTX marker, overhead, device, or a kind it skips), with
// its string pointers aimed at strings from the input, as CUPTI's are.
// Chunks are taken in between, the way the flusher does, and a final one
// closes whatever is still open.
//
// Input (activity_converter_input.h writes it for the seeds): a sequence of
//   op byte: a multiple of 16 takes a chunk (next byte: records dropped);
//            any other picks kKinds[op % size], then the record's bytes
//            (short input is zero-filled), then per string field of the
//            type a length byte (0xff: a null pointer) and the string.

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>

#include "cupti/activity_converter.h"
#include "fuzz/activity_converter_input.h"

namespace {

using gpunoise::cupti::ActivityConverter;
using gpunoise::cupti::ClockReadings;
using gpunoise::cupti::ConverterOptions;

// Large and aligned enough for any record type.
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

// Reads the input front to back.
class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return pos_ >= size_; }
  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  // Up to `n` bytes into `out` (the rest stays as it was).
  void Bytes(void* out, size_t n) {
    size_t take = std::min(n, size_ - std::min(pos_, size_));
    if (take) std::memcpy(out, data_ + pos_, take);
    pos_ += take;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpunoise::fuzz;
  Input in(data, size);
  ConverterOptions options;
  options.pid = 4242;
  options.process_name = "train.py";
  options.node_id = "fuzz";
  options.start_ts = 1000;
  options.sequence_id = 7;
  // CUDA_VISIBLE_DEVICES=3,-1 style remapping, from the first byte.
  uint8_t devices = in.Byte();
  for (int i = 0; i < (devices & 3); ++i) options.visible_devices.push_back((devices >> (2 + i)) & 1 ? -1 : i + 2);
  options.api_name = [](bool runtime, uint32_t cbid) {
    if (cbid % 5 == 0) return std::string();
    return std::string(runtime ? "cudaLaunchKernel_v7000" : "cuLaunchKernel") + std::to_string(cbid % 3);
  };
  ActivityConverter converter(std::move(options));

  // Strings the records point at live until the converter is done.
  std::deque<std::string> strings;
  auto text = [&]() -> const char* {
    uint8_t n = in.Byte();
    if (n == kNullString) return nullptr;
    std::string s(n, '\0');
    in.Bytes(s.data(), n);
    s.resize(std::strlen(s.c_str()));  // CUPTI's strings end at their first NUL
    strings.push_back(std::move(s));
    return strings.back().c_str();
  };

  uint64_t now = 1'000'000;
  while (!in.empty()) {
    uint8_t op = in.Byte();
    if (op % 16 == 0) {  // what the flusher does between buffers
      converter.AddDroppedRecords(in.Byte());
      (void)converter.has_events();
      now += 1'000'000;
      (void)converter.TakeChunk({now, now - 7, now + 99}, false);
      continue;
    }
    CUpti_ActivityKind kind = kKinds[op % std::size(kKinds)];
    RecordStorage record;
    std::memset(&record, 0, sizeof(record));
    in.Bytes(&record, RecordBytes(kind));
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
  now += 1'000'000;
  (void)converter.TakeChunk({now, now - 7, now + 99}, true);
  return 0;
}
