#include "model/node_counters.h"

namespace gpunoise::model {

std::string_view MemStallName(MemStallKind kind) {
  switch (kind) {
    case MemStallKind::kDirectReclaim: return "direct reclaim";
    case MemStallKind::kMemcgReclaim: return "memcg reclaim";
    case MemStallKind::kCompaction: return "compaction";
    case MemStallKind::kThrottled: return "reclaim throttled";
    case MemStallKind::kDirtyThrottle: return "balance dirty pages";
  }
  return "memory stall";
}

}  // namespace gpunoise::model
