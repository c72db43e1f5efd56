#include "collect/irqtime_collector.h"

#include <bpf/bpf.h>

#include <cerrno>
#include <cstring>

#include "collect/focus_rows.h"
#include "collect/percpu_maps.h"
#include "common/log.h"
#include "irqtime.skel.h"

extern "C" {
#include "bpf/irqtime.h"
}

namespace gpunoise::collect {

static_assert(sizeof(gn_softirq_time) == 2 * GN_NR_SOFTIRQS * 8);
static_assert(sizeof(gn_hardirq_time) == 16);
static_assert(sizeof(gn_vector_time) == 2 * GN_NR_VECTOR_KINDS * 8);
static_assert(sizeof(gn_focus_irq) == 32);
static_assert(sizeof(gn_irq_cpu) == 56);
static_assert(GN_NR_SOFTIRQS == model::kNumSoftirqVecs);
static_assert(GN_NR_VECTOR_KINDS == model::kNumVectorKinds);

IrqtimeCollector::IrqtimeCollector(int focus_map_fd) : Collector("irqtime"), focus_map_fd_(focus_map_fd) {}

IrqtimeCollector::~IrqtimeCollector() {
  Stop();
  if (skel_) irqtime_bpf__destroy(skel_);
}

void IrqtimeCollector::Start(const CollectorContext& context) {
  skel_ = irqtime_bpf__open();
  if (!skel_) {
    Disable(fmt::format("failed to open the eBPF object: {}", std::strerror(errno)));
    return;
  }
  if (bpf_map__reuse_fd(skel_->maps.gn_focus, focus_map_fd_) != 0) {
    Disable(fmt::format("failed to share the focus map: {}", std::strerror(errno)));
    return;
  }
  static constexpr std::string_view kRequired[] = {"softirq_entry", "softirq_exit"};
  Status st = SelectLoadAttach(skel_->obj, context, kRequired, [&] { return irqtime_bpf__load(skel_); });
  if (!st.ok()) log::Warning("{}", st.error().message);
}

void IrqtimeCollector::AddMapLosses(std::vector<model::MapLoss>& out) const {
  if (skel_ && skel_->bss) AddFullMap(out, name(), "gn_hardirq_time", SumPerCpuCounter(skel_->bss->gn_irq_full));
}

void IrqtimeCollector::SetFocusEnabled(bool enabled) {
  if (skel_ && skel_->bss) __atomic_store_n(&skel_->bss->gn_focus_enabled, enabled ? 1u : 0u, __ATOMIC_RELAXED);
}

int IrqtimeCollector::irq_state_map_fd() const {
  if (!skel_ || report_.state == model::CollectorState::kDisabled) return -1;
  return bpf_map__fd(skel_->maps.gn_irq_cpu);
}

void IrqtimeCollector::Read(model::AggregateSnapshot* out) const {
  if (!skel_ || report_.state == model::CollectorState::kDisabled) return;
  auto soft = ReadPerCpuArray<gn_softirq_time>(skel_->maps.gn_softirq_time, 0);
  for (size_t cpu = 0; cpu < soft.size(); ++cpu) {
    model::SoftirqCpuCounters c;
    c.cpu = static_cast<uint32_t>(cpu);
    bool any = false;
    for (uint32_t v = 0; v < GN_NR_SOFTIRQS; ++v) {
      c.count[v] = soft[cpu].count[v];
      c.ns[v] = soft[cpu].ns[v];
      any = any || c.count[v];
    }
    if (any) out->softirqs.push_back(c);
  }
  auto vec = ReadPerCpuArray<gn_vector_time>(skel_->maps.gn_vector_time, 0);
  for (size_t cpu = 0; cpu < vec.size(); ++cpu) {
    model::VectorCpuCounters c;
    c.cpu = static_cast<uint32_t>(cpu);
    bool any = false;
    for (uint32_t v = 0; v < GN_NR_VECTOR_KINDS; ++v) {
      c.count[v] = vec[cpu].count[v];
      c.ns[v] = vec[cpu].ns[v];
      any = any || c.count[v];
    }
    if (any) out->vectors.push_back(c);
  }
  std::vector<gn_hardirq_time> values;
  for (int32_t irq : MapKeys<int32_t>(skel_->maps.gn_hardirq_time)) {
    if (!ReadPerCpuHash(skel_->maps.gn_hardirq_time, irq, &values)) continue;
    for (size_t cpu = 0; cpu < values.size(); ++cpu)
      if (values[cpu].count)
        out->hardirqs.push_back({static_cast<uint32_t>(cpu), irq, values[cpu].count, values[cpu].ns});
  }
  auto focus = ReadPerCpuArray<gn_focus_irq>(skel_->maps.gn_focus_irq, 0);
  for (size_t cpu = 0; cpu < focus.size(); ++cpu) {
    const gn_focus_irq& f = focus[cpu];
    if (!f.hardirq_count && !f.softirq_count) continue;
    model::FocusCpuCounters* c = &FocusRowOf(out->focus, static_cast<uint32_t>(cpu));
    c->hardirq_count = f.hardirq_count;
    c->hardirq_ns = f.hardirq_ns;
    c->softirq_count = f.softirq_count;
    c->softirq_ns = f.softirq_ns;
  }
}

}  // namespace gpunoise::collect
