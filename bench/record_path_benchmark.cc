// The per-event cost of the recorder's user-space path, without the kernel:
// raw ring records -> model events -> sorted per-CPU batch -> Perfetto
// bundle -> serialized bytes. Reported per event; bytes/event as a counter.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "collect/record_decoder.h"
#include "collect/records.h"
#include "export/perfetto/ftrace_bundle_encoder.h"
#include "export/perfetto/protos/perfetto_trace_subset.pb.h"

namespace {

using namespace gpunoise;

class NoIrqNames : public perfetto::IrqNameSource {
 public:
  std::string_view IrqName(int32_t) override { return "virtio2-input.0"; }
};

gn_softirq Softirq(uint64_t ts, uint16_t kind, uint32_t vec) {
  gn_softirq r{};
  r.hdr = {ts, kind, GN_FLAG_SOFTIRQ, 0};
  r.vec = vec;
  return r;
}

template <typename Record>
void Append(std::vector<std::vector<uint8_t>>& out, const Record& r) {
  out.emplace_back(reinterpret_cast<const uint8_t*>(&r), reinterpret_cast<const uint8_t*>(&r) + sizeof(r));
}

// A drain's worth of records shaped like a switch-heavy CPU: switches and
// wakings ~2 us apart among a few tasks, one softirq pair in twenty.
std::vector<std::vector<uint8_t>> MakeSwitchHeavy(size_t n) {
  std::vector<std::vector<uint8_t>> out;
  std::mt19937 rng(42);
  const char* comms[] = {"python3", "pt_main_thread", "swapper/1", "kworker/1:1", "nccl-proxy"};
  uint64_t ts = 1'000'000'000'000;
  for (size_t i = 0; i < n; ++i) {
    ts += 1000 + rng() % 2000;
    if (i % 20 == 19) {
      Append(out, Softirq(ts, i % 40 == 39 ? GN_REC_SOFTIRQ_EXIT : GN_REC_SOFTIRQ_ENTRY, 3));
    } else if (i % 3 == 0) {
      gn_sched_wake r{};
      r.hdr = {ts, GN_REC_SCHED_WAKING, 0, static_cast<__u32>(1000 + rng() % 5)};
      r.tid = 1000 + rng() % 5;
      r.prio = 120;
      r.target_cpu = 1;
      std::strcpy(r.comm, comms[r.tid % 5]);
      Append(out, r);
    } else {
      gn_sched_switch r{};
      r.hdr = {ts, GN_REC_SCHED_SWITCH, 0, static_cast<__u32>(1000 + rng() % 5)};
      r.next_tid = 1000 + rng() % 5;
      r.next_prio = 120;
      r.prev_state = (i % 4) ? 1 : 0x100;
      std::strcpy(r.next_comm, comms[r.next_tid % 5]);
      Append(out, r);
    }
  }
  return out;
}

// A CPU under a NET_RX storm, as recorded under bench W2's UDP flood:
// softirq entry (carrying its raise's wait) and exit ~300 ns apart (97% of
// the events), a context switch or waking now and then, a local timer tick.
std::vector<std::vector<uint8_t>> MakeNetRxStorm(size_t n) {
  std::vector<std::vector<uint8_t>> out;
  uint64_t ts = 1'000'000'000'000;
  for (size_t i = 0; out.size() < n; ++i) {
    ts += 300;
    if (i % 40 == 39) {
      gn_sched_switch r{};
      r.hdr = {ts, GN_REC_SCHED_SWITCH, 0, 4242};
      r.next_tid = i % 80 == 79 ? 0 : 4242;
      r.next_prio = 120;
      r.prev_state = 1;
      std::strcpy(r.next_comm, r.next_tid ? "netload-rx" : "swapper/1");
      Append(out, r);
      continue;
    }
    uint16_t kinds[] = {GN_REC_SOFTIRQ_ENTRY, GN_REC_SOFTIRQ_EXIT};
    gn_softirq r = Softirq(ts, kinds[i % 2], 3);
    if (r.hdr.kind == GN_REC_SOFTIRQ_ENTRY) r.raise_wait_ns = 280;
    Append(out, r);
  }
  return out;
}

std::vector<std::vector<uint8_t>> MakeRecords(size_t n, int mix) {
  return mix == 0 ? MakeSwitchHeavy(n) : MakeNetRxStorm(n);
}

// Encodes one bundle the way the recorder writes it.
void EncodeBundle(perfetto::FtraceBundleEncoder& encoder, uint32_t cpu, std::span<const model::Event> events,
                  NoIrqNames& names, std::string* bytes) {
  encoder.EncodePacket({cpu, false, 0}, events, names, bytes);
}

// range(0): records per drain; range(1): 0 switch-heavy, 1 NET_RX storm.
void BM_DecodeSortEncodeSerialize(benchmark::State& state) {
  const size_t batch = static_cast<size_t>(state.range(0));
  auto records = MakeRecords(batch, static_cast<int>(state.range(1)));
  std::vector<model::Event> events(batch);
  perfetto::FtraceBundleEncoder encoder;
  NoIrqNames names;
  std::string bytes;
  uint64_t total_bytes = 0;
  for (auto _ : state) {
    for (size_t i = 0; i < batch; ++i) collect::DecodeRecord(records[i], 1, &events[i]);
    auto by_ts = [](const model::Event& a, const model::Event& b) { return a.ts < b.ts; };
    if (!std::is_sorted(events.begin(), events.end(), by_ts))
      std::stable_sort(events.begin(), events.end(), by_ts);
    bytes.clear();
    EncodeBundle(encoder, 1, events, names, &bytes);
    total_bytes += bytes.size();
    benchmark::DoNotOptimize(bytes.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * batch));
  state.counters["bytes_per_event"] =
      static_cast<double>(total_bytes) / static_cast<double>(state.iterations() * batch);
}
BENCHMARK(BM_DecodeSortEncodeSerialize)
    ->ArgNames({"batch", "netrx"})
    ->Args({1024, 0})
    ->Args({16384, 0})
    ->Args({16384, 1});

void BM_EncodeCompactSwitchOnly(benchmark::State& state) {
  const size_t batch = 16384;
  std::vector<model::Event> events(batch);
  uint64_t ts = 1'000'000'000'000;
  for (size_t i = 0; i < batch; ++i) {
    model::SchedSwitch s;
    s.next_tid = 1000 + static_cast<int32_t>(i % 4);
    s.next_prio = 120;
    s.prev_state = 1;
    s.next_comm = model::TaskComm(i % 2 ? "ping" : "pong");
    events[i].ts = ts += 1500;
    events[i].payload = s;
  }
  perfetto::FtraceBundleEncoder encoder;
  NoIrqNames names;
  std::string bytes;
  for (auto _ : state) {
    bytes.clear();
    EncodeBundle(encoder, 0, events, names, &bytes);
    benchmark::DoNotOptimize(bytes.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * batch));
  state.counters["bytes_per_event"] = static_cast<double>(bytes.size()) / batch;
}
BENCHMARK(BM_EncodeCompactSwitchOnly);

}  // namespace
