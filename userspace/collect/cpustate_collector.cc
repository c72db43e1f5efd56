#include "collect/cpustate_collector.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "collect/seq_ring.h"
#include "common/log.h"
#include "common/strings.h"

extern "C" {
#include "bpf/cpustate.h"
}
#include "cpustate.skel.h"

namespace gpunoise::collect {

static_assert(sizeof(gn_cpustate) == 32);
static_assert(offsetof(gn_cpustate, value) == 24);
static_assert(sizeof(gn_cpustate_head) == 64);
static_assert(sizeof(gn_numa) == 64);
static_assert(offsetof(gn_numa, tid) == 32);
static_assert((GN_CS_LOG & (GN_CS_LOG - 1)) == 0);
static_assert((GN_NB_LOG & (GN_NB_LOG - 1)) == 0);
static_assert(CpustateCollector::kEntriesPerCpu == GN_CS_LOG);

CpustateCollector::CpustateCollector(bool idle) : Collector("cpustate"), idle_(idle) {}

CpustateCollector::~CpustateCollector() {
  Stop();
  if (skel_) cpustate_bpf__destroy(skel_);
}

void CpustateCollector::Start(const CollectorContext& context) {
  int possible = libbpf_num_possible_cpus();
  if (possible <= 0) {
    Disable("failed to count the possible CPUs");
    return;
  }
  ncpus_ = static_cast<uint32_t>(possible);
  skel_ = cpustate_bpf__open();
  if (!skel_) {
    Disable(fmt::format("failed to open the eBPF object: {}", std::strerror(errno)));
    return;
  }
  bpf_map__set_max_entries(skel_->maps.gn_cs_log, ncpus_ * GN_CS_LOG);
  bpf_map__set_max_entries(skel_->maps.gn_cs_heads, ncpus_);
  SetCpuFilter(context.filters.cpus, skel_->rodata->gn_cs_filter_cpus, skel_->rodata->gn_cs_cpu_mask);
  auto wanted = [this](std::string_view event) { return idle_ || event != "cpu_idle"; };
  ShareDoorbell(skel_->maps.gn_doorbell, context, name());
  Status st = SelectLoadAttach(skel_->obj, context, {}, [&] { return cpustate_bpf__load(skel_); }, wanted);
  if (!st.ok()) {
    log::Warning("{}", st.error().message);
    return;
  }
  if (!log_.Map(bpf_map__fd(skel_->maps.gn_cs_log), sizeof(gn_cpustate) * ncpus_ * GN_CS_LOG) ||
      !heads_.Map(bpf_map__fd(skel_->maps.gn_cs_heads), sizeof(gn_cpustate_head) * ncpus_, /*writable=*/true)) {
    Stop();
    Disable(fmt::format("failed to map the cpustate log: {}", std::strerror(errno)));
    return;
  }
  cursors_.assign(ncpus_, 0);
}

bool CpustateCollector::Attached(std::string_view event) const {
  if (report_.state == model::CollectorState::kDisabled || !skel_) return false;
  if (event == "cpu_idle" && !idle_) return false;
  for (const auto& m : report_.missing_events)
    if (m == event || EndsWith(m, "/" + std::string(event)) || StartsWith(m, std::string(event) + " ") ||
        m.find("/" + std::string(event) + " ") != std::string::npos)
      return false;
  return true;
}

uint64_t CpustateCollector::unpaired() const {
  if (!heads_.addr) return 0;
  const auto* heads = static_cast<const gn_cpustate_head*>(heads_.addr);
  uint64_t n = 0;
  for (uint32_t cpu = 0; cpu < ncpus_; ++cpu) n += __atomic_load_n(&heads[cpu].unpaired, __ATOMIC_RELAXED);
  return n;
}

void CpustateCollector::AddMapLosses(std::vector<model::MapLoss>& out) const {
  if (!heads_.addr) return;
  AddMapLoss(out, name(), "gn_cs_log", lost_, model::MapLossKind::kOverwritten);
  AddMapLoss(out, name(), "gn_nb_log", numa_lost_, model::MapLossKind::kOverwritten);
}

uint64_t CpustateCollector::Drain(std::vector<model::CpuStateEvent>* out) {
  if (!log_.addr || !heads_.addr || report_.state == model::CollectorState::kDisabled) return 0;
  uint64_t most = 0;
  auto* heads = static_cast<gn_cpustate_head*>(heads_.addr);
  const auto* log = static_cast<const gn_cpustate*>(log_.addr);
  for (uint32_t cpu = 0; cpu < ncpus_; ++cpu) {
    uint64_t& cursor = cursors_[cpu];
    uint64_t next = __atomic_load_n(&heads[cpu].next, __ATOMIC_ACQUIRE);
    if (next > cursor) most = std::max(most, next - cursor);
    ReadSeqRing(log + static_cast<size_t>(cpu) * GN_CS_LOG, GN_CS_LOG, next, cursor, lost_, [&](const gn_cpustate& e) {
      if (e.kind < GN_CS_KINDS)
        out->push_back({e.begin, std::max(e.end, e.begin), e.value, e.cpu, static_cast<model::CpuStateKind>(e.kind)});
    });
    __atomic_store_n(&heads[cpu].read, cursor, __ATOMIC_RELAXED);
  }
  return most;
}

void CpustateCollector::DrainNuma(std::vector<model::NumaEvent>* out) {
  if (!skel_ || !skel_->bss || report_.state == model::CollectorState::kDisabled) return;
  auto* bss = skel_->bss;
  uint64_t next = __atomic_load_n(&bss->gn_nb_next, __ATOMIC_ACQUIRE);
  ReadSeqRing(bss->gn_nb_log, GN_NB_LOG, next, numa_cursor_, numa_lost_, [&](const gn_numa& e) {
    if (e.kind >= GN_NB_KINDS) return;
    model::NumaEvent n;
    n.ts = e.ts;
    n.tid = static_cast<int32_t>(e.tid);
    n.other_tid = static_cast<int32_t>(e.other_tid);
    n.src_cpu = e.src_cpu;
    n.dst_cpu = e.dst_cpu;
    n.src_nid = e.src_nid;
    n.dst_nid = e.dst_nid;
    n.succeeded = e.succeeded;
    n.failed = e.failed;
    n.reason = e.reason;
    n.cpu = e.cpu;
    n.kind = static_cast<model::NumaEventKind>(e.kind);
    out->push_back(n);
  });
}

}  // namespace gpunoise::collect
