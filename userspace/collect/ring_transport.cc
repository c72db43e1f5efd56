#include "collect/ring_transport.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern "C" {
#include "bpf/record.h"
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

  t->epoll_fd_.Reset(::epoll_create1(EPOLL_CLOEXEC));
  if (!t->epoll_fd_.valid()) return MakeError("failed to create an epoll instance: {}", std::strerror(errno));
  for (size_t i = 0; i < cpus.size(); ++i) {
    uint32_t key = static_cast<uint32_t>(cpus[i]);
    uint32_t value = static_cast<uint32_t>(t->ring_fds_[i].get());
    if (bpf_map_update_elem(outer, &key, &value, BPF_ANY) != 0)
      return MakeError("failed to register the ring of CPU {}: {}", cpus[i], std::strerror(errno));
    t->contexts_.push_back(std::make_unique<CpuContext>(CpuContext{t.get(), key}));
    ring_buffer* rb = ring_buffer__new(t->ring_fds_[i].get(), &RingTransport::OnRecord,
                                       t->contexts_.back().get(), nullptr);
    if (!rb) return MakeError("failed to open the ring buffer consumer of CPU {}: {}", cpus[i], std::strerror(errno));
    t->consumers_.emplace_back(rb);
    epoll_event ev{};
    ev.events = EPOLLIN;
    if (::epoll_ctl(t->epoll_fd_.get(), EPOLL_CTL_ADD, ring_buffer__epoll_fd(rb), &ev) != 0)
      return MakeError("failed to watch the ring of CPU {}: {}", cpus[i], std::strerror(errno));
  }
  return t;
}

Status RingTransport::Pause() { return SetGate(gate_fd_.get(), 1); }
Status RingTransport::Resume() { return SetGate(gate_fd_.get(), 0); }

void RingTransport::ConsumerDeleter::operator()(ring_buffer* rb) const { ring_buffer__free(rb); }

RingTransport::~RingTransport() = default;

uint64_t RingTransport::wakeup_bytes() const { return bytes_per_cpu_ / GN_WAKEUP_FRACTION; }

int RingTransport::wait_fd() const { return epoll_fd_.get(); }

// A negative return makes libbpf store the consumer position past this
// record and stop reading the ring; it is how a drain ends at its budget.
constexpr int kBudgetSpent = -EAGAIN;

int RingTransport::OnRecord(void* ctx, void* data, size_t size) {
  auto* c = static_cast<CpuContext*>(ctx);
  c->self->handler_(c->cpu, std::span<const uint8_t>(static_cast<const uint8_t*>(data), size));
  if (c->budget && --c->budget == 0) return kBudgetSpent;
  return 0;
}

Result<uint64_t> RingTransport::DrainAll(uint64_t max_records_per_cpu) {
  backlog_ = false;
  uint64_t total = 0;
  for (size_t i = 0; i < consumers_.size(); ++i) {
    contexts_[i]->budget = max_records_per_cpu;
    int n = ring_buffer__consume(consumers_[i].get());
    if (n == kBudgetSpent) {
      backlog_ = true;
      total += max_records_per_cpu;
      continue;
    }
    if (n < 0) return MakeError("failed to read the ring buffer of CPU {}: {}", contexts_[i]->cpu, std::strerror(-n));
    total += static_cast<uint64_t>(n);
  }
  return total;
}

}  // namespace gpunoise::collect
