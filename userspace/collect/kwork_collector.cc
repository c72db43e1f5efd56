#include "collect/kwork_collector.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "collect/seq_ring.h"
#include "common/log.h"

extern "C" {
#include "bpf/kwork.h"
}
#include "kwork.skel.h"

namespace gpunoise::collect {

static_assert(sizeof(gn_kwork) == 72);
static_assert(offsetof(gn_kwork, tid) == 56);
static_assert(offsetof(gn_kwork, tgid) == 64);
static_assert(sizeof(gn_kwork_head) == 64);
static_assert((GN_KW_LOG & (GN_KW_LOG - 1)) == 0);

KworkCollector::KworkCollector() : Collector("kwork") {}

KworkCollector::~KworkCollector() {
  Stop();
  if (skel_) kwork_bpf__destroy(skel_);
}

void KworkCollector::Start(const CollectorContext& context) {
  int possible = libbpf_num_possible_cpus();
  if (possible <= 0) {
    Disable("failed to count the possible CPUs");
    return;
  }
  ncpus_ = static_cast<uint32_t>(possible);
  skel_ = kwork_bpf__open();
  if (!skel_) {
    Disable(fmt::format("failed to open the eBPF object: {}", std::strerror(errno)));
    return;
  }
  bpf_map__set_max_entries(skel_->maps.gn_kw_log, ncpus_ * GN_KW_LOG);
  bpf_map__set_max_entries(skel_->maps.gn_kw_heads, ncpus_);
  // Receivers only on the recorded CPUs, senders only when they aim at one.
  SetCpuFilter(context.filters.cpus, skel_->rodata->gn_kw_filter_cpus, skel_->rodata->gn_kw_cpu_mask);
  // The irq collector's interrupt state, so that a send from an interrupt
  // is not blamed on the task it interrupted.
  if (context.cpu_ctx_fd >= 0 && bpf_map__reuse_fd(skel_->maps.gn_cpu_ctx, context.cpu_ctx_fd) != 0)
    log::Warning("kwork: failed to share the CPU context map: {}", std::strerror(errno));
  // The recording's gate: nothing from the attach and detach phases, whose
  // text patching IPIs every CPU (bpf/kwork.bpf.c says what that did).
  if (context.gate_fd >= 0 && bpf_map__reuse_fd(skel_->maps.gn_gate, context.gate_fd) != 0)
    log::Warning("kwork: failed to share the recording gate: {}", std::strerror(errno));
  ShareDoorbell(skel_->maps.gn_doorbell, context, name());
  Status st = SelectLoadAttach(skel_->obj, context, {}, [&] { return kwork_bpf__load(skel_); });
  if (!st.ok()) {
    log::Warning("{}", st.error().message);
    return;
  }
  if (!log_.Map(bpf_map__fd(skel_->maps.gn_kw_log), sizeof(gn_kwork) * ncpus_ * GN_KW_LOG) ||
      !heads_.Map(bpf_map__fd(skel_->maps.gn_kw_heads), sizeof(gn_kwork_head) * ncpus_, /*writable=*/true)) {
    Stop();
    Disable(fmt::format("failed to map the kwork log: {}", std::strerror(errno)));
    return;
  }
  cursors_.assign(ncpus_, 0);
}

uint64_t KworkCollector::unpaired() const {
  if (!heads_.addr) return 0;
  const auto* heads = static_cast<const gn_kwork_head*>(heads_.addr);
  uint64_t n = 0;
  for (uint32_t cpu = 0; cpu < ncpus_; ++cpu) n += __atomic_load_n(&heads[cpu].unpaired, __ATOMIC_RELAXED);
  return n;
}

void KworkCollector::AddMapLosses(std::vector<model::MapLoss>& out) const {
  if (!heads_.addr) return;
  AddMapLoss(out, name(), "gn_kw_log", lost_, model::MapLossKind::kOverwritten);
  AddMapLoss(out, name(), "gn_kw_open", unpaired(), model::MapLossKind::kUnpaired);
}

static_assert(KworkCollector::kEntriesPerCpu == GN_KW_LOG);

// static
model::KernelWork KworkCollector::Decode(const gn_kwork& e) {
  model::KernelWork w;
  w.begin = e.begin;
  w.end = std::max(e.end, e.begin);
  w.func = e.func;
  w.callsite = e.callsite;
  w.targets = e.targets;
  w.tid = static_cast<int32_t>(e.tid);
  w.tgid = static_cast<int32_t>(e.tgid);
  w.cpu = e.cpu;
  w.kind = static_cast<model::KernelWorkKind>(e.kind);
  w.csd = e.csd;
  w.context = (e.flags & GN_KW_IN_HARDIRQ)   ? model::KernelWorkContext::kHardirq
              : (e.flags & GN_KW_IN_SOFTIRQ) ? model::KernelWorkContext::kSoftirq
                                             : model::KernelWorkContext::kTask;
  return w;
}

uint64_t KworkCollector::Drain(std::vector<model::KernelWork>* out) {
  if (!log_.addr || !heads_.addr || report_.state == model::CollectorState::kDisabled) return 0;
  uint64_t most = 0;
  auto* heads = static_cast<gn_kwork_head*>(heads_.addr);
  const auto* log = static_cast<const gn_kwork*>(log_.addr);
  for (uint32_t cpu = 0; cpu < ncpus_; ++cpu) {
    uint64_t& cursor = cursors_[cpu];
    uint64_t next = __atomic_load_n(&heads[cpu].next, __ATOMIC_ACQUIRE);
    if (next > cursor) most = std::max(most, next - cursor);
    ReadSeqRing(log + static_cast<size_t>(cpu) * GN_KW_LOG, GN_KW_LOG, next, cursor, lost_, [&](const gn_kwork& e) {
      if (e.kind < GN_KW_KINDS) out->push_back(Decode(e));
    });
    __atomic_store_n(&heads[cpu].read, cursor, __ATOMIC_RELAXED);
  }
  return most;
}

}  // namespace gpunoise::collect
