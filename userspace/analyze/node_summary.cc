#include "analyze/node_summary.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "analyze/gpu_model.h"
#include "model/rdma_counters.h"

namespace gpunoise::analyze {
namespace {

uint64_t Median(std::vector<uint64_t> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// A thread track's thread: the track's own tid (the CUPTI library writes
// the real Linux tid on its thread tracks).
int32_t TidOf(const TrackData& d, uint64_t track) {
  auto it = d.tracks.find(track);
  return it == d.tracks.end() ? 0 : it->second.tid;
}

// NCCL's NVTX ranges on each thread, by start, for finding the range a
// collective's launch happened in: those with typed call fields (decoded
// from NCCL's extended payload), else ranges named "nccl..." with a scalar
// payload (older NCCL, or a capture without the payload hooks).
using RangesByThread = std::unordered_map<int32_t, std::vector<const TrackSlice*>>;

RangesByThread NcclRanges(const Timeline& t) {
  RangesByThread out;
  for (const TrackSlice& s : t.tracks.slices) {
    if (!s.nccl.present && (!s.has_payload || !t.tracks.String(s.name).starts_with("nccl"))) continue;
    if (int32_t tid = TidOf(t.tracks, s.track)) out[tid].push_back(&s);
  }
  for (auto& [tid, v] : out)
    std::sort(v.begin(), v.end(), [](const TrackSlice* a, const TrackSlice* b) { return a->start < b->start; });
  return out;
}

// The innermost NCCL range around the launch of a collective by `tid` at
// `ts`; nullptr when there is none.
const TrackSlice* RangeOf(const RangesByThread& ranges, int32_t tid, uint64_t ts) {
  auto it = ranges.find(tid);
  if (it == ranges.end() || !ts) return nullptr;
  const auto& v = it->second;
  auto end = std::upper_bound(v.begin(), v.end(), ts, [](uint64_t x, const TrackSlice* s) { return x < s->start; });
  for (auto r = end; r != v.begin();) {
    --r;
    if ((*r)->end >= ts) return *r;
    if (ts - (*r)->start > 10'000'000'000ull) break;  // no range is that long
  }
  return nullptr;
}

std::string ProcessLabel(const Timeline& t, int32_t pid) {
  return pid ? t.ProcessName(pid) : std::string("unknown process");
}

}  // namespace

bool EndsTogether(std::string_view op) {
  return op == "AllReduce" || op == "AllGather" || op == "ReduceScatter";
}

std::string CollectiveOp(std::string_view name) {
  if (name.starts_with("void ")) name.remove_prefix(5);  // a demangled template's return type
  for (std::string_view prefix : {"ncclDevKernel_", "ncclKernel_"}) {
    if (!name.starts_with(prefix)) continue;
    name.remove_prefix(prefix.size());
    size_t end = name.find_first_of("_(");
    return std::string(name.substr(0, end));
  }
  return {};
}

// The GPU capture's own rank (from the injection library's environment)
// first; else the rank the recorder read from the process's environment.
int32_t RankOfProcess(const Timeline& t, int32_t pid) {
  if (auto it = t.gpu_ranks.find(pid); it != t.gpu_ranks.end()) return it->second;
  if (auto it = t.identities.find(pid); it != t.identities.end() && it->second.job.rank) return *it->second.job.rank;
  return -1;
}

NodeSummary SummarizeNode(const Timeline& t, const Analysis& a, const NodeSummaryOptions& options) {
  NodeSummary n;
  n.hostname = a.hostname;
  if (t.session) {
    n.boot_id = t.session->boot_id;
    n.machine = t.session->machine_name;
  }
  if (n.machine.empty()) n.machine = !t.host.machine_name.empty() ? t.host.machine_name : a.hostname;
  n.start_ns = a.from;
  n.end_ns = a.to;
  n.findings = a.findings;

  // CPU side.
  for (const auto& f : a.focus_threads) {
    n.cpu.focus_observed_ns += f.observed_ns;
    n.cpu.focus_wait_ns += f.wait_ns;
    n.cpu.focus_interrupted_ns += f.interrupted_ns;
  }
  for (const auto& c : a.cpus) {
    double share = c.observed_ns ? static_cast<double>(c.softirq_ns) / static_cast<double>(c.observed_ns) : 0;
    if (share > n.cpu.max_softirq_share) {
      n.cpu.max_softirq_share = share;
      n.cpu.max_softirq_cpu = c.cpu;
    }
  }
  for (const auto& d : a.devices) {
    n.cpu.nic_drops += d.drops;
    n.cpu.tx_timeouts += d.tx_timeouts;
  }
  for (const MetaInstant& m : t.net_metadata) {
    if (m.name != model::kRdmaPortEventName) continue;
    ++n.cpu.rdma_ports;
    for (const auto& arg : m.args) {
      int64_t v = 0;
      if (arg.name == "device" || arg.name == "port" || !arg.AsInt64(&v) || v < 0) continue;
      if (model::IsRdmaErrorCounter(arg.name)) n.cpu.rdma_errors += static_cast<uint64_t>(v);
      if (arg.name == model::kRdmaXmitWait) n.cpu.rdma_xmit_wait += static_cast<uint64_t>(v);
    }
  }

  // GPU side, per process and GPU.
  GpuModel gpu = BuildGpuModel(t);
  std::map<std::pair<int32_t, uint64_t>, std::vector<const GpuWork*>> by_gpu;
  for (const GpuWork& w : gpu.work)
    if (w.end > a.from && w.start < a.to) by_gpu[{w.pid, w.gpu}].push_back(&w);
  RangesByThread ranges = NcclRanges(t);

  for (const auto& [key, works] : by_gpu) {
    GpuSummary g;
    auto name = gpu.gpu_names.find(key.second);
    g.gpu = name != gpu.gpu_names.end() ? name->second : "GPU";
    g.pid = key.first;
    g.process = ProcessLabel(t, key.first);
    g.rank = RankOfProcess(t, key.first);
    const uint32_t index = static_cast<uint32_t>(n.gpus.size());

    // Busy and collective time as unions; gaps between busy pieces.
    uint64_t first = works.front()->start, busy_end = works.front()->end, seg = first;
    uint64_t coll_end = 0, coll_seg = 0;
    std::map<std::pair<uint64_t, std::string>, uint32_t> seq;  // (comm, op if no comm) -> next
    for (size_t i = 0; i < works.size(); ++i) {
      const GpuWork* w = works[i];
      if (i > 0 && w->start > busy_end) {
        g.busy_ns += busy_end - seg;
        uint64_t gap = w->start - busy_end;
        g.idle_ns += gap;
        uint64_t host = w->launch_ts > busy_end ? std::min(w->launch_ts, w->start) - busy_end : 0;
        g.host_wait_ns += host;
        if (host == 0 && w->launch_ts && gap <= options.kernel_wait_max_ns) g.kernel_wait_ns += gap;
        else g.other_idle_ns += gap - host;
        seg = w->start;
      }
      busy_end = std::max(busy_end, w->end);

      std::string op = CollectiveOp(t.tracks.String(w->name));
      if (op.empty()) continue;
      if (w->start > coll_end) {
        g.collective_ns += coll_end - coll_seg;
        coll_seg = w->start;
      }
      coll_end = std::max(coll_end, w->end);
      CollectiveCall c;
      c.op = op;
      if (const TrackSlice* r = RangeOf(ranges, w->launch_tid, w->launch_ts); r && r->nccl.present) {
        c.comm = r->nccl.comm;
        c.bytes = r->nccl.bytes;
        if (r->nccl.schema) c.op = std::string(t.tracks.String(r->nccl.schema));
      } else if (r) {
        c.comm = r->payload;
      }
      c.seq = seq[{c.comm, c.comm ? std::string() : op}]++;
      c.rank = g.rank;
      c.gpu = index;
      c.start = w->start;
      c.end = w->end;
      n.collectives.push_back(std::move(c));
    }
    g.busy_ns += busy_end - seg;
    g.collective_ns += coll_end - coll_seg;
    g.compute_ns = g.busy_ns - std::min(g.busy_ns, g.collective_ns);
    g.active_ns = busy_end - first;

    // Steps: NVTX ranges named --step on the process's threads; else the
    // period of its least frequent collective (one per step in a DP loop);
    // else the whole active span.
    std::vector<uint64_t> durations;
    if (!options.step_name.empty()) {
      for (const TrackSlice& s : t.tracks.slices) {
        if (t.tracks.String(s.name) != options.step_name || s.start < a.from || s.end > a.to) continue;
        int32_t tid = TidOf(t.tracks, s.track);
        if (tid && t.TgidOf(tid) == key.first) durations.push_back(s.end - s.start);
      }
      if (!durations.empty()) g.step_source = "nvtx " + options.step_name;
    }
    if (durations.empty()) {
      std::map<std::pair<uint64_t, std::string>, std::vector<uint64_t>> starts;
      for (const CollectiveCall& c : n.collectives)
        if (c.gpu == index) starts[{c.comm, c.op}].push_back(c.start);
      const std::vector<uint64_t>* fewest = nullptr;
      for (const auto& [k, v] : starts)
        if (v.size() >= 2 && (!fewest || v.size() < fewest->size())) fewest = &v;
      if (fewest) {
        for (size_t i = 1; i < fewest->size(); ++i) durations.push_back((*fewest)[i] - (*fewest)[i - 1]);
        g.step_source = "collective period";
      }
    }
    if (durations.empty()) {
      durations.push_back(g.active_ns);
      g.step_source = "active span";
    }
    g.steps = durations.size();
    g.step_ns = Median(durations);
    n.gpus.push_back(std::move(g));
  }
  std::stable_sort(n.collectives.begin(), n.collectives.end(),
                   [](const CollectiveCall& x, const CollectiveCall& y) { return x.start < y.start; });
  return n;
}

}  // namespace gpunoise::analyze
