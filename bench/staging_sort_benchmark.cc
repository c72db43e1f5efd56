// What restoring per-CPU time order costs in the staging when records come
// in batches (record --batching): a drain's events are then interleaved
// runs, one per batch of each stream (sched's and irq's overlap in time),
// never sorted as they arrive. BM_StagingSortInterleavedRuns is the
// staging's own ordering (keys merged over each stream's runs into an order
// the writer reads the events through; until 2026-12-04 each event then
// moved once into that order); BM_StableSortEvents the std::stable_sort on
// the events the first version replaced.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "record/cpu_staging.h"

namespace gpunoise::record {
namespace {

// `n` events in runs of 64, two streams whose runs cover the same time:
// (ts, stream).
std::vector<std::pair<uint64_t, uint32_t>> InterleavedRuns(size_t n) {
  std::vector<std::pair<uint64_t, uint32_t>> ts;
  ts.reserve(n);
  uint64_t base = 1'000'000;
  while (ts.size() < n) {
    for (uint32_t stream = 0; stream < 2 && ts.size() < n; ++stream)
      for (int i = 0; i < 64 && ts.size() < n; ++i)
        ts.push_back({base + static_cast<uint64_t>(i) * 20 + stream * 7, stream});
    base += 64 * 20;
  }
  return ts;
}

void Stage(CpuStaging& s, const std::vector<std::pair<uint64_t, uint32_t>>& ts) {
  for (auto [t, stream] : ts) {
    model::Event& e = s.Slot();
    e.ts = t;
    e.payload = model::SchedSwitch{};
    s.Push(true, stream);
  }
}

void BM_StagingSortInterleavedRuns(benchmark::State& state) {
  auto ts = InterleavedRuns(static_cast<size_t>(state.range(0)));
  CpuStaging s;
  s.set_batching(0b11);
  for (auto _ : state) {
    state.PauseTiming();
    Stage(s, ts);
    state.ResumeTiming();
    benchmark::DoNotOptimize(&s.Writable(false, true).back());
    s.Written();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_StagingSortInterleavedRuns)->Arg(1 << 14);

void BM_StableSortEvents(benchmark::State& state) {
  auto ts = InterleavedRuns(static_cast<size_t>(state.range(0)));
  std::vector<model::Event> events(ts.size());
  for (auto _ : state) {
    state.PauseTiming();
    for (size_t i = 0; i < ts.size(); ++i) {
      events[i].ts = ts[i].first;
      events[i].payload = model::SchedSwitch{};
    }
    state.ResumeTiming();
    std::stable_sort(events.begin(), events.end(), [](const model::Event& a, const model::Event& b) { return a.ts < b.ts; });
    benchmark::DoNotOptimize(events.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_StableSortEvents)->Arg(1 << 14);

}  // namespace
}  // namespace gpunoise::record
