#include "collect/irq_collector.h"

#include <bpf/bpf.h>

#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "common/strings.h"
#include "collect/records.h"
#include "irq.skel.h"

namespace gpunoise::collect {

IrqCollector::IrqCollector(bool hardirq, bool softirq, bool batching)
    : Collector("irq"), hardirq_(hardirq), softirq_(softirq), batching_(batching) {}

int IrqCollector::batch_flush_fd() const {
  if (!batching_ || !skel_ || report_.state == model::CollectorState::kDisabled) return -1;
  return bpf_program__fd(skel_->progs.gn_irq_flush);
}

const gn_batch_word* IrqCollector::batch_words() const {
  if (batch_flush_fd() < 0 || !skel_->bss) return nullptr;
  return skel_->bss->gn_batch_words;
}

// Stop() only detaches: the maps (loss counters, IRQ names) stay readable
// until the collector is destroyed.
IrqCollector::~IrqCollector() {
  Stop();
  if (skel_) irq_bpf__destroy(skel_);
}

void IrqCollector::Start(const CollectorContext& context) {
  skel_ = irq_bpf__open();
  if (!skel_) {
    Disable(fmt::format("failed to open the eBPF object: {}", std::strerror(errno)));
    return;
  }
  ApplyCommonConfig(skel_, context);
  skel_->rodata->gn_batching = batching_;
  bpf_program__set_autoload(skel_->progs.gn_irq_flush, batching_);
  if (!ShareTransport(skel_, context)) {
    Disable(fmt::format("failed to share the ring buffers and gate: {}", std::strerror(errno)));
    return;
  }
  static constexpr std::string_view kSoftirqRequired[] = {"softirq_entry", "softirq_exit"};
  static constexpr std::string_view kHardirqRequired[] = {"irq_handler_entry", "irq_handler_exit"};
  std::span<const std::string_view> required;
  if (softirq_) required = kSoftirqRequired;
  else if (hardirq_) required = kHardirqRequired;
  auto wanted = [this](std::string_view event) {
    bool is_softirq = StartsWith(event, "softirq_");
    return is_softirq ? softirq_ : hardirq_;
  };
  Status st = SelectLoadAttach(skel_->obj, context, required, [&] { return irq_bpf__load(skel_); },
                               wanted);
  if (!st.ok()) log::Warning("{}", st.error().message);
}

std::optional<std::string> IrqCollector::LookupIrqName(int32_t irq) const {
  if (!skel_ || report_.state == model::CollectorState::kDisabled) return std::nullopt;
  char name[GN_IRQ_NAME_LEN] = {};
  if (bpf_map__lookup_elem(skel_->maps.gn_irq_names, &irq, sizeof(irq), name, sizeof(name), 0) != 0)
    return std::nullopt;
  return std::string(FixedCString(name, sizeof(name)));
}

}  // namespace gpunoise::collect
