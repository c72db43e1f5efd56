#include "collect/sched_collector.h"

#include <bpf/bpf.h>

#include <cerrno>
#include <cstring>

#include "collect/task_scan.h"
#include "common/log.h"
#include "sched.skel.h"

namespace gpunoise::collect {

SchedCollector::SchedCollector(bool batching) : Collector("sched"), batching_(batching) {}

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
  skel_->rodata->gn_batching = batching_;
  bpf_program__set_autoload(skel_->progs.gn_sched_flush, batching_);

  if (!ShareTransport(skel_, context)) {
    Disable(fmt::format("failed to share the ring buffers and gate: {}", std::strerror(errno)));
    return;
  }
  bool filtering = !f.pids.empty() || f.cgroup_id;
  // The tid set only serves the classic twins under a filter (bpf/sched.bpf.c).
  if (!filtering) bpf_map__set_max_entries(skel_->maps.gn_tids, 1);
  static constexpr std::string_view kRequired[] = {"sched_switch"};
  auto load = [&] {
    int err = sched_bpf__load(skel_);
    if (err) return err;
    // Before attaching: a fork of a selected process is followed from the
    // first program run on.
    for (int pid : f.pids) {
      uint32_t key = static_cast<uint32_t>(pid);
      uint8_t one = 1;
      if (bpf_map__update_elem(skel_->maps.gn_pids, &key, sizeof(key), &one, sizeof(one), BPF_ANY) != 0)
        log::Warning("sched: failed to add pid {} to the filter: {}", pid, std::strerror(errno));
    }
    return 0;
  };
  Status st = SelectLoadAttach(skel_->obj, context, kRequired, load);
  if (!st.ok()) {
    log::Warning("{}", st.error().message);
    return;
  }
  // After attaching, so that a thread is either found here or created under
  // the programs' eyes (which add it themselves).
  if (filtering) SeedSelectedThreads(f);
}

void SchedCollector::SeedSelectedThreads(const FilterOptions& f) {
  std::vector<int> tids;
  for (int pid : f.pids) {
    std::vector<int> threads = ThreadsOfProcess(pid);
    tids.insert(tids.end(), threads.begin(), threads.end());
  }
  if (!f.cgroup_path.empty()) {
    std::vector<int> threads = ThreadsOfCgroupTree(f.cgroup_path);
    tids.insert(tids.end(), threads.begin(), threads.end());
  }
  uint64_t failed = 0;
  for (int tid : tids) {
    uint32_t key = static_cast<uint32_t>(tid);
    uint8_t one = 1;
    if (bpf_map__update_elem(skel_->maps.gn_tids, &key, sizeof(key), &one, sizeof(one), BPF_ANY) != 0) ++failed;
  }
  seed_failures_ = failed;
  if (failed) log::Warning("sched: {} selected threads did not fit the filter's thread table", failed);
}

int SchedCollector::batch_flush_fd() const {
  if (!batching_ || !skel_ || report_.state == model::CollectorState::kDisabled) return -1;
  return bpf_program__fd(skel_->progs.gn_sched_flush);
}

const gn_batch_word* SchedCollector::batch_words() const {
  if (batch_flush_fd() < 0 || !skel_->bss) return nullptr;
  return skel_->bss->gn_batch_words;
}

void SchedCollector::AddMapLosses(std::vector<model::MapLoss>& out) const {
  if (!skel_ || !skel_->bss) return;
  AddFullMap(out, name(), "gn_tids", seed_failures_ + SumPerCpuCounter(skel_->bss->gn_tids_full));
}

}  // namespace gpunoise::collect
