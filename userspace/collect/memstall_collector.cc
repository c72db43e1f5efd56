#include "collect/memstall_collector.h"

#include <bpf/libbpf.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include "collect/seq_ring.h"
#include "common/log.h"

// The skeleton's .bss declares the log with the shared layout.
extern "C" {
#include "bpf/memstall.h"
}
#include "memstall.skel.h"

namespace gpunoise::collect {

static_assert(sizeof(gn_memstall) == 40);
static_assert(offsetof(gn_memstall, tid) == 32);
static_assert((GN_MS_LOG & (GN_MS_LOG - 1)) == 0);

MemstallCollector::MemstallCollector() : Collector("memstall") {}

MemstallCollector::~MemstallCollector() {
  Stop();
  if (skel_) memstall_bpf__destroy(skel_);
}

void MemstallCollector::Start(const CollectorContext& context) {
  skel_ = memstall_bpf__open();
  if (!skel_) {
    Disable(fmt::format("failed to open the eBPF object: {}", std::strerror(errno)));
    return;
  }
  Status st = SelectLoadAttach(skel_->obj, context, {}, [&] { return memstall_bpf__load(skel_); });
  if (!st.ok()) log::Warning("{}", st.error().message);
}

void MemstallCollector::AddMapLosses(std::vector<model::MapLoss>& out) const {
  if (!skel_ || !skel_->bss) return;
  AddFullMap(out, name(), "gn_ms_begin", __atomic_load_n(&skel_->bss->gn_ms_begin_full, __ATOMIC_RELAXED));
  AddMapLoss(out, name(), "gn_ms_log", lost_, model::MapLossKind::kOverwritten);
}

void MemstallCollector::Drain(std::vector<model::MemStall>* out) {
  if (!skel_ || !skel_->bss || report_.state == model::CollectorState::kDisabled) return;
  auto* bss = skel_->bss;
  uint64_t next = __atomic_load_n(&bss->gn_ms_next, __ATOMIC_ACQUIRE);
  ReadSeqRing(bss->gn_ms_log, GN_MS_LOG, next, cursor_, lost_, [&](const gn_memstall& e) {
    if (e.kind >= GN_MS_KINDS) return;
    out->push_back({e.begin, e.end, e.value, static_cast<int32_t>(e.tid), e.cpu,
                    static_cast<model::MemStallKind>(e.kind)});
  });
}

}  // namespace gpunoise::collect
