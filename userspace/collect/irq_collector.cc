#include "collect/irq_collector.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "common/log.h"
#include "common/strings.h"
#include "collect/records.h"
#include "irq.skel.h"

namespace gpunoise::collect {

IrqCollector::IrqCollector(bool hardirq, bool softirq, bool batching, uint32_t netrx_sample_every)
    : Collector("irq"),
      hardirq_(hardirq),
      softirq_(softirq),
      batching_(batching),
      netrx_sample_every_(netrx_sample_every) {}

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
  skel_->rodata->gn_softirq_defer = defers_softirq_entries();
  skel_->rodata->gn_netrx_sample_every = softirq_ ? netrx_sample_every_ : 0;
  bpf_program__set_autoload(skel_->progs.gn_softirq_flush, defers_softirq_entries());
  cpu_ctx_fd_ = context.cpu_ctx_fd;
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

namespace {

std::vector<gn_cpu_context> ReadContexts(int fd) {
  int ncpus = libbpf_num_possible_cpus();
  std::vector<gn_cpu_context> contexts(ncpus > 0 ? static_cast<size_t>(ncpus) : 0);
  uint32_t zero = 0;
  if (contexts.empty() || fd < 0 || bpf_map_lookup_elem(fd, &zero, contexts.data()) != 0) contexts.clear();
  return contexts;
}

}  // namespace

int IrqCollector::ContextFd() const {
  if (cpu_ctx_fd_ >= 0) return cpu_ctx_fd_;
  return skel_ ? bpf_map__fd(skel_->maps.gn_cpu_ctx) : -1;
}

std::vector<uint64_t> IrqCollector::UntimedNetRx() const {
  std::vector<uint64_t> out;
  if (!softirq_ || !skel_ || report_.state == model::CollectorState::kDisabled) return out;
  for (const gn_cpu_context& c : ReadContexts(ContextFd())) out.push_back(c.netrx_untimed);
  return out;
}

std::vector<model::SoftirqCounts> IrqCollector::SoftirqEntryRuns() const {
  std::vector<model::SoftirqCounts> out;
  if (!softirq_ || !skel_ || report_.state == model::CollectorState::kDisabled) return out;
  int ncpus = libbpf_num_possible_cpus();
  std::vector<gn_softirq_cpu> per_cpu(ncpus > 0 ? static_cast<size_t>(ncpus) : 0);
  uint32_t zero = 0;
  if (per_cpu.empty() || bpf_map_lookup_elem(bpf_map__fd(skel_->maps.gn_softirq_cpu), &zero, per_cpu.data()) != 0)
    return out;
  out.resize(per_cpu.size());
  for (size_t cpu = 0; cpu < per_cpu.size(); ++cpu)
    for (uint32_t vec = 0; vec < model::kNumSoftirqVecs; ++vec) out[cpu][vec] = per_cpu[cpu].entries[vec];
  return out;
}

uint64_t IrqCollector::FlushHeldRecords(std::span<const int> cpus) {
  if (!defers_softirq_entries() || !skel_ || report_.state == model::CollectorState::kDisabled) return 0;
  int prog = bpf_program__fd(skel_->progs.gn_softirq_flush);
  if (prog < 0) return 0;
  // One read says which CPUs hold an open entry: only those get the IPI.
  const std::vector<gn_cpu_context> contexts = ReadContexts(ContextFd());
  const bool known = !contexts.empty();
  uint64_t failed = 0;
  for (int cpu : cpus) {
    if (known && cpu >= 0 && static_cast<size_t>(cpu) < contexts.size() &&
        contexts[static_cast<size_t>(cpu)].softirq_open_ts == 0)
      continue;
    uint64_t args[1] = {0};  // a raw_tp test run takes arguments; the flush reads none
    LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof(args),
                .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = static_cast<__u32>(cpu));
    if (bpf_prog_test_run_opts(prog, &opts) != 0 || opts.retval != 1) ++failed;
  }
  return failed;
}

std::optional<std::string> IrqCollector::LookupIrqName(int32_t irq) const {
  if (!skel_ || report_.state == model::CollectorState::kDisabled) return std::nullopt;
  char name[GN_IRQ_NAME_LEN] = {};
  if (bpf_map__lookup_elem(skel_->maps.gn_irq_names, &irq, sizeof(irq), name, sizeof(name), 0) != 0)
    return std::nullopt;
  return std::string(FixedCString(name, sizeof(name)));
}

}  // namespace gpunoise::collect
