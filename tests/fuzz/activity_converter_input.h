// The activity converter fuzz target's input format (activity_converter_
// fuzzer.cc reads it, seeds.cc writes its seeds with ConverterInput).
#pragma once

#include <cupti_activity.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace gpunoise::fuzz {

// What an op byte picks (op % size; a multiple of 16 takes a chunk).
inline constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_NAME,  // index 0: unused (op 0 takes a chunk); a kind the converter skips
    CUPTI_ACTIVITY_KIND_KERNEL,        CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,        CUPTI_ACTIVITY_KIND_MEMCPY2,
    CUPTI_ACTIVITY_KIND_MEMSET,        CUPTI_ACTIVITY_KIND_GRAPH_TRACE,
    CUPTI_ACTIVITY_KIND_RUNTIME,       CUPTI_ACTIVITY_KIND_DRIVER,
    CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
    CUPTI_ACTIVITY_KIND_MARKER,        CUPTI_ACTIVITY_KIND_OVERHEAD,
    CUPTI_ACTIVITY_KIND_DEVICE,        CUPTI_ACTIVITY_KIND_NAME,
};
inline constexpr uint8_t kNullString = 0xff;

inline size_t RecordBytes(CUpti_ActivityKind kind) {
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

// Builds an input: records of the real types, as CUPTI fills them.
class ConverterInput {
 public:
  explicit ConverterInput(uint8_t devices = 0) { bytes_ += static_cast<char>(devices); }
  // `op_index` is the record's kind's index in kKinds.
  template <typename Record>
  ConverterInput& Add(uint8_t op_index, const Record& record, std::initializer_list<const char*> strings = {}) {
    bytes_ += static_cast<char>(op_index);
    bytes_.append(reinterpret_cast<const char*>(&record), sizeof(record));
    for (const char* s : strings) {
      if (!s) {
        bytes_ += static_cast<char>(kNullString);
        continue;
      }
      size_t n = std::min<size_t>(std::strlen(s), kNullString - 1);
      bytes_ += static_cast<char>(n);
      bytes_.append(s, n);
    }
    return *this;
  }
  ConverterInput& Chunk(uint8_t dropped) {
    bytes_ += '\0';
    bytes_ += static_cast<char>(dropped);
    return *this;
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

}  // namespace gpunoise::fuzz
