// bpf/kwork.bpf.c: IPI callbacks, work items and hrtimer callbacks run on
// the recorded CPUs, and the senders of the function-call IPIs aimed at
// them, read from each CPU's region of an mmap'ed log (no ring records).
// Entries a CPU overwrote before they were read are counted as lost
// (AddMapLosses), never silently dropped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "collect/collector.h"
#include "collect/mapped_map.h"
#include "model/kernel_work.h"

struct kwork_bpf;
struct gn_kwork;

namespace gpunoise::collect {

class KworkCollector : public Collector {
 public:
  KworkCollector();
  ~KworkCollector() override;

  std::string_view name() const override { return "kwork"; }
  void Start(const CollectorContext& context) override;
  void AddMapLosses(std::vector<model::MapLoss>& out) const override;

  // Appends the entries written since the last call, CPU by CPU; returns
  // the most any one CPU wrote meanwhile (read or overwritten), so the
  // caller can drain sooner before a CPU laps its log.
  uint64_t Drain(std::vector<model::KernelWork>* out);
  static constexpr uint64_t kEntriesPerCpu = 2048;  // GN_KW_LOG
  // One entry of the log as the model's record (public for testing; the
  // caller has checked its kind).
  static model::KernelWork Decode(const gn_kwork& entry);
  uint64_t lost() const { return lost_; }
  // Exits with no entry and entries nested deeper than the kernel keeps.
  uint64_t unpaired() const;

 private:
  kwork_bpf* skel_ = nullptr;
  uint32_t ncpus_ = 0;
  MappedMap log_, heads_;
  std::vector<uint64_t> cursors_;
  uint64_t lost_ = 0;
};

}  // namespace gpunoise::collect
