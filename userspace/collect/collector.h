// One eBPF collector (one bpf/<name>.bpf.c): loaded, attached and reported on
// independently of the others (DESIGN.md decision 4).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collect/tracepoint_catalog.h"
#include "common/result.h"
#include "model/session_info.h"

extern "C" {
#include "bpf/record.h"
}

struct bpf_link;
struct bpf_object;
struct bpf_map;
struct bpf_program;

namespace gpunoise::collect {

enum class AttachMode {
  kPreferBtf,    // tp_btf where the kernel's BTF describes the tracepoint
  kClassicOnly,  // classic tracefs tracepoints only (older kernels; tests)
};

struct FilterOptions {
  std::vector<int> cpus;   // empty: all CPUs
  std::vector<int> pids;   // processes (tgids); empty: all
  uint64_t cgroup_id = 0;  // cgroup-v2 directory inode; 0: all
  int cgroup_level = 0;
  std::string cgroup_path;  // that directory (its threads seed the classic twins' tid set)
  bool follow_forks = true;
};

struct CollectorContext {
  const TracepointCatalog* catalog = nullptr;
  int rings_outer_fd = -1;
  int gate_fd = -1;  // RingTransport::gate_map_fd(); -1: each object keeps its own, open gate
  int lost_fd = -1;  // RingTransport::lost_map_fd(); -1: each object counts into its own
  int cpu_ctx_fd = -1;  // RingTransport::cpu_context_map_fd(); -1: each object keeps its own
  int doorbell_fd = -1;  // RingTransport::doorbell_map_fd(); -1: each object rings its own, unread
  uint64_t wakeup_bytes = 0;
  AttachMode attach_mode = AttachMode::kPreferBtf;
  FilterOptions filters;
};

struct BpfLinkDeleter {
  void operator()(bpf_link* link) const;
};
using BpfLinkPtr = std::unique_ptr<bpf_link, BpfLinkDeleter>;

class Collector {
 public:
  virtual ~Collector() = default;

  virtual std::string_view name() const = 0;

  // Loads and attaches. Never fails the tool: a collector that cannot run
  // records why in its report (state kDisabled) and the others go on.
  virtual void Start(const CollectorContext& context) = 0;

  // Appends this collector's in-kernel map losses: aggregate maps that
  // refused updates, per-CPU logs whose records were overwritten before a
  // drain, callbacks left unpaired (model::MapLossKind). Ring-full loss is
  // not here: RingTransport counts it per CPU and record kind for every
  // collector.
  virtual void AddMapLosses(std::vector<model::MapLoss>& /*out*/) const {}

  // Program runs the kernel skipped because one of ours was already running
  // on that CPU (bpf_prog_info.recursion_misses): events lost before any ring.
  uint64_t RecursionMisses() const;
  // The same per program, for the programs that missed runs.
  std::vector<model::ProgramLoss> ProgramMisses() const;
  // Time the kernel spent in this collector's programs, and how many runs
  // (bpf_prog_info; zero unless kernel.bpf_stats_enabled is 1).
  uint64_t ProgramRunTimeNs() const;
  uint64_t ProgramRunCount() const;

  // Detaches every program now (also done by the destructor).
  virtual void Stop();

  // The program that flushes this collector's per-CPU record batches
  // (bpf/batch.bpf.h, collect/batch_flush.h); -1 when it does not batch.
  virtual int batch_flush_fd() const { return -1; }
  // Its batches' stream (enum gn_batch_stream in bpf/record.h).
  virtual uint32_t batch_stream() const { return 0; }
  // Its per-CPU batch states (gn_batch_words, GN_MAX_CPUS of them), mapped
  // from its .bss; nullptr when it does not batch.
  virtual const gn_batch_word* batch_words() const { return nullptr; }
  // Once its programs are detached, writes to the rings what the kernel side
  // still held back (the irq collector: softirq entries still open).
  // Returns how many of `cpus` it failed on.
  virtual uint64_t FlushHeldRecords(std::span<const int> /*cpus*/) { return 0; }

  const model::CollectorReport& report() const { return report_; }
  model::CollectorReport& mutable_report() { return report_; }

 protected:
  explicit Collector(std::string name) { report_.name = std::move(name); }

  // Chooses one program per tracepoint (tp_btf, else classic, else missing),
  // loads the object through `load`, and attaches what was chosen.
  // `required` names events without which the collector is useless; if any is
  // missing the collector is disabled.
  // `wanted` (optional) leaves out tracepoints the user did not ask for.
  Status SelectLoadAttach(bpf_object* obj, const CollectorContext& context,
                          std::span<const std::string_view> required,
                          const std::function<int()>& load,
                          const std::function<bool(std::string_view event)>& wanted = nullptr);

  void Disable(std::string reason);

  model::CollectorReport report_;
  std::vector<BpfLinkPtr> links_;
  // Attached programs, for statistics: their fds (owned by the skeleton) and
  // full names (the kernel keeps only 15 characters).
  void TrackProgram(bpf_program* prog);
  std::vector<int> prog_fds_;
  std::vector<std::string> prog_names_;
};

// Starts the collectors one after another, in order, with freed large
// blocks kept in the heap meanwhile (ScopedHeapReuse): each object's load
// reads and parses the kernel's BTF again, since libbpf 1.1 has no way to
// share one parse between objects (docs/performance.md, "Start-up").
// Starting them on threads of their own was measured too: on this 2-CPU VM
// under load it cost 4% more CPU and no start-up time, so it was not kept.
void StartCollectors(std::span<Collector* const> collectors, const CollectorContext& context);
void StartCollectors(std::span<const std::unique_ptr<Collector>> collectors,
                     const CollectorContext& context);

// Stops every collector at once (each detaches its links concurrently): a
// session's end waits for one round of kernel grace periods, not one per link.
void StopCollectors(std::span<Collector* const> collectors);
void StopCollectors(std::span<const std::unique_ptr<Collector>> collectors);

// Hands the transport's rings, gate, loss counters and CPU contexts
// (bpf/common.bpf.h) to a collector object before it is loaded. False, with
// errno set, when libbpf refuses.
// The maps of bpf/common.bpf.h every collector object shares; an fd of -1
// leaves the object its own map.
struct SharedMaps {
  bpf_map* rings;
  bpf_map* gate;
  bpf_map* lost;
  bpf_map* cpu_ctx;
  bpf_map* doorbell = nullptr;  // bpf/doorbell.bpf.h; null: the object has none
};
bool ShareTransportMaps(const SharedMaps& maps, const CollectorContext& context);

// Shares the recording's doorbell (bpf/doorbell.bpf.h) with an object that
// shares nothing else of the transport (the span logs), before load; a failure is only warned about: the drain's
// guard then learns of a full log from a late turn alone.
void ShareDoorbell(bpf_map* doorbell, const CollectorContext& context, std::string_view collector);

template <typename Skel>
bool ShareTransport(Skel* skel, const CollectorContext& context) {
  return ShareTransportMaps({skel->maps.gn_rings, skel->maps.gn_gate, skel->maps.gn_lost_kinds,
                             skel->maps.gn_cpu_ctx, skel->maps.gn_doorbell},
                            context);
}

// Fills an object's CPU filter (bpf/cpu_filter.bpf.h: a flag and a mask of
// 64-CPU words in rodata) with `cpus`; none: no filter. CPUs past the mask
// are left out, as the programs never allow them.
template <typename Word, size_t N>
void SetCpuFilter(const std::vector<int>& cpus, bool& filter, Word (&mask)[N]) {
  if (cpus.empty()) return;
  filter = true;
  for (int cpu : cpus)
    if (cpu >= 0 && static_cast<size_t>(cpu) < N * 64) mask[cpu / 64] |= Word{1} << (cpu % 64);
}

// Sets the rodata every collector object shares (bpf/common.bpf.h).
template <typename Skel>
void ApplyCommonConfig(Skel* skel, const CollectorContext& context) {
  skel->rodata->gn_wakeup_bytes = context.wakeup_bytes;
  SetCpuFilter(context.filters.cpus, skel->rodata->gn_filter_cpus, skel->rodata->gn_cpu_mask);
}

// The sum of a per-CPU `__u64 name[GN_MAX_CPUS]` counter in a skeleton's bss.
template <typename T, size_t N>
uint64_t SumPerCpuCounter(const T (&counter)[N]) {
  uint64_t total = 0;
  for (size_t cpu = 0; cpu < N; ++cpu) total += __atomic_load_n(&counter[cpu], __ATOMIC_RELAXED);
  return total;
}

// Appends {collector, map, count, kind} when `count` is not zero.
void AddMapLoss(std::vector<model::MapLoss>& out, std::string_view collector, std::string_view map,
                uint64_t count, model::MapLossKind kind);
// The same for a full aggregate map (updates refused).
inline void AddFullMap(std::vector<model::MapLoss>& out, std::string_view collector, std::string_view map,
                       uint64_t full) {
  AddMapLoss(out, collector, map, full, model::MapLossKind::kFull);
}

}  // namespace gpunoise::collect
