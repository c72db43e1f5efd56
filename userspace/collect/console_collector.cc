#include "collect/console_collector.h"

#include <bpf/libbpf.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include "collect/seq_ring.h"
#include "common/log.h"

// The skeleton's .bss declares the log with the shared layout.
extern "C" {
#include "bpf/console.h"
}
#include "console.skel.h"

namespace gpunoise::collect {

static_assert(sizeof(gn_console) == 32 + GN_CON_COMM + GN_CON_TEXT);
static_assert(offsetof(gn_console, cpu) == 24);
static_assert(offsetof(gn_console, copied) == 28);
static_assert(offsetof(gn_console, text) == 32 + GN_CON_COMM);
static_assert((GN_CON_LOG & (GN_CON_LOG - 1)) == 0);
static_assert((GN_CON_TEXT & (GN_CON_TEXT - 1)) == 0);

ConsoleCollector::ConsoleCollector() : Collector("console") {}

ConsoleCollector::~ConsoleCollector() {
  Stop();
  if (skel_) console_bpf__destroy(skel_);
}

void ConsoleCollector::Start(const CollectorContext& context) {
  skel_ = console_bpf__open();
  if (!skel_) {
    Disable(fmt::format("failed to open the eBPF object: {}", std::strerror(errno)));
    return;
  }
  Status st = SelectLoadAttach(skel_->obj, context, {}, [&] { return console_bpf__load(skel_); });
  if (!st.ok()) log::Warning("{}", st.error().message);
}

void ConsoleCollector::Drain(std::vector<model::ConsoleRecord>* out) {
  if (!skel_ || !skel_->bss || report_.state == model::CollectorState::kDisabled) return;
  auto* bss = skel_->bss;
  uint64_t next = __atomic_load_n(&bss->gn_con_next, __ATOMIC_ACQUIRE);
  ReadSeqRing(bss->gn_con_log, GN_CON_LOG, next, cursor_, lost_, [&](const gn_console& e) {
    model::ConsoleRecord r;
    r.ts = e.ts;
    r.cpu = e.cpu;
    r.tid = static_cast<int32_t>(e.tid);
    r.pid = static_cast<int32_t>(e.pid);
    r.comm.assign(e.comm, strnlen(e.comm, sizeof(e.comm)));
    r.text.assign(e.text, std::min<size_t>(e.copied, sizeof(e.text)));
    r.len = e.len;
    out->push_back(std::move(r));
  });
}

}  // namespace gpunoise::collect
