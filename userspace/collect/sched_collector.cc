#include "collect/sched_collector.h"

#include <bpf/bpf.h>

#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "sched.skel.h"

namespace gpunoise::collect {

SchedCollector::SchedCollector() : Collector("sched") {}

// Stop() only detaches: the maps (loss counters, IRQ names) stay readable
// until the collector is destroyed.
SchedCollector::~SchedCollector() {
  Stop();
  if (skel_) sched_bpf__destroy(skel_);
}

void SchedCollector::Start(const CollectorContext& context) {
  skel_ = sched_bpf__open();
  if (!skel_) {
    Disable(fmt::format("failed to open the eBPF object: {}", std::strerror(errno)));
    return;
  }
  ApplyCommonConfig(skel_, context);
  const FilterOptions& f = context.filters;
  skel_->rodata->gn_filter_pids = !f.pids.empty();
  skel_->rodata->gn_follow_forks = f.follow_forks;
  skel_->rodata->gn_cgroup_id = f.cgroup_id;
  skel_->rodata->gn_cgroup_level = f.cgroup_level;
  // prev_state became the 4th sched_switch argument in Linux 5.18.
  skel_->rodata->gn_switch_has_prev_state = context.catalog->BtfTracepointArity("sched_switch") >= 4;

  if (!ShareTransport(skel_, context)) {
    Disable(fmt::format("failed to share the ring buffers and gate: {}", std::strerror(errno)));
    return;
  }
  static constexpr std::string_view kRequired[] = {"sched_switch"};
  Status st = SelectLoadAttach(skel_->obj, context, kRequired, [&] { return sched_bpf__load(skel_); });
  if (!st.ok()) {
    log::Warning("{}", st.error().message);
    return;
  }
  for (int pid : f.pids) {
    uint32_t key = static_cast<uint32_t>(pid);
    uint8_t one = 1;
    if (bpf_map__update_elem(skel_->maps.gn_pids, &key, sizeof(key), &one, sizeof(one), BPF_ANY) != 0)
      log::Warning("sched: failed to add pid {} to the filter: {}", pid, std::strerror(errno));
  }
}

void SchedCollector::AddLostPerCpu(std::vector<uint64_t>& lost) const { AddSkeletonLost(skel_, lost); }

}  // namespace gpunoise::collect
