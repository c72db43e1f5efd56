// How fast `gpunoise report` reads a trace, in events and bytes per second on
// one core, streaming from a file in the page cache:
//   - TraceReader alone (hand-rolled wire decoding into model events), on
//     gpunoise's own format (compact sched + full irq/softirq events) and on
//     Perfetto's recorder without compact sched (full-format sched_switch);
//   - TraceReader + TimelineBuilder: the report's whole ingest, with the
//     memory the timeline keeps per event;
//   - the baseline: libprotobuf parsing the same file into a full Trace
//     message and walking its events.
// Run: build/bench/report/report_reader_benchmark [--benchmark_repetitions=5]
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

#include "analyze/timeline_builder.h"
#include "export/perfetto/ftrace_bundle_encoder.h"
#include "export/perfetto/protos/perfetto_trace_subset.pb.h"
#include "export/perfetto/trace_file_writer.h"
#include "import/trace_reader.h"

namespace gpunoise {
namespace {

constexpr int kCpus = 4;
constexpr int kEventsPerBundle = 4000;  // ~100 ms of a busy CPU
constexpr int kBundlesPerCpu = 250;     // 4M events in all

class Names : public perfetto::IrqNameSource {
 public:
  std::string_view IrqName(int32_t irq) override { return irq == 40 ? "eth0-TxRx-0" : "nvme0q1"; }
};

// A busy node as gpunoise records it: per CPU, context switches among a few
// dozen threads, wakeups, and an interrupt (hard IRQ + NET_RX or TIMER
// softirq) every few switches.
std::vector<model::Event> CpuEvents(uint32_t cpu, uint64_t& ts, int32_t& current, std::mt19937& rng) {
  std::vector<model::Event> out;
  out.reserve(kEventsPerBundle);
  static const char* kComms[] = {"python3", "pt_data_worker", "nccl-proxy", "kworker/1:2", "swapper", "sshd"};
  while (out.size() < kEventsPerBundle) {
    ts += 2000 + rng() % 20000;
    uint32_t pick = rng() % 10;
    if (pick < 5) {
      model::SchedSwitch s;
      s.prev_tid = current;
      s.prev_state = (rng() & 1) ? 1 : 256;
      s.next_tid = static_cast<int32_t>(1000 + rng() % 40);
      s.next_prio = 120;
      s.next_comm = model::TaskComm(kComms[s.next_tid % 6]);
      out.push_back({ts, cpu, current, s});
      current = s.next_tid;
    } else if (pick < 7) {
      model::SchedWaking w;
      w.tid = static_cast<int32_t>(1000 + rng() % 40);
      w.target_cpu = static_cast<int32_t>(rng() % kCpus);
      w.prio = 120;
      w.comm = model::TaskComm(kComms[w.tid % 6]);
      out.push_back({ts, cpu, current, w});
    } else {
      int32_t irq = (rng() & 1) ? 40 : 41;
      out.push_back({ts, cpu, current, model::IrqEntry{irq}});
      out.push_back({ts + 1500, cpu, current, model::IrqExit{irq, 1}});
      uint32_t vec = irq == 40 ? 3 : 1;
      out.push_back({ts + 1600, cpu, current, model::SoftirqEntry{vec}});
      out.push_back({ts + 9000, cpu, current, model::SoftirqExit{vec}});
      ts += 9000;
    }
  }
  return out;
}

struct TraceFile {
  std::string path;
  uint64_t bytes = 0;
  uint64_t events = 0;
};

// Writes the trace once per process; `full_format` writes sched_switch and
// sched_waking as full FtraceEvents (Perfetto's recorder without compact
// sched) instead of compact columns.
TraceFile g_files[2];

const TraceFile& MakeTrace(bool full_format) {
  TraceFile& f = g_files[full_format];
  if (!f.path.empty()) return f;
  f.path = "/tmp/gpunoise-bench-" + std::to_string(::getpid()) + (full_format ? "-full" : "-compact") + ".pftrace";
  std::mt19937 rng(42);
  std::string out;
  Names names;
  perfetto::FtraceBundleEncoder encoder;
  perfetto::TracePacket packet;
  uint64_t ts[kCpus];
  int32_t current[kCpus];
  for (int c = 0; c < kCpus; ++c) {
    ts[c] = 1'000'000'000;
    current[c] = 0;
  }
  for (int b = 0; b < kBundlesPerCpu; ++b) {
    for (uint32_t cpu = 0; cpu < kCpus; ++cpu) {
      auto events = CpuEvents(cpu, ts[cpu], current[cpu], rng);
      f.events += events.size();
      packet.Clear();
      if (!full_format) {
        encoder.Encode({cpu, false, 0}, events, names, &packet);
      } else {
        auto* bundle = packet.mutable_ftrace_events();
        bundle->set_cpu(cpu);
        for (const auto& e : events) {
          auto* fe = bundle->add_event();
          fe->set_timestamp(e.ts);
          fe->set_pid(static_cast<uint32_t>(e.tid));
          if (auto* s = std::get_if<model::SchedSwitch>(&e.payload)) {
            auto* m = fe->mutable_sched_switch();
            m->set_prev_comm("prev");
            m->set_prev_pid(s->prev_tid);
            m->set_prev_prio(120);
            m->set_prev_state(s->prev_state);
            m->set_next_comm(std::string(s->next_comm.view()));
            m->set_next_pid(s->next_tid);
            m->set_next_prio(s->next_prio);
          } else if (auto* w = std::get_if<model::SchedWaking>(&e.payload)) {
            auto* m = fe->mutable_sched_waking();
            m->set_comm(std::string(w->comm.view()));
            m->set_pid(w->tid);
            m->set_prio(w->prio);
            m->set_success(1);
            m->set_target_cpu(w->target_cpu);
          } else if (auto* i = std::get_if<model::IrqEntry>(&e.payload)) {
            fe->mutable_irq_handler_entry()->set_irq(i->irq);
            fe->mutable_irq_handler_entry()->set_name(std::string(names.IrqName(i->irq)));
          } else if (auto* x = std::get_if<model::IrqExit>(&e.payload)) {
            fe->mutable_irq_handler_exit()->set_irq(x->irq);
            fe->mutable_irq_handler_exit()->set_ret(1);
          } else if (auto* se = std::get_if<model::SoftirqEntry>(&e.payload)) {
            fe->mutable_softirq_entry()->set_vec(se->vec);
          } else if (auto* sx = std::get_if<model::SoftirqExit>(&e.payload)) {
            fe->mutable_softirq_exit()->set_vec(sx->vec);
          }
        }
      }
      AppendFramedPacket(packet.SerializeAsString(), &out);
    }
  }
  std::ofstream(f.path, std::ios::binary).write(out.data(), static_cast<std::streamsize>(out.size()));
  f.bytes = out.size();
  return f;
}

class CountingSink : public model::TraceSink {
 public:
  void OnEvent(const model::Event& e) override {
    ++events;
    checksum += e.ts;
  }
  uint64_t events = 0, checksum = 0;
};

void Report(benchmark::State& state, const TraceFile& f) {
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * f.events));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * f.bytes));
  state.counters["bytes_per_event"] = static_cast<double>(f.bytes) / static_cast<double>(f.events);
}

void BM_TraceReader(benchmark::State& state) {
  const TraceFile& f = MakeTrace(state.range(0) == 1);
  for (auto _ : state) {
    CountingSink sink;
    import::TraceReader reader(sink);
    auto stats = reader.ReadFile(f.path);
    if (!stats.ok() || sink.events != f.events) {
      state.SkipWithError("read failed or lost events");
      return;
    }
    benchmark::DoNotOptimize(sink.checksum);
  }
  Report(state, f);
}
BENCHMARK(BM_TraceReader)->Arg(0)->Arg(1)->ArgName("full_format")->Unit(benchmark::kMillisecond);

template <typename V>
uint64_t Capacity(const V& v) {
  return v.capacity() * sizeof(typename V::value_type);
}

void BM_TraceReaderIntoTimeline(benchmark::State& state) {
  const TraceFile& f = MakeTrace(false);
  uint64_t kept = 0;
  for (auto _ : state) {
    analyze::TimelineBuilder builder;
    import::TraceReader reader(builder);
    auto stats = reader.ReadFile(f.path);
    if (!stats.ok()) {
      state.SkipWithError("read failed");
      return;
    }
    analyze::Timeline t = builder.Finish();
    kept = Capacity(t.wakeups) + Capacity(t.migrations) + Capacity(t.thread_store) + Capacity(t.thread_slot);
    for (const auto& c : t.cpus) kept += Capacity(c.runs) + Capacity(c.hardirqs) + Capacity(c.softirqs);
    benchmark::DoNotOptimize(kept);
  }
  Report(state, f);
  state.counters["timeline_bytes_per_event"] = static_cast<double>(kept) / static_cast<double>(f.events);
}
BENCHMARK(BM_TraceReaderIntoTimeline)->Unit(benchmark::kMillisecond);

// The baseline: what a straightforward reader does, libprotobuf's full parse
// of the file and a walk over every event (compact columns included).
void BM_LibprotobufFullParse(benchmark::State& state) {
  const TraceFile& f = MakeTrace(state.range(0) == 1);
  for (auto _ : state) {
    std::ifstream in(f.path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    perfetto::Trace trace;
    if (!trace.ParseFromString(ss.str())) {
      state.SkipWithError("parse failed");
      return;
    }
    uint64_t events = 0, checksum = 0;
    for (const auto& p : trace.packet()) {
      if (!p.has_ftrace_events()) continue;
      const auto& b = p.ftrace_events();
      for (const auto& e : b.event()) {
        ++events;
        checksum += e.timestamp();
      }
      uint64_t ts = 0;
      for (uint64_t d : b.compact_sched().switch_timestamp()) checksum += (ts += d), ++events;
      ts = 0;
      for (uint64_t d : b.compact_sched().waking_timestamp()) checksum += (ts += d), ++events;
    }
    if (events != f.events) {
      state.SkipWithError("event count differs");
      return;
    }
    benchmark::DoNotOptimize(checksum);
  }
  Report(state, f);
}
BENCHMARK(BM_LibprotobufFullParse)->Arg(0)->Arg(1)->ArgName("full_format")->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gpunoise

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  for (const auto& f : gpunoise::g_files)
    if (!f.path.empty()) std::remove(f.path.c_str());
  return 0;
}
