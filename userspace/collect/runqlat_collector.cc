#include "collect/runqlat_collector.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <string>

#include "collect/focus_rows.h"
#include "collect/percpu_maps.h"
#include "collect/proc_scanner.h"
#include "common/log.h"
#include "model/pid_ns.h"
#include "runqlat.skel.h"

extern "C" {
#include "bpf/runqlat.h"
}

namespace gpunoise::collect {

static_assert(sizeof(gn_rq_hist) == (GN_RQ_SLOTS + 2) * 8);
static_assert(offsetof(gn_rq_hist, count) == GN_RQ_SLOTS * 8);
static_assert(sizeof(gn_focus_sched) == 13 * 8);
static_assert(offsetof(gn_focus_sched, oncpu_ns) == 6 * 8);
static_assert(sizeof(gn_rq_culprit) == 48);
static_assert(sizeof(gn_rq_culprit_key) == 8);
static_assert(offsetof(gn_rq_culprit, comm) == 32);

namespace {

bool TaskExists(uint32_t tid) { return ::access(("/proc/" + std::to_string(tid)).c_str(), F_OK) == 0; }

}  // namespace

RunqlatCollector::RunqlatCollector(int focus_map_fd, int irq_state_map_fd)
    : Collector("runqlat"), focus_map_fd_(focus_map_fd), irq_state_map_fd_(irq_state_map_fd) {}

RunqlatCollector::~RunqlatCollector() {
  Stop();
  if (skel_) runqlat_bpf__destroy(skel_);
}

void RunqlatCollector::Start(const CollectorContext& context) {
  skel_ = runqlat_bpf__open();
  if (!skel_) {
    Disable(fmt::format("failed to open the eBPF object: {}", std::strerror(errno)));
    return;
  }
  skel_->rodata->gn_switch_has_prev_state = context.catalog->BtfTracepointArity("sched_switch") >= 4;
  if (bpf_map__reuse_fd(skel_->maps.gn_focus, focus_map_fd_) != 0 ||
      (irq_state_map_fd_ >= 0 && bpf_map__reuse_fd(skel_->maps.gn_irq_cpu, irq_state_map_fd_) != 0)) {
    Disable(fmt::format("failed to share the focus and interrupt-state maps: {}", std::strerror(errno)));
    return;
  }
  if (irq_state_map_fd_ < 0)
    log::Warning("runqlat: no interrupt clocks (irqtime collector off): waits behind a task include the "
                 "interrupts inside its runs");
  // /proc/<tid> names the kernel's own tids only in the host's pid namespace.
  prune_ = ReadPidNsInode("/proc/self") == model::kInitPidNsInode;
  // Task-local storage (Linux 5.11+) keeps the tp_btf programs' enqueue
  // times; without it only the classic twins (hash by tid) can run.
  CollectorContext ctx = context;
  if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, nullptr) <= 0) {
    bpf_map__set_autocreate(skel_->maps.gn_rq_task, false);
    ctx.attach_mode = AttachMode::kClassicOnly;
  }
  static constexpr std::string_view kRequired[] = {"sched_switch"};
  Status st = SelectLoadAttach(skel_->obj, ctx, kRequired, [&] { return runqlat_bpf__load(skel_); });
  if (!st.ok()) log::Warning("{}", st.error().message);
}

// Enqueue times the classic twins could not store (their hash was full),
// and waits that could not be charged to their task (its hash was full).
void RunqlatCollector::AddMapLosses(std::vector<model::MapLoss>& out) const {
  if (!skel_ || !skel_->bss) return;
  AddFullMap(out, name(), "gn_rq_start", SumPerCpuCounter(skel_->bss->gn_rq_full));
  AddFullMap(out, name(), "gn_rq_culprit", SumPerCpuCounter(skel_->bss->gn_rq_culprit_full));
}

void RunqlatCollector::SetFocusEnabled(bool enabled) {
  if (skel_ && skel_->bss) __atomic_store_n(&skel_->bss->gn_focus_enabled, enabled ? 1u : 0u, __ATOMIC_RELAXED);
}

void RunqlatCollector::Read(model::AggregateSnapshot* out) {
  if (!skel_ || report_.state == model::CollectorState::kDisabled) return;
  auto all = ReadPerCpuArray<gn_rq_hist>(skel_->maps.gn_rq_hist, GN_RQ_ALL);
  auto focus = ReadPerCpuArray<gn_rq_hist>(skel_->maps.gn_rq_hist, GN_RQ_FOCUS);
  auto to_model = [](const gn_rq_hist& h) {
    model::Log2Histogram m;
    m.slots.assign(std::begin(h.slots), std::end(h.slots));
    m.count = h.count;
    m.sum_ns = h.sum_ns;
    return m;
  };
  for (size_t cpu = 0; cpu < all.size() && cpu < focus.size(); ++cpu) {
    if (!all[cpu].count && !focus[cpu].count) continue;
    out->runqueue.push_back({static_cast<uint32_t>(cpu), to_model(all[cpu]), to_model(focus[cpu])});
  }
  auto fs = ReadPerCpuArray<gn_focus_sched>(skel_->maps.gn_focus_sched, 0);
  for (size_t cpu = 0; cpu < fs.size(); ++cpu) {
    const gn_focus_sched& v = fs[cpu];
    if (!v.switches && !v.waits) continue;
    model::FocusCpuCounters* c = &FocusRowOf(out->focus, static_cast<uint32_t>(cpu));
    c->switches = v.switches;
    c->preempted = v.preempted;
    for (uint32_t k = 0; k < model::kNumTaskClasses; ++k) c->preempted_by[k] = v.preempted_by[k];
    c->oncpu_ns = v.oncpu_ns;
    c->wait_woken_ns = v.wait_woken_ns;
    c->wait_preempted_ns = v.wait_preempted_ns;
    c->waits = v.waits;
    c->wait_hardirq_ns = v.wait_hardirq_ns;
    c->wait_softirq_ns = v.wait_softirq_ns;
    c->wait_unknown_ns = v.wait_unknown_ns;
  }
  ReadCulprits(out);
}

// A task that exited gets no more charges, so its entries' last values are
// read once after it went (they may have grown since the last read) and
// deleted at the next read; a tid reused in between keeps counting on the
// same entries, which stay monotonic.
void RunqlatCollector::ReadCulprits(model::AggregateSnapshot* out) {
  std::set<uint32_t> exited;
  std::map<uint32_t, bool> alive;  // one look in /proc per task, not per CPU it ran on
  for (const gn_rq_culprit_key& key : MapKeys<gn_rq_culprit_key>(skel_->maps.gn_rq_culprit)) {
    bool gone = false;
    if (prune_) {
      auto [it, fresh] = alive.try_emplace(key.tid, true);
      if (fresh) it->second = TaskExists(key.tid);
      gone = !it->second;
    }
    if (gone && exited_.count(key.tid)) {
      bpf_map__delete_elem(skel_->maps.gn_rq_culprit, &key, sizeof(key), 0);
      continue;
    }
    if (gone) exited.insert(key.tid);
    gn_rq_culprit v{};
    if (bpf_map__lookup_elem(skel_->maps.gn_rq_culprit, &key, sizeof(key), &v, sizeof(v), 0) != 0) continue;
    if (!v.wait_ns && !v.waits) continue;
    model::RunqueueCulprit c;
    c.cpu = key.cpu;
    c.tid = static_cast<int32_t>(key.tid);
    c.tgid = static_cast<int32_t>(v.tgid);
    c.comm = model::TaskComm::FromBytes(v.comm);
    c.wait_ns = v.wait_ns;
    c.waits = v.waits;
    out->culprits.push_back(c);
  }
  exited_ = std::move(exited);
}

}  // namespace gpunoise::collect
