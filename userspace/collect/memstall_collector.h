// bpf/memstall.bpf.c: tasks stalled in direct or memcg reclaim, reclaim
// throttling and compaction, as whole stalls read from the object's .bss log
// (no ring records). A stall the log overwrote before it was read is counted
// as lost (AddMapLosses), never silently dropped.
#pragma once

#include <vector>

#include "collect/collector.h"
#include "model/node_counters.h"

struct memstall_bpf;

namespace gpunoise::collect {

class MemstallCollector : public Collector {
 public:
  MemstallCollector();
  ~MemstallCollector() override;

  std::string_view name() const override { return "memstall"; }
  void Start(const CollectorContext& context) override;
  void AddMapLosses(std::vector<model::MapLoss>& out) const override;

  // Appends the stalls completed since the last call.
  void Drain(std::vector<model::MemStall>* out);
  uint64_t lost() const { return lost_; }

 private:
  memstall_bpf* skel_ = nullptr;
  uint64_t cursor_ = 0;
  uint64_t lost_ = 0;
};

}  // namespace gpunoise::collect
