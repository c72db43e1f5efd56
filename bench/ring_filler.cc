#include "ring_filler.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <cstring>

#include "collect/collector.h"
#include "ring_fill.skel.h"

namespace gpunoise::bench {

Result<std::unique_ptr<RingFiller>> RingFiller::Load(const collect::RingTransport& transport, int cpu) {
  ring_fill_bpf* skel = ring_fill_bpf__open();
  if (!skel) return MakeError("failed to open the ring_fill program: {}", std::strerror(errno));
  std::unique_ptr<RingFiller> filler(new RingFiller(skel, cpu, transport));
  collect::CollectorContext shared;
  transport.ShareWith(&shared);
  if (!collect::ShareTransportMaps(
          {skel->maps.gn_rings, skel->maps.gn_gate, skel->maps.gn_lost_kinds, skel->maps.gn_cpu_ctx,
           skel->maps.gn_doorbell},
          shared))
    return MakeError("failed to share the transport maps with ring_fill: {}", std::strerror(errno));
  skel->rodata->gn_wakeup_bytes = transport.wakeup_bytes();
  if (int err = ring_fill_bpf__load(skel); err != 0)
    return MakeError("failed to load the ring_fill program: {}", std::strerror(-err));
  return filler;
}

RingFiller::~RingFiller() { ring_fill_bpf__destroy(skel_); }

Status RingFiller::Run(uint32_t n) {
  skel_->bss->gn_fill_count = n;
  LIBBPF_OPTS(bpf_test_run_opts, opts, .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = static_cast<__u32>(cpu_));
  if (bpf_prog_test_run_opts(bpf_program__fd(skel_->progs.gn_bench_fill), &opts) != 0)
    return MakeError("failed to run the ring_fill program: {}", std::strerror(errno));
  return OkStatus();
}

Status RingFiller::Fill(uint32_t n) {
  uint64_t before = failed();
  GN_RETURN_IF_ERROR(Run(n));
  if (failed() != before) return MakeError("the ring filled up before {} records were written", n);
  return OkStatus();
}

uint64_t RingFiller::failed() const { return skel_->bss->gn_fill_failed; }
void RingFiller::reset_failed() { skel_->bss->gn_fill_failed = 0; }
uint64_t RingFiller::lost() const {
  auto lost = transport_.LostPerCpu();
  return static_cast<size_t>(cpu_) < lost.size() ? lost[static_cast<size_t>(cpu_)] : 0;
}

}  // namespace gpunoise::bench
