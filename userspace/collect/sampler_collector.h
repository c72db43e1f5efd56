// bpf/sampler.bpf.c: a cpu-clock perf event per focus CPU at a low rate;
// each sample counts what ran there (task by comm and class, softirq,
// hard irq, idle). The perf events follow the CPUs: one that goes offline
// loses its event, one that comes back gets a new one (Reconcile).
#pragma once

#include <map>
#include <vector>

#include "collect/collector.h"
#include "common/unique_fd.h"
#include "model/kernel_aggregates.h"

struct sampler_bpf;

namespace gpunoise::collect {

class SamplerCollector : public Collector {
 public:
  // `irq_state_map_fd`: the irqtime collector's per-CPU interrupt state, or
  // -1 (then every sample counts as task or idle).
  SamplerCollector(int focus_map_fd, int irq_state_map_fd);
  ~SamplerCollector() override;

  std::string_view name() const override { return "sampler"; }
  // Loads the program; perf events are opened by Reconcile.
  void Start(const CollectorContext& context) override;
  void AddMapLosses(std::vector<model::MapLoss>& out) const override;
  void Stop() override;

  // Makes one event run at `hz` on each CPU of `cpus` that is in `online`,
  // and none elsewhere. Reopens events of CPUs that were offline since the
  // last call and events the kernel stopped running. Returns the CPUs that
  // have an event.
  std::vector<int> Reconcile(const std::vector<int>& cpus, const std::vector<int>& online, int hz);

  void Read(model::AggregateSnapshot* out) const;
  // Deletes keys whose count has not moved for `stale_ns` (comms of
  // processes long gone), so the map and the metric series stay bounded.
  // Returns how many it deleted.
  size_t Prune(uint64_t now_ns, uint64_t stale_ns);
  void SetFocusEnabled(bool enabled);

 private:
  struct CpuEvent {
    BpfLinkPtr link;
    UniqueFd perf_fd;       // a dup, for reading run time (libbpf owns the original)
    uint64_t last_running = 0;
    int hz = 0;
  };
  bool Open(int cpu, int hz);

  int focus_map_fd_;
  int irq_state_map_fd_;
  sampler_bpf* skel_ = nullptr;
  std::map<int, CpuEvent> events_;
  std::vector<int> last_online_;
  struct KeyState {
    uint64_t total = 0;
    uint64_t changed_at = 0;
  };
  std::map<std::vector<uint8_t>, KeyState> key_state_;
};

}  // namespace gpunoise::collect
