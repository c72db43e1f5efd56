// Per-event cost of the recorder's consume path on a real BPF ring buffer:
// libbpf's ring_buffer__consume over gpunoise's RingTransport -> the record
// decoder -> the per-CPU sort check -> the Perfetto bundle encoder ->
// serialized bytes. The same code `gpunoise record` runs per drain.
//
// Why a real ring filled with BPF_PROG_TEST_RUN: the ring's consumer side
// (libbpf reading the producer position, skipping discarded records, page
// wrap, advancing the consumer position) is part of the cost being measured,
// so a ring in ordinary memory would leave it out. BPF_MAP_TYPE_USER_RINGBUF
// is no substitute either: it runs the other way (user space produces, the
// kernel consumes) through different code. A tiny raw_tp program
// (bench/ring_fill.bpf.c), never attached, writes records through the
// collectors' own gn_reserve/gn_submit into the ring of one CPU; each
// iteration fills the ring outside the timed region and times the drain.
//
// Needs root (BPF); without it the benchmarks are skipped with the reason.
// Run: sudo build/bench/ring_consume_benchmark
#include <benchmark/benchmark.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "collect/record_decoder.h"
#include "collect/ring_transport.h"
#include "export/perfetto/ftrace_bundle_encoder.h"
#include "ring_filler.h"

namespace {

using namespace gpunoise;

constexpr uint64_t kRingBytes = 4ull << 20;  // gpunoise record's default per CPU

class FixedIrqNames : public perfetto::IrqNameSource {
 public:
  std::string_view IrqName(int32_t) override { return "virtio2-input.0"; }
};

// One CPU's ring, the producer program, and the staging the record session
// keeps per CPU.
class RingFixture {
 public:
  // nullptr and `error` set when the machine cannot run it.
  static std::unique_ptr<RingFixture> Create(std::string* error) {
    if (::geteuid() != 0) {
      *error = "needs root (it loads a BPF program and creates BPF ring buffers)";
      return nullptr;
    }
    std::unique_ptr<RingFixture> f(new RingFixture());
    cpu_set_t set;
    CPU_ZERO(&set);
    f->cpu_ = 0;
    if (::sched_getaffinity(0, sizeof(set), &set) == 0)
      while (f->cpu_ < CPU_SETSIZE - 1 && !CPU_ISSET(f->cpu_, &set)) ++f->cpu_;
    auto transport = collect::RingTransport::Create(
        {f->cpu_}, kRingBytes, [fp = f.get()](uint32_t cpu, std::span<const uint8_t> data) {
          if (fp->used_ == fp->events_.size()) fp->events_.emplace_back();
          if (collect::DecodeRecord(data, cpu, &fp->events_[fp->used_]) == collect::DecodeResult::kOk)
            ++fp->used_;
          else
            ++fp->malformed_;
        });
    if (!transport.ok()) {
      *error = transport.error().message;
      return nullptr;
    }
    f->transport_ = std::move(*transport);
    auto filler = bench::RingFiller::Load(*f->transport_, f->cpu_);
    if (!filler.ok()) {
      *error = filler.error().message;
      return nullptr;
    }
    f->filler_ = std::move(*filler);
    return f;
  }

  // Writes `n` records into the ring from the kernel; false when they did
  // not all fit or the run failed.
  bool Fill(uint32_t n, std::string* error) {
    Status st = filler_->Fill(n);
    if (!st.ok()) *error = st.error().message;
    return st.ok();
  }

  // The timed part: drain the ring into decoded events.
  uint64_t Drain() {
    used_ = 0;
    auto n = transport_->DrainAll();
    return n.ok() ? *n : 0;
  }

  std::span<model::Event> events() { return {events_.data(), used_}; }
  uint32_t cpu() const { return static_cast<uint32_t>(cpu_); }
  uint64_t malformed() const { return malformed_; }

 private:
  RingFixture() = default;
  int cpu_ = 0;
  std::unique_ptr<collect::RingTransport> transport_;
  std::unique_ptr<bench::RingFiller> filler_;
  std::vector<model::Event> events_;
  size_t used_ = 0;
  uint64_t malformed_ = 0;
};

void SortByTimestamp(std::span<model::Event> events) {
  auto by_ts = [](const model::Event& a, const model::Event& b) { return a.ts < b.ts; };
  if (!std::is_sorted(events.begin(), events.end(), by_ts))
    std::stable_sort(events.begin(), events.end(), by_ts);
}

// `encode`: also encode and serialize the drained batch, as a drain does.
void RunRingBenchmark(benchmark::State& state, bool encode) {
  const uint32_t batch = static_cast<uint32_t>(state.range(0));
  std::string error;
  auto fixture = RingFixture::Create(&error);
  if (!fixture) {
    state.SkipWithError(error.c_str());
    return;
  }
  perfetto::FtraceBundleEncoder encoder;
  FixedIrqNames names;
  std::string bytes;
  uint64_t total_bytes = 0, total_events = 0;
  for (auto _ : state) {
    state.PauseTiming();
    bool filled = fixture->Fill(batch, &error);
    state.ResumeTiming();
    if (!filled) {
      state.SkipWithError(error.c_str());
      return;
    }
    uint64_t drained = fixture->Drain();
    if (drained != batch || fixture->malformed() != 0) {
      state.SkipWithError("the drain did not return every record the program wrote");
      return;
    }
    std::span<model::Event> events = fixture->events();
    SortByTimestamp(events);
    if (encode) {
      bytes.clear();
      encoder.EncodePacket({fixture->cpu(), false, 0}, events, names, &bytes);
      total_bytes += bytes.size();
      benchmark::DoNotOptimize(bytes.data());
    }
    benchmark::DoNotOptimize(events.data());
    total_events += drained;
  }
  state.SetItemsProcessed(static_cast<int64_t>(total_events));
  if (encode && total_events)
    state.counters["bytes_per_event"] = static_cast<double>(total_bytes) / static_cast<double>(total_events);
}

// Ring consume + decode only.
void BM_RingConsumeDecode(benchmark::State& state) { RunRingBenchmark(state, false); }
// Ring consume + decode + sort check + encode + serialize: the drain path.
void BM_RingConsumeEncode(benchmark::State& state) { RunRingBenchmark(state, true); }

// 16384 records is ~0.9 MiB: a drain of a busy CPU at the 100 ms timer.
BENCHMARK(BM_RingConsumeDecode)->Arg(1024)->Arg(16384);
BENCHMARK(BM_RingConsumeEncode)->Arg(1024)->Arg(16384);

}  // namespace

BENCHMARK_MAIN();
