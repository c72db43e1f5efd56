#include "report/fleet_synthetic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <random>

#include "analyze/synthetic.h"
#include "cupti/activity_converter.h"
#include "export/perfetto/ftrace_bundle_encoder.h"
#include "export/perfetto/metadata_packets.h"
#include "export/perfetto/protos/perfetto_trace_subset.pb.h"
#include "import/test_trace.h"
#include "import/trace_reader.h"
#include "model/process_snapshot.h"
#include "export/perfetto/parsed_packet.h"

namespace gpunoise::testing {
namespace {

constexpr uint64_t kWallBase = 1'700'000'000'000'000'000ull;  // REALTIME of the job's start
constexpr uint64_t kBootShift = 7'000'000'000ull;             // machine i booted i * 7 s later
constexpr uint32_t kLaunchCbid = 211;
constexpr uint32_t kNetRx = 3;
constexpr int kGpus = 2;

template <typename T>
T Zeroed() {
  T t;
  std::memset(&t, 0, sizeof(t));
  return t;
}

const CUpti_Activity* AsRecord(const void* r) { return static_cast<const CUpti_Activity*>(r); }

// What one rank does in one step, on the true wall clock.
struct RankStep {
  uint64_t launch = 0;  // the compute kernel's launch call
  uint64_t compute_start = 0, compute_end = 0;
  uint64_t a_start = 0, a_end = 0;
  uint64_t b_start = 0, b_end = 0;  // 0: not in communicator B
};

class Process {
 public:
  Process(int32_t pid, int32_t rank, uint32_t gpu, std::string node)
      : pid_(pid), gpu_(gpu), converter_(Options(pid, rank, gpu, std::move(node))) {
    auto d = Zeroed<CUpti_ActivityDevice5>();
    d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    d.id = gpu;
    d.name = "NVIDIA H200";
    d.numMultiprocessors = 132;
    d.computeCapabilityMajor = 9;
    converter_.Convert(AsRecord(&d));
  }

  void Launch(uint64_t ts, uint32_t corr) {
    auto a = Zeroed<CUpti_ActivityAPI>();
    a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    a.cbid = kLaunchCbid;
    a.start = ts;
    a.end = ts + 8'000;
    a.processId = static_cast<uint32_t>(pid_);
    a.threadId = static_cast<uint32_t>(pid_ + 1);
    a.correlationId = corr;
    converter_.Convert(AsRecord(&a));
  }

  void Kernel(uint64_t start, uint64_t end, uint32_t stream, uint32_t corr, const char* name) {
    auto k = Zeroed<CUpti_ActivityKernel10>();
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = start;
    k.end = end;
    k.deviceId = gpu_;
    k.contextId = 1;
    k.streamId = stream;
    k.correlationId = corr;
    k.name = name;
    converter_.Convert(AsRecord(&k));
  }

  // NCCL's range around a collective's launch, its communicator as payload
  // (none: 0).
  void NcclRange(uint64_t start, uint64_t end, const char* name, uint64_t comm) {
    TypedRange(start, end, name, comm, nullptr, 0);
  }
  // With `schema`: NCCL 2.19+'s typed call, decoded during the push (before
  // CUPTI's record of the range) and handed to the converter.
  void TypedRange(uint64_t start, uint64_t end, const char* name, uint64_t comm, const char* schema,
                  uint64_t bytes) {
    if (schema) {
      cupti::NcclCall call;
      call.tid = static_cast<uint32_t>(pid_ + 1);
      call.ts = start - 200;  // the hook runs just before CUPTI's handler
      call.params.schema = schema;
      call.params.comm = comm;
      call.params.has_bytes = true;
      call.params.bytes = bytes;
      call.params.op = 0;  // ncclSum
      converter_.AddNcclCalls({call}, 0);
      comm = 0;            // no scalar payload
    }
    uint32_t id = ++range_id_;
    auto m = Zeroed<CUpti_ActivityMarker2>();
    m.kind = CUPTI_ACTIVITY_KIND_MARKER;
    m.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
    m.id = id;
    m.timestamp = start;
    m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    m.objectId.pt.processId = static_cast<uint32_t>(pid_);
    m.objectId.pt.threadId = static_cast<uint32_t>(pid_ + 1);
    m.name = name;
    m.domain = "NCCL";
    converter_.Convert(AsRecord(&m));
    if (comm) {
    auto d = Zeroed<CUpti_ActivityMarkerData2>();
    d.kind = CUPTI_ACTIVITY_KIND_MARKER_DATA;
    d.id = id;
    d.payloadKind = CUPTI_METRIC_VALUE_KIND_UINT64;
    d.payload.metricValueUint64 = comm;
    converter_.Convert(AsRecord(&d));
    }
    auto e = m;
    e.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
    e.timestamp = end;
    e.name = nullptr;
    converter_.Convert(AsRecord(&e));
  }

  std::string Finish(uint64_t boottime, int64_t realtime_minus_boottime) {
    cupti::ClockReadings now{boottime, boottime, boottime + static_cast<uint64_t>(realtime_minus_boottime)};
    return converter_.TakeChunk(now, /*final=*/true);
  }

 private:
  static cupti::ConverterOptions Options(int32_t pid, int32_t rank, uint32_t gpu, std::string node) {
    cupti::ConverterOptions o;
    o.pid = pid;
    o.process_name = "python3";
    o.node_id = std::move(node);
    o.start_ts = 1000;
    o.sequence_id = static_cast<uint32_t>(pid);
    o.rank = rank;
    o.local_rank = static_cast<int32_t>(gpu);
    o.api_name = [](bool runtime, uint32_t cbid) -> std::string {
      return runtime && cbid == kLaunchCbid ? "cudaLaunchKernel_v7000" : "";
    };
    return o;
  }

  int32_t pid_;
  uint32_t gpu_;
  cupti::ActivityConverter converter_;
  uint32_t range_id_ = 0;
};

// The kernel side of one machine, kept both for the Synth (the timeline the
// analysis reads) and for a trace file's ftrace bundles.
class KernelSide {
 public:
  void Switch(uint64_t ts, uint32_t cpu, int32_t prev, int32_t next, int64_t state = 0) {
    synth.Switch(ts, cpu, prev, next, state);
    model::SchedSwitch sw;
    sw.prev_tid = prev;
    sw.prev_state = state;
    sw.next_tid = next;
    events[cpu].push_back({ts, cpu, prev, sw});
  }
  void Softirq(uint32_t cpu, uint64_t start, uint64_t end, uint32_t vec) {
    synth.Softirq(cpu, start, end, vec);
    events[cpu].push_back({start, cpu, 0, model::SoftirqEntry{vec}});
    events[cpu].push_back({end, cpu, 0, model::SoftirqExit{vec}});
  }
  Synth synth;
  std::map<uint32_t, std::vector<model::Event>> events;
};

class NoIrqNames : public perfetto::IrqNameSource {
 public:
  std::string_view IrqName(int32_t) override { return "irq"; }
};

std::string WriteMachine(const std::string& dir, const std::string& name, KernelSide& k,
                         const std::vector<std::string>& gpu_chunks, uint64_t boottime, int64_t rt_minus_bt) {
  TestTrace trace;
  perfetto::TracePacket packet;
  perfetto::TracePacketBuilder built;
  perfetto::ClockReadings clocks{boottime, boottime, boottime + static_cast<uint64_t>(rt_minus_bt), boottime};
  perfetto::FillClockSnapshot(&built, clocks);
  packet = perfetto::Parsed(built);
  trace.Add(packet);
  packet.Clear();
  model::HostInfo host;
  host.hostname = name;
  host.machine_name = name;
  host.sysname = "Linux";
  host.num_cpus = 3;
  perfetto::FillSystemInfo(&built, host, "gpunoise test");
  packet = perfetto::Parsed(built);
  trace.Add(packet);
  packet.Clear();
  model::ProcessSnapshot processes;
  processes.ts = boottime;
  for (auto [pid, pname] : std::vector<std::pair<int32_t, std::string>>{{1000, "python3"}, {1010, "python3"}, {900, "sshd"}}) {
    model::ProcessInfo p;
    p.pid = pid;
    p.ppid = 1;
    p.comm = pname;
    p.cmdline = {"/usr/bin/" + pname};
    processes.processes.push_back(p);
    processes.threads.push_back({pid, pid, pname});
    if (pid != 900) processes.threads.push_back({pid + 1, pid, "pt_main_thread"});
  }
  perfetto::FillProcessTree(&built, processes);
  packet = perfetto::Parsed(built);
  trace.Add(packet);
  perfetto::FtraceBundleEncoder encoder;
  NoIrqNames names;
  for (auto& [cpu, events] : k.events) {
    std::stable_sort(events.begin(), events.end(), [](const model::Event& a, const model::Event& b) { return a.ts < b.ts; });
    packet.Clear();
    encoder.Encode({cpu, false, 0}, events, names, &packet);
    trace.Add(packet);
  }
  for (const auto& chunk : gpu_chunks) trace.AddRaw(chunk);
  return trace.Write(dir, name + ".pftrace");
}

}  // namespace

std::vector<SynthNode> BuildJob(const SynthJob& job, const std::string& dir) {
  const size_t machines = job.machines.size();
  const int ranks = static_cast<int>(machines) * kGpus;
  std::mt19937 rng(job.seed);
  std::uniform_int_distribution<int64_t> jitter(-static_cast<int64_t>(job.jitter_ns),
                                                static_cast<int64_t>(job.jitter_ns));
  auto jittered = [&](uint64_t ts) { return static_cast<uint64_t>(static_cast<int64_t>(ts) + jitter(rng)); };

  // The job on the true wall clock: every rank's step, collectives ending
  // together after the last rank arrived.
  std::vector<std::vector<RankStep>> plan(job.steps, std::vector<RankStep>(ranks));
  for (int k = 0; k < job.steps; ++k) {
    uint64_t t = kWallBase + 1'000'000 + static_cast<uint64_t>(k) * job.period_ns;
    uint64_t last_a = 0;
    for (int r = 0; r < ranks; ++r) {
      const SynthMachine& m = job.machines[r / kGpus];
      bool first_gpu = r % kGpus == 0;
      RankStep& s = plan[k][r];
      s.launch = t + (first_gpu ? m.storm_ns : 0) + 10'000;
      s.compute_start = s.launch + 20'000;
      s.compute_end = s.compute_start + job.compute_ns + (first_gpu ? m.extra_compute_ns : 0);
      s.a_start = jittered(s.compute_end + 5'000);
      last_a = std::max(last_a, s.a_start);
    }
    uint64_t last_b = 0;
    for (int r = 0; r < ranks; ++r) {
      RankStep& s = plan[k][r];
      s.a_end = jittered(last_a + 1'000'000);
      if (r == job.absent_from_b) continue;
      s.b_start = jittered(s.a_end + 100'000);
      last_b = std::max(last_b, s.b_start);
    }
    for (int r = 0; r < ranks; ++r)
      if (plan[k][r].b_start) plan[k][r].b_end = jittered(last_b + 500'000);
  }

  std::vector<SynthNode> out;
  for (size_t i = 0; i < machines; ++i) {
    const SynthMachine& m = job.machines[i];
    const uint64_t boot = kBase + i * kBootShift;  // this machine's BOOTTIME at kWallBase
    auto bt = [&](uint64_t wall) { return wall - kWallBase + boot; };
    const int64_t rt_minus_bt = static_cast<int64_t>(kWallBase) - static_cast<int64_t>(boot) + m.clock_error_ns;
    const uint64_t end_wall = kWallBase + 2'000'000 + static_cast<uint64_t>(job.steps) * job.period_ns;

    KernelSide s;
    std::vector<std::string> gpu_chunks;
    for (int g = 0; g < kGpus; ++g) {
      int32_t pid = 1000 + 10 * g;
      s.synth.Process(pid, "python3").Thread(pid + 1, pid, "pt_main_thread");
      s.Switch(bt(kWallBase), static_cast<uint32_t>(g), 0, pid + 1);
      s.Switch(bt(end_wall), static_cast<uint32_t>(g), pid + 1, 0, 1);
    }
    s.synth.Process(900, "sshd").Thread(900, 900, "sshd");
    s.Switch(bt(kWallBase), 2, 0, 900);
    s.Switch(bt(end_wall), 2, 900, 0, 1);
    for (int k = 0; k < job.steps; ++k) {
      uint64_t t = kWallBase + 1'000'000 + static_cast<uint64_t>(k) * job.period_ns;
      if (m.storm_ns) s.Softirq(0, bt(t), bt(t + m.storm_ns), kNetRx);
      if (m.decoy_storm) s.Softirq(2, bt(t), bt(t + 5'000'000), kNetRx);
    }

    for (int g = 0; g < kGpus; ++g) {
      int r = static_cast<int>(i) * kGpus + g;
      int32_t pid = 1000 + 10 * g;
      Process p(pid, r, static_cast<uint32_t>(g), m.name + "-boot");
      uint32_t corr = 0;
      for (int k = 0; k < job.steps; ++k) {
        const RankStep& st = plan[k][r];
        if (!job.step_range.empty())
          p.NcclRange(bt(st.launch - 5'000), bt(st.launch + 12'000'000), job.step_range.c_str(), 0);
        p.Launch(bt(st.launch), ++corr);
        p.Kernel(bt(st.compute_start), bt(st.compute_end), 7, corr, "_Z4gemmPfS_S_");
        const bool typed = job.typed_payloads;
        const char* name = typed ? "NCCL collective" : "ncclAllReduce";
        uint64_t a_bytes = kAllReduceBytes;
        if (static_cast<int>(i) == job.size_mismatch_machine && k == job.size_mismatch_step) a_bytes /= 2;
        p.TypedRange(bt(st.launch + 50'000), bt(st.launch + 80'000), name, kCommA, typed ? "AllReduce" : nullptr,
                     a_bytes);
        p.Launch(bt(st.launch + 60'000), ++corr);
        p.Kernel(bt(st.a_start), bt(st.a_end), 13, corr, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
        if (!st.b_start) continue;
        p.TypedRange(bt(st.launch + 90'000), bt(st.launch + 120'000), typed ? name : "ncclAllGather", kCommB,
                     typed ? "AllGather" : nullptr, kAllGatherBytes);
        p.Launch(bt(st.launch + 100'000), ++corr);
        p.Kernel(bt(st.b_start), bt(st.b_end), 13, corr, "ncclDevKernel_AllGather_RING_LL");
      }
      std::string chunk = p.Finish(bt(end_wall), rt_minus_bt);
      import::TraceReader reader(s.synth.builder());
      auto read = reader.ReadBuffer(
          std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(chunk.data()), chunk.size()));
      EXPECT_TRUE(read.ok()) << (read.ok() ? "" : read.error().message);
      gpu_chunks.push_back(std::move(chunk));
    }
    std::string path;
    if (!dir.empty()) path = WriteMachine(dir, m.name, s, gpu_chunks, bt(kWallBase), rt_minus_bt);
    analyze::Timeline t = s.synth.Build();
    SynthNode node;
    node.analysis = AnalyzeOrDie(t);
    analyze::NodeSummaryOptions summary_options;
    summary_options.step_name = job.step_name;
    node.summary = analyze::SummarizeNode(t, node.analysis, summary_options);
    node.summary.machine = m.name;
    node.summary.has_realtime = true;
    node.summary.realtime_minus_boottime = rt_minus_bt;
    node.trace_path = path;
    out.push_back(std::move(node));
  }
  return out;
}

}  // namespace gpunoise::testing
