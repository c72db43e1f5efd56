#include "collect/sampler_collector.h"

#include <bpf/bpf.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "collect/percpu_maps.h"
#include "common/log.h"
#include "sampler.skel.h"

extern "C" {
#include "bpf/sampler.h"
}

namespace gpunoise::collect {

static_assert(sizeof(gn_sample_key) == 24);
static_assert(offsetof(gn_sample_key, comm) == 8);

namespace {

int PerfEventOpen(perf_event_attr* attr, int cpu) {
  return static_cast<int>(::syscall(SYS_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC));
}

}  // namespace

SamplerCollector::SamplerCollector(int focus_map_fd, int irq_state_map_fd)
    : Collector("sampler"), focus_map_fd_(focus_map_fd), irq_state_map_fd_(irq_state_map_fd) {}

SamplerCollector::~SamplerCollector() {
  Stop();
  if (skel_) sampler_bpf__destroy(skel_);
}

void SamplerCollector::Stop() {
  events_.clear();
  Collector::Stop();
}

void SamplerCollector::Start(const CollectorContext& /*context*/) {
  skel_ = sampler_bpf__open();
  if (!skel_) {
    Disable(fmt::format("failed to open the eBPF object: {}", std::strerror(errno)));
    return;
  }
  if (bpf_map__reuse_fd(skel_->maps.gn_focus, focus_map_fd_) != 0 ||
      (irq_state_map_fd_ >= 0 && bpf_map__reuse_fd(skel_->maps.gn_irq_cpu, irq_state_map_fd_) != 0)) {
    Disable(fmt::format("failed to share the focus and interrupt-state maps: {}", std::strerror(errno)));
    return;
  }
  if (int err = sampler_bpf__load(skel_); err != 0) {
    Disable(fmt::format("failed to load eBPF programs: {}", std::strerror(-err)));
    log::Warning("sampler collector disabled: failed to load its perf_event program: {}", std::strerror(-err));
    return;
  }
  report_.state = model::CollectorState::kActive;
  TrackProgram(skel_->progs.gn_sample);
}

bool SamplerCollector::Open(int cpu, int hz) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.freq = 1;
  attr.sample_freq = static_cast<uint64_t>(hz);
  attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  int fd = PerfEventOpen(&attr, cpu);
  if (fd < 0) {
    log::Warning("sampler: failed to open a cpu-clock perf event on CPU {}: {}", cpu, std::strerror(errno));
    return false;
  }
  UniqueFd reader(::fcntl(fd, F_DUPFD_CLOEXEC, 0));
  bpf_link* link = bpf_program__attach_perf_event(skel_->progs.gn_sample, fd);
  if (!link) {
    int err = errno;
    ::close(fd);
    log::Warning("sampler: failed to attach to the perf event on CPU {}: {}", cpu, std::strerror(err));
    return false;
  }
  CpuEvent ev;
  ev.link.reset(link);
  ev.perf_fd = std::move(reader);
  ev.hz = hz;
  events_[cpu] = std::move(ev);
  return true;
}

std::vector<int> SamplerCollector::Reconcile(const std::vector<int>& cpus, const std::vector<int>& online,
                                             int hz) {
  std::vector<int> running;
  if (!skel_ || report_.state == model::CollectorState::kDisabled) return running;
  auto contains = [](const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); };
  for (auto it = events_.begin(); it != events_.end();) {
    const int cpu = it->first;
    bool keep = contains(cpus, cpu) && contains(online, cpu) && it->second.hz == hz;
    // Offline since the last call: the kernel took the event off that CPU.
    if (keep && !last_online_.empty() && !contains(last_online_, cpu)) keep = false;
    // An event the kernel no longer runs (its CPU went away and came back
    // between two calls) is reopened.
    if (keep && it->second.perf_fd.valid()) {
      uint64_t values[3] = {};
      if (::read(it->second.perf_fd.get(), values, sizeof(values)) == sizeof(values)) {
        if (it->second.last_running && values[2] == it->second.last_running) keep = false;
        it->second.last_running = values[2];
      }
    }
    if (keep) {
      ++it;
    } else {
      it = events_.erase(it);
    }
  }
  for (int cpu : cpus)
    if (contains(online, cpu) && !events_.count(cpu)) Open(cpu, hz);
  last_online_ = online;
  for (const auto& [cpu, ev] : events_) running.push_back(cpu);
  report_.attached_events.clear();
  if (!running.empty())
    report_.attached_events.push_back(fmt::format("perf cpu-clock {} Hz on {} CPUs", hz, running.size()));
  return running;
}

void SamplerCollector::AddMapLosses(std::vector<model::MapLoss>& out) const {
  if (skel_ && skel_->bss) AddFullMap(out, name(), "gn_samples", SumPerCpuCounter(skel_->bss->gn_sample_full));
}

void SamplerCollector::SetFocusEnabled(bool enabled) {
  if (skel_ && skel_->bss) __atomic_store_n(&skel_->bss->gn_focus_enabled, enabled ? 1u : 0u, __ATOMIC_RELAXED);
}

void SamplerCollector::Read(model::AggregateSnapshot* out) const {
  if (!skel_ || report_.state == model::CollectorState::kDisabled) return;
  std::vector<uint64_t> counts;
  for (const gn_sample_key& key : MapKeys<gn_sample_key>(skel_->maps.gn_samples)) {
    if (!ReadPerCpuHash(skel_->maps.gn_samples, key, &counts)) continue;
    for (size_t cpu = 0; cpu < counts.size(); ++cpu) {
      if (!counts[cpu]) continue;
      model::SampleCounter c;
      c.cpu = static_cast<uint32_t>(cpu);
      c.context = static_cast<model::SampleContext>(key.context);
      c.task_class = static_cast<model::TaskClass>(key.task_class & 3);
      c.id = key.id;
      if (key.context == GN_CTX_TASK) c.comm = model::TaskComm::FromBytes(key.comm);
      c.count = counts[cpu];
      out->samples.push_back(c);
    }
  }
}

size_t SamplerCollector::Prune(uint64_t now_ns, uint64_t stale_ns) {
  if (!skel_ || report_.state == model::CollectorState::kDisabled) return 0;
  size_t deleted = 0;
  std::map<std::vector<uint8_t>, KeyState> seen;
  std::vector<uint64_t> counts;
  for (const gn_sample_key& key : MapKeys<gn_sample_key>(skel_->maps.gn_samples)) {
    if (!ReadPerCpuHash(skel_->maps.gn_samples, key, &counts)) continue;
    uint64_t total = 0;
    for (uint64_t c : counts) total += c;
    std::vector<uint8_t> id(reinterpret_cast<const uint8_t*>(&key),
                            reinterpret_cast<const uint8_t*>(&key) + sizeof(key));
    KeyState st{total, now_ns};
    auto it = key_state_.find(id);
    if (it != key_state_.end() && it->second.total == total) st.changed_at = it->second.changed_at;
    if (now_ns - st.changed_at >= stale_ns) {
      if (bpf_map__delete_elem(skel_->maps.gn_samples, &key, sizeof(key), 0) == 0) ++deleted;
      continue;
    }
    seen.emplace(std::move(id), st);
  }
  key_state_ = std::move(seen);
  return deleted;
}

}  // namespace gpunoise::collect
