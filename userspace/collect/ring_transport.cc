#include "collect/ring_transport.h"

#include "collect/collector.h"
#include "common/fork_join.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

extern "C" {
#include "bpf/record.h"
#include "collect/records.h"
}

namespace gpunoise::collect {
namespace {

uint64_t RoundUpPow2(uint64_t v) {
  uint64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

Status SetGate(int fd, uint32_t closed) {
  uint32_t key = 0;
  if (bpf_map_update_elem(fd, &key, &closed, BPF_ANY) != 0)
    return MakeError("failed to {} the recording gate: {}", closed ? "close" : "open", std::strerror(errno));
  return OkStatus();
}

}  // namespace

Result<std::unique_ptr<RingTransport>> RingTransport::Create(const std::vector<int>& cpus,
                                                             uint64_t bytes_per_cpu,
                                                             RecordHandler handler) {
  std::unique_ptr<RingTransport> t(new RingTransport());
  t->handler_ = std::move(handler);
  uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  t->bytes_per_cpu_ = RoundUpPow2(std::max(bytes_per_cpu, page));
  if (t->bytes_per_cpu_ > (1ull << 30)) return MakeError("ring buffer size per CPU is above 1 GiB");
  if (cpus.empty()) return MakeError("no CPUs to trace");

  for (int cpu : cpus) {
    if (cpu < 0 || cpu >= GN_MAX_CPUS) return MakeError("CPU {} is beyond gpunoise's limit of {}", cpu, GN_MAX_CPUS);
    int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "gn_ring", 0, 0,
                            static_cast<uint32_t>(t->bytes_per_cpu_), nullptr);
    if (fd < 0)
      return MakeError("failed to create the ring buffer for CPU {} ({} bytes): {}", cpu,
                       t->bytes_per_cpu_, std::strerror(errno));
    t->ring_fds_.emplace_back(fd);
  }

  LIBBPF_OPTS(bpf_map_create_opts, opts, .inner_map_fd = static_cast<__u32>(t->ring_fds_[0].get()));
  int outer = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "gn_rings", sizeof(uint32_t),
                             sizeof(uint32_t), GN_MAX_CPUS, &opts);
  if (outer < 0) return MakeError("failed to create the ring map: {}", std::strerror(errno));
  t->outer_fd_.Reset(outer);
  int gate = bpf_map_create(BPF_MAP_TYPE_ARRAY, "gn_gate", sizeof(uint32_t), sizeof(uint32_t), 1, nullptr);
  if (gate < 0) return MakeError("failed to create the recording gate map: {}", std::strerror(errno));
  t->gate_fd_.Reset(gate);
  int lost = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "gn_lost_kinds", sizeof(uint32_t),
                            sizeof(uint64_t), GN_REC_KIND_MAX, nullptr);
  if (lost < 0) return MakeError("failed to create the loss counter map: {}", std::strerror(errno));
  t->lost_fd_.Reset(lost);
  int ctx = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "gn_cpu_ctx", sizeof(uint32_t), sizeof(gn_cpu_context), 1, nullptr);
  if (ctx < 0) return MakeError("failed to create the CPU context map: {}", std::strerror(errno));
  t->cpu_ctx_fd_.Reset(ctx);
  int doorbell = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "gn_doorbell", 0, 0, static_cast<uint32_t>(page), nullptr);
  if (doorbell < 0) return MakeError("failed to create the drain's doorbell map: {}", std::strerror(errno));
  t->doorbell_fd_.Reset(doorbell);
  t->possible_cpus_ = libbpf_num_possible_cpus();
  if (t->possible_cpus_ <= 0) return MakeError("failed to count the possible CPUs: {}", std::strerror(-t->possible_cpus_));

  t->epoll_fd_.Reset(::epoll_create1(EPOLL_CLOEXEC));
  if (!t->epoll_fd_.valid()) return MakeError("failed to create an epoll instance: {}", std::strerror(errno));
  for (size_t i = 0; i < cpus.size(); ++i) {
    uint32_t key = static_cast<uint32_t>(cpus[i]);
    uint32_t value = static_cast<uint32_t>(t->ring_fds_[i].get());
    if (bpf_map_update_elem(outer, &key, &value, BPF_ANY) != 0)
      return MakeError("failed to register the ring of CPU {}: {}", cpus[i], std::strerror(errno));
    auto context = std::make_unique<CpuContext>();
    context->self = t.get();
    context->cpu = key;
    // The kernel maps the consumer page, then the producer page, at the
    // start of a ring's fd; read-only, any part may be mapped.
    void* pages = ::mmap(nullptr, 2 * page, PROT_READ, MAP_SHARED, t->ring_fds_[i].get(), 0);
    if (pages != MAP_FAILED) {
      context->consumer_pos = static_cast<const uint64_t*>(pages);
      context->producer_pos = reinterpret_cast<const uint64_t*>(static_cast<const uint8_t*>(pages) + page);
    }
    t->contexts_.push_back(std::move(context));
    ring_buffer* rb = ring_buffer__new(t->ring_fds_[i].get(), &RingTransport::OnRecord,
                                       t->contexts_.back().get(), nullptr);
    if (!rb) return MakeError("failed to open the ring buffer consumer of CPU {}: {}", cpus[i], std::strerror(errno));
    t->consumers_.emplace_back(rb);
    // Edge-triggered on the ring itself: a ring is readable whenever it
    // holds a record, so a level-triggered watch (libbpf's own epoll fd)
    // wakes the caller for every record under load and its loop spins
    // (71% of a CPU recording a pipe storm here). An edge comes only with
    // the kernel's wakeups: the producers' wakeup mark
    // (GN_WAKEUP_FRACTION), else the caller's drain timer.
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLET;
    if (::epoll_ctl(t->epoll_fd_.get(), EPOLL_CTL_ADD, t->ring_fds_[i].get(), &ev) != 0)
      return MakeError("failed to watch the ring of CPU {}: {}", cpus[i], std::strerror(errno));
  }
  return t;
}

void RingTransport::ShareWith(CollectorContext* context) const {
  context->rings_outer_fd = outer_fd_.get();
  context->gate_fd = gate_fd_.get();
  context->lost_fd = lost_fd_.get();
  context->cpu_ctx_fd = cpu_ctx_fd_.get();
  context->doorbell_fd = doorbell_fd_.get();
  context->wakeup_bytes = wakeup_bytes();
}

Status RingTransport::Pause() { return SetGate(gate_fd_.get(), 1); }
Status RingTransport::Resume() { return SetGate(gate_fd_.get(), 0); }

std::vector<std::vector<uint64_t>> RingTransport::LostByCpuAndKind() const {
  auto ncpus = static_cast<size_t>(possible_cpus_);
  std::vector<std::vector<uint64_t>> lost(ncpus, std::vector<uint64_t>(GN_REC_KIND_MAX, 0));
  // One batch read of every kind (this runs on every drain); a per-CPU
  // array returns one value per possible CPU for each key.
  std::vector<uint32_t> keys(GN_REC_KIND_MAX);
  std::vector<uint64_t> values(ncpus * GN_REC_KIND_MAX);
  uint32_t count = GN_REC_KIND_MAX, out_batch = 0;
  int err = bpf_map_lookup_batch(lost_fd_.get(), nullptr, &out_batch, keys.data(), values.data(), &count, nullptr);
  if (err != 0 && errno != ENOENT) {
    // Kernels without batch ops on arrays: one key at a time.
    std::vector<uint64_t> one(ncpus);
    for (uint32_t kind = 0; kind < GN_REC_KIND_MAX; ++kind) {
      if (bpf_map_lookup_elem(lost_fd_.get(), &kind, one.data()) != 0) return {};
      for (size_t cpu = 0; cpu < ncpus; ++cpu) lost[cpu][kind] = one[cpu];
    }
    return lost;
  }
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t kind = keys[i];
    // The total's slot is not a kind: callers sum the kinds themselves.
    if (kind >= GN_REC_KIND_MAX || kind == GN_LOST_TOTAL_KEY) continue;
    for (size_t cpu = 0; cpu < ncpus; ++cpu) lost[cpu][kind] = values[i * ncpus + cpu];
  }
  return lost;
}

std::vector<uint64_t> RingTransport::LostPerCpu() const {
  // Every drain asks: one key (the producers keep the total beside the
  // kinds), where the batch by kind copies 256 of them (120 us a read here).
  std::vector<uint64_t> per_cpu(static_cast<size_t>(possible_cpus_), 0);
  uint32_t key = GN_LOST_TOTAL_KEY;
  if (bpf_map_lookup_elem(lost_fd_.get(), &key, per_cpu.data()) != 0) std::fill(per_cpu.begin(), per_cpu.end(), 0);
  return per_cpu;
}

void RingTransport::ConsumerDeleter::operator()(ring_buffer* rb) const { ring_buffer__free(rb); }

RingTransport::~RingTransport() = default;

uint64_t RingTransport::wakeup_bytes() const { return bytes_per_cpu_ / GN_WAKEUP_FRACTION; }

int RingTransport::wait_fd() const { return epoll_fd_.get(); }

// A negative return makes libbpf store the consumer position past this
// record and stop reading the ring; it is how a drain ends at its budget.
constexpr int kBudgetSpent = -EAGAIN;

int RingTransport::OnRecord(void* ctx, void* data, size_t size) {
  auto* c = static_cast<CpuContext*>(ctx);
  const std::span<const uint8_t> record(static_cast<const uint8_t*>(data), size);
  c->self->handler_(c->cpu, record);
  // The budget counts events: a batch spends what it holds.
  const uint64_t events = EventsInRingRecord(record);
  c->events += events;
  if (!c->budget) return 0;
  if (events >= c->budget) {
    c->budget = 0;
    return kBudgetSpent;
  }
  c->budget -= events;
  return 0;
}

void RingTransport::TakeWakeups() {
  // Edge-triggered items leave the ready list when reported; until then
  // the epoll fd stays readable for whoever watches it.
  epoll_event events[64];
  while (::epoll_wait(epoll_fd_.get(), events, 64, 0) == 64) {
  }
}

RingTransport::CpuContext::~CpuContext() {
  if (consumer_pos) ::munmap(const_cast<uint64_t*>(consumer_pos), 2 * static_cast<size_t>(::sysconf(_SC_PAGESIZE)));
}

RingTransport::LaneRead RingTransport::ReadRings(size_t first, size_t step, uint64_t max_records_per_cpu) {
  LaneRead read;
  for (size_t i = first; i < consumers_.size(); i += step) {
    contexts_[i]->budget = max_records_per_cpu;
    contexts_[i]->events = 0;
    int n = ring_buffer__consume(consumers_[i].get());
    read.events += contexts_[i]->events;
    if (n == kBudgetSpent) {
      read.backlog = true;
      continue;
    }
    if (n < 0) {
      read.error = MakeError("failed to read the ring buffer of CPU {}: {}", contexts_[i]->cpu, std::strerror(-n));
      break;
    }
  }
  return read;
}

Result<uint64_t> RingTransport::DrainAll(uint64_t max_records_per_cpu, ForkJoin* lanes) {
  // Before reading: a wakeup after this point is for records this drain
  // may not see, and brings the caller back.
  TakeWakeups();
  backlog_ = false;
  fullest_ring_bytes_ = most_produced_bytes_ = 0;
  for (auto& c : contexts_) {
    if (!c->producer_pos) continue;
    const uint64_t produced = __atomic_load_n(c->producer_pos, __ATOMIC_ACQUIRE);
    const uint64_t consumed = __atomic_load_n(c->consumer_pos, __ATOMIC_ACQUIRE);
    fullest_ring_bytes_ = std::max(fullest_ring_bytes_, produced - std::min(produced, consumed));
    most_produced_bytes_ = std::max(most_produced_bytes_, produced - std::min(produced, c->producer_seen));
    c->producer_seen = produced;
  }
  const size_t k = lanes ? lanes->lanes() : 1;
  std::vector<LaneRead> reads(k);
  if (k == 1) reads[0] = ReadRings(0, 1, max_records_per_cpu);
  else lanes->Run([&](size_t lane) { reads[lane] = ReadRings(lane, k, max_records_per_cpu); });
  uint64_t total = 0;
  for (LaneRead& r : reads) {
    if (r.error) return *r.error;
    total += r.events;
    backlog_ |= r.backlog;
  }
  return total;
}

}  // namespace gpunoise::collect
