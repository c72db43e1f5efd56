// Readable names for CUPTI enum values, for slice names and args.
#pragma once

#include <cstdint>
#include <string_view>

namespace gpunoise::cupti {

std::string_view MemcpyKindName(uint32_t copy_kind);      // CUpti_ActivityMemcpyKind: "HtoD"
std::string_view MemoryKindName(uint32_t memory_kind);    // CUpti_ActivityMemoryKind: "pinned"
std::string_view SyncTypeName(uint32_t sync_type);        // CUpti_ActivitySynchronizationType
std::string_view OverheadKindName(uint32_t overhead_kind);  // CUpti_ActivityOverheadKind

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": CUPTI's callback names carry
// the API version they were introduced in.
std::string_view StripApiVersion(std::string_view name);

// Whether a CUDA API call puts work on a GPU stream (kernel launches, graph
// launches, copies, memsets), so the trace draws a flow from it to that work.
bool IsLaunchLikeApi(std::string_view name);

}  // namespace gpunoise::cupti
