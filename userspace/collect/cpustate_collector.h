// bpf/cpustate.bpf.c: idle periods and frequency changes of the recorded
// CPUs, read from each CPU's region of an mmap'ed log, and NUMA balancing
// events, read from the object's .bss log (no ring records). Entries a log
// overwrote before they were read are counted as lost (AddMapLosses), never
// silently dropped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "collect/collector.h"
#include "collect/mapped_map.h"
#include "model/cpu_state.h"

struct cpustate_bpf;

namespace gpunoise::collect {

class CpustateCollector : public Collector {
 public:
  // `idle`: also power:cpu_idle (the frequent one); frequency and NUMA
  // balancing are always wanted.
  explicit CpustateCollector(bool idle = true);
  ~CpustateCollector() override;

  std::string_view name() const override { return "cpustate"; }
  void Start(const CollectorContext& context) override;
  void AddMapLosses(std::vector<model::MapLoss>& out) const override;

  // Appends the entries written since the last call, CPU by CPU; returns
  // the most any one CPU wrote meanwhile (read or overwritten), so the
  // caller can drain sooner before a CPU laps its log.
  uint64_t Drain(std::vector<model::CpuStateEvent>* out);
  void DrainNuma(std::vector<model::NumaEvent>* out);
  static constexpr uint64_t kEntriesPerCpu = 8192;  // GN_CS_LOG
  uint64_t lost() const { return lost_ + numa_lost_; }
  // Idle exits with no entry (attached while a CPU was idle).
  uint64_t unpaired() const;
  // Which of its events attached (false also when the collector is disabled).
  bool Attached(std::string_view event) const;

 private:
  bool idle_;
  cpustate_bpf* skel_ = nullptr;
  uint32_t ncpus_ = 0;
  MappedMap log_, heads_;
  std::vector<uint64_t> cursors_;
  uint64_t lost_ = 0;
  uint64_t numa_cursor_ = 0, numa_lost_ = 0;
};

}  // namespace gpunoise::collect
