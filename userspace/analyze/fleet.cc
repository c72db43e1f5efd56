#include "analyze/fleet.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "analyze/format_util.h"

namespace gpunoise::analyze {
namespace {

// The median; of an even count, the mean of the middle two (with two
// machines the upper one alone would make the later machine the reference).
template <typename T>
T MedianOf(std::vector<T> v) {
  if (v.empty()) return T{};
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  if (v.size() % 2) return v[mid];
  T upper = v[mid];
  T lower = *std::max_element(v.begin(), v.begin() + mid);
  return lower + (upper - lower) / 2;
}

// One collective instance: the calls of every rank that made it. Without a
// communicator id the op is part of the key (calls of one op kind in order).
// The message size, where the typed payload gave it, is too: ranks whose
// k-th calls on a communicator differ in size are not at the same instance
// (a call missing from one rank's capture shifts its sequence), and are
// not matched.
using InstanceKey = std::tuple<uint64_t, uint32_t, std::string, uint64_t>;
struct CallRef {
  uint32_t machine, call;
};

InstanceKey KeyOf(const CollectiveCall& c) { return {c.comm, c.seq, c.comm ? std::string() : c.op, c.bytes}; }

std::string RankList(const NodeSummary& n) {
  std::set<int32_t> ranks;
  for (const auto& g : n.gpus)
    if (g.rank >= 0) ranks.insert(g.rank);
  if (ranks.empty()) return "ranks unknown";
  std::string s = ranks.size() == 1 ? "rank " : "ranks ";
  bool first = true;
  for (int32_t r : ranks) {
    s += (first ? "" : ",") + std::to_string(r);
    first = false;
  }
  return s;
}

double MedianD(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct CpuMetric {
  const char* name;
  const char* phrase;  // "focus threads waited {} of their time in run queues"
  double floor;        // the least spread that counts: below it the fleet is "equal"
  bool share;
  double (*get)(const NodeSummary&);
};

double Ratio(uint64_t a, uint64_t b) { return b ? static_cast<double>(a) / static_cast<double>(b) : 0; }

const CpuMetric kCpuMetrics[] = {
    {"focus_wait_share", "its focus threads waited {} of their time in run queues", 0.005, true,
     [](const NodeSummary& n) { return Ratio(n.cpu.focus_wait_ns, n.cpu.focus_observed_ns); }},
    {"focus_interrupted_share", "its focus threads were interrupted {} of their time", 0.002, true,
     [](const NodeSummary& n) { return Ratio(n.cpu.focus_interrupted_ns, n.cpu.focus_observed_ns); }},
    {"softirq_share", "its busiest CPU spent {} in softirqs", 0.005, true,
     [](const NodeSummary& n) { return n.cpu.max_softirq_share; }},
    {"nic_drops_per_s", "its NICs dropped {} packets per second", 1.0, false,
     [](const NodeSummary& n) {
       double s = static_cast<double>(n.end_ns > n.start_ns ? n.end_ns - n.start_ns : 0) / 1e9;
       return s > 0 ? static_cast<double>(n.cpu.nic_drops) / s : 0;
     }},
    {"tx_timeouts", "its NICs had {} TX timeouts", 0.5, false,
     [](const NodeSummary& n) { return static_cast<double>(n.cpu.tx_timeouts); }},
    {"rdma_errors_per_s", "its RDMA ports counted {} errors per second (link errors, drops, retransmission triggers)",
     1.0, false,
     [](const NodeSummary& n) {
       double s = static_cast<double>(n.end_ns > n.start_ns ? n.end_ns - n.start_ns : 0) / 1e9;
       return s > 0 ? static_cast<double>(n.cpu.rdma_errors) / s : 0;
     }},
    {"rdma_xmit_wait_per_s", "its RDMA ports waited {} ticks per second to send (port_xmit_wait: congestion)",
     1000.0, false,
     [](const NodeSummary& n) {
       double s = static_cast<double>(n.end_ns > n.start_ns ? n.end_ns - n.start_ns : 0) / 1e9;
       return s > 0 ? static_cast<double>(n.cpu.rdma_xmit_wait) / s : 0;
     }},
};

std::string FormatMetric(const CpuMetric& m, double v) {
  return m.share ? FormatShare(v) : fmt::format("{:.3g}", v);
}

// Scores every machine's CPU-side figures against the fleet's median and MAD.
void ScoreCpuSide(FleetAnalysis* fa) {
  const size_t m = fa->nodes.size();
  fa->cpu_robust = m >= kMinMachinesForRobustScore;
  for (const CpuMetric& metric : kCpuMetrics) {
    std::vector<double> values;
    for (const auto& n : fa->nodes) values.push_back(metric.get(n));
    double median = MedianD(values);
    std::vector<double> dev;
    for (double v : values) dev.push_back(std::fabs(v - median));
    double mad = MedianD(dev);
    for (size_t i = 0; i < m; ++i) {
      CpuScore s;
      s.machine = i;
      s.metric = metric.name;
      s.value = values[i];
      s.median = median;
      s.mad = mad;
      if (fa->cpu_robust) s.score = 0.6745 * (values[i] - median) / std::max(mad, metric.floor);
      fa->cpu_scores.push_back(std::move(s));
    }
  }
}

// Without collective lags: the machine that stands out on the CPU side.
void CpuOutlierFinding(FleetAnalysis* fa, const FleetOptions& options) {
  if (!fa->cpu_robust) {
    fa->notes.push_back(fmt::format("CPU side: no robust score is possible with {} machine{} (median and MAD need "
                                    "at least {})",
                                    fa->nodes.size(), fa->nodes.size() == 1 ? "" : "s", kMinMachinesForRobustScore));
    return;
  }
  const CpuScore* top = nullptr;
  for (const CpuScore& s : fa->cpu_scores)
    if (s.score >= options.min_robust_score && (!top || s.score > top->score)) top = &s;
  if (!top) return;
  const CpuMetric* metric = nullptr;
  for (const CpuMetric& m : kCpuMetrics)
    if (top->metric == m.name) metric = &m;
  const NodeSummary& n = fa->nodes[top->machine];
  fa->straggler = top->machine;
  Finding f;
  f.detector = "straggler";
  f.kind = "cpu_outlier";
  f.culprit = n.machine;
  f.culprit_kind = "machine";
  f.start = n.start_ns;
  f.end = n.end_ns;
  std::string what = fmt::format(fmt::runtime(metric->phrase), FormatMetric(*metric, top->value));
  f.title = fmt::format("{} stands out on the CPU side: {} (fleet median {}, robust score {:.1f})", n.machine, what,
                        FormatMetric(*metric, top->median), top->score);
  for (const Finding& c : n.findings)
    if (c.cost_ns > 0 && fa->causes.size() < 3) fa->causes.push_back(c);
  if (!fa->causes.empty()) {
    f.cost_ns = fa->causes.front().cost_ns;
    f.cost_share = fa->causes.front().cost_share;
    f.title += fmt::format("; likely cause on {}: [{}] {}", n.machine, fa->causes.front().detector,
                           fa->causes.front().title);
  }
  for (const CpuScore& s : fa->cpu_scores)
    if (s.machine == top->machine && s.score >= options.min_robust_score)
      for (const CpuMetric& mm : kCpuMetrics)
        if (s.metric == mm.name)
          f.evidence.push_back(fmt::format("{}: {} (fleet median {}, MAD {}, robust score {:.1f})", s.metric,
                                           FormatMetric(mm, s.value), FormatMetric(mm, s.median),
                                           FormatMetric(mm, s.mad), s.score));
  for (const Finding& c : fa->causes)
    f.evidence.push_back(fmt::format("cause on {}: [{}] {} (cost {})", n.machine, c.detector, c.title,
                                     FormatNs(c.cost_ns)));
  f.metrics = {{"robust_score", top->score}, {"value", top->value}, {"median", top->median}, {"mad", top->mad}};
  fa->findings.push_back(std::move(f));
}

}  // namespace

FleetAnalysis AnalyzeFleet(std::vector<NodeSummary> nodes, const FleetOptions& options) {
  FleetAnalysis fa;
  fa.nodes = std::move(nodes);
  const size_t m = fa.nodes.size();
  fa.machines.resize(m);

  // Wall-clock offset of each machine's BOOTTIME, then the collectives'
  // correction on top of it.
  std::vector<int64_t> base(m, 0), corr(m, 0);
  for (size_t i = 0; i < m; ++i) {
    fa.machines[i].machine = i;
    if (fa.nodes[i].has_realtime) {
      base[i] = fa.nodes[i].realtime_minus_boottime;
      fa.machines[i].alignment.method = "REALTIME";
    } else {
      fa.machines[i].alignment.method = "none";
      fa.machines[i].alignment.note = "no REALTIME clock snapshot: on its own BOOTTIME";
    }
  }

  std::map<InstanceKey, std::vector<CallRef>> instances;
  for (uint32_t i = 0; i < m; ++i) {
    const auto& calls = fa.nodes[i].collectives;
    for (uint32_t c = 0; c < calls.size(); ++c) instances[KeyOf(calls[c])].push_back({i, c});
  }
  auto call = [&](const CallRef& r) -> const CollectiveCall& { return fa.nodes[r.machine].collectives[r.call]; };
  auto on_two_machines = [](const std::vector<CallRef>& refs) {
    for (const CallRef& r : refs)
      if (r.machine != refs.front().machine) return true;
    return false;
  };

  // Alignment: each machine's residual against the median end of every
  // instance that ends together; its correction is the median residual.
  if (options.align_collectives) {
    std::vector<std::vector<int64_t>> residuals(m);
    for (int round = 0; round < 3; ++round) {
      for (auto& r : residuals) r.clear();
      for (const auto& [key, refs] : instances) {
        if (!on_two_machines(refs) || !EndsTogether(call(refs.front()).op)) continue;
        std::vector<int64_t> ends;
        ends.reserve(refs.size());
        for (const CallRef& r : refs) ends.push_back(static_cast<int64_t>(call(r).end) + base[r.machine] + corr[r.machine]);
        int64_t ref = MedianOf(ends);
        for (size_t k = 0; k < refs.size(); ++k) residuals[refs[k].machine].push_back(ends[k] - ref);
      }
      for (size_t i = 0; i < m; ++i)
        if (!residuals[i].empty()) corr[i] -= MedianOf(residuals[i]);
    }
    for (size_t i = 0; i < m; ++i) {
      MachineAlignment& al = fa.machines[i].alignment;
      if (residuals[i].empty()) {
        if (fa.nodes[i].has_realtime && !fa.nodes[i].collectives.empty())
          al.note = "no all-reduce, all-gather or reduce-scatter it shares with another machine: REALTIME only";
        continue;
      }
      std::vector<int64_t> dev;
      int64_t med = MedianOf(residuals[i]);
      for (int64_t r : residuals[i]) dev.push_back(std::llabs(r - med));
      al.method = "collectives";
      al.realtime_correction_ns = corr[i];
      al.spread_ns = MedianOf(dev);
      al.instances = residuals[i].size();
    }
  }

  // Arrival lags and the delay each machine imposed.
  std::map<std::pair<uint32_t, uint32_t>, RankLag> ranks;
  std::vector<uint64_t> imposed(m, 0), peers_wait(m, 0), lag_sum(m, 0), lag_count(m, 0);
  for (const auto& [key, refs] : instances) {
    if (!on_two_machines(refs)) continue;
    ++fa.matched_instances;
    std::vector<int64_t> starts(refs.size());
    int64_t first = INT64_MAX;
    for (size_t k = 0; k < refs.size(); ++k) {
      starts[k] = static_cast<int64_t>(call(refs[k]).start) + base[refs[k].machine] + corr[refs[k].machine];
      first = std::min(first, starts[k]);
    }
    // The machine of the latest start, and the latest start of any other.
    size_t last = 0;
    for (size_t k = 1; k < refs.size(); ++k)
      if (starts[k] > starts[last]) last = k;
    const uint32_t culprit = refs[last].machine;
    // Waits are summed as gaps to the culprit's start: a sum of absolute
    // timestamps overflows int64 past five machines.
    int64_t others_latest = INT64_MIN;
    uint64_t others_wait = 0;
    size_t others = 0;
    for (size_t k = 0; k < refs.size(); ++k) {
      const CallRef& r = refs[k];
      uint64_t lag = static_cast<uint64_t>(starts[k] - first);
      RankLag& rl = ranks[{r.machine, call(r).gpu}];
      rl.machine = r.machine;
      rl.gpu = call(r).gpu;
      rl.rank = call(r).rank;
      ++rl.instances;
      rl.mean_lag_ns += lag;  // a sum until divided below
      rl.max_lag_ns = std::max(rl.max_lag_ns, lag);
      if (k == last) ++rl.last;
      lag_sum[r.machine] += lag;
      ++lag_count[r.machine];
      if (r.machine != culprit) {
        others_latest = std::max(others_latest, starts[k]);
        others_wait += static_cast<uint64_t>(starts[last] - starts[k]);
        ++others;
      }
    }
    if (others && starts[last] > others_latest) {
      imposed[culprit] += static_cast<uint64_t>(starts[last] - others_latest);
      peers_wait[culprit] += others_wait;
    }
  }
  for (auto& [k, rl] : ranks) {
    if (rl.instances) rl.mean_lag_ns /= rl.instances;
    fa.ranks.push_back(rl);
  }

  // Per-machine rows, per step.
  std::vector<uint64_t> machine_steps;
  for (size_t i = 0; i < m; ++i) {
    const NodeSummary& n = fa.nodes[i];
    MachineRow& row = fa.machines[i];
    std::vector<uint64_t> step_ns;
    uint64_t busy = 0, active = 0;
    for (const auto& g : n.gpus) {
      row.steps = std::max(row.steps, g.steps);
      step_ns.push_back(g.step_ns);
      busy += g.busy_ns;
      active += g.active_ns;
    }
    row.step_ns = MedianOf(step_ns);
    row.busy_share = active ? static_cast<double>(busy) / static_cast<double>(active) : 0;
    if (!n.gpus.empty() && row.steps) {
      uint64_t div = n.gpus.size() * row.steps;
      for (const auto& g : n.gpus) {
        row.host_wait_ns += g.host_wait_ns / div;
        row.kernel_wait_ns += g.kernel_wait_ns / div;
        row.other_idle_ns += g.other_idle_ns / div;
        row.collective_ns += g.collective_ns / div;
        row.compute_ns += g.compute_ns / div;
      }
      machine_steps.push_back(row.steps);
    }
    row.mean_lag_ns = lag_count[i] ? lag_sum[i] / lag_count[i] : 0;
  }
  fa.steps = std::max<uint64_t>(1, MedianOf(machine_steps));
  for (size_t i = 0; i < m; ++i) {
    fa.machines[i].cost_per_step_ns = imposed[i] / fa.steps;
    fa.machines[i].peers_wait_per_step_ns = peers_wait[i] / fa.steps;
  }
  ScoreCpuSide(&fa);
  if (!fa.matched_instances) {
    if (m > 1)
      fa.notes.push_back("no collective instance was seen on two machines: no arrival lags (GPU data with NCCL "
                         "kernels from every machine is needed); machines compared on the CPU side");
    CpuOutlierFinding(&fa, options);
  }

  // Ranked by what each costs the job; without lags, by how far it stands
  // out on the CPU side.
  std::vector<double> top_score(m, 0);
  for (const CpuScore& s : fa.cpu_scores) top_score[s.machine] = std::max(top_score[s.machine], s.score);
  std::vector<MachineRow> ranked = fa.machines;
  std::stable_sort(ranked.begin(), ranked.end(), [&](const MachineRow& a, const MachineRow& b) {
    return std::tie(a.cost_per_step_ns, a.mean_lag_ns, top_score[a.machine]) >
           std::tie(b.cost_per_step_ns, b.mean_lag_ns, top_score[b.machine]);
  });
  fa.machines = ranked;
  if (fa.machines.empty() || fa.machines.front().cost_per_step_ns < options.min_lag_per_step_ns) return fa;

  // The straggler and its likely cause.
  const MachineRow& top = fa.machines.front();
  const NodeSummary& n = fa.nodes[top.machine];
  fa.straggler = top.machine;
  // Per GPU: one slow GPU of eight is a GPU-side cause even though the
  // machine's average hardly moves. The straggler's worst GPU against the
  // median of every other machine's GPUs, per step.
  auto per_step = [](uint64_t ns, uint64_t steps) { return steps ? ns / steps : 0; };
  std::vector<uint64_t> peer_compute, peer_host;
  for (size_t i = 0; i < m; ++i)
    if (i != top.machine)
      for (const GpuSummary& g : fa.nodes[i].gpus) {
        peer_compute.push_back(per_step(g.compute_ns, g.steps));
        peer_host.push_back(per_step(g.host_wait_ns, g.steps));
      }
  uint64_t top_compute = 0, top_host = 0;
  for (const GpuSummary& g : n.gpus) {
    top_compute = std::max(top_compute, per_step(g.compute_ns, g.steps));
    top_host = std::max(top_host, per_step(g.host_wait_ns, g.steps));
  }
  int64_t compute_excess = static_cast<int64_t>(top_compute) - static_cast<int64_t>(MedianOf(peer_compute));
  int64_t host_excess = static_cast<int64_t>(top_host) - static_cast<int64_t>(MedianOf(peer_host));
  const bool gpu_side = top.steps && compute_excess > 0 &&
                        static_cast<double>(compute_excess) >= 0.5 * static_cast<double>(top.cost_per_step_ns);

  Finding f;
  f.detector = "straggler";
  f.culprit = n.machine;
  f.culprit_kind = "machine";
  f.start = n.start_ns;
  f.end = n.end_ns;
  f.cost_ns = imposed[top.machine];
  f.cost_share = top.step_ns ? static_cast<double>(top.cost_per_step_ns) / static_cast<double>(top.step_ns) : 0;
  f.title = fmt::format("{} ({}) holds the job back {} per step: its collectives start {} after its peers' "
                        "on average, and its peers wait {} per step for it",
                        n.machine, RankList(n), FormatNs(top.cost_per_step_ns), FormatNs(top.mean_lag_ns),
                        FormatNs(top.peers_wait_per_step_ns));
  if (gpu_side) {
    f.kind = "gpu_side";
    f.title += fmt::format("; GPU-side cause: its compute kernels take {} more per step than its peers' (median)",
                           FormatNs(static_cast<uint64_t>(compute_excess)));
  } else {
    for (const Finding& c : n.findings)
      if (c.cost_ns > 0 && fa.causes.size() < 3) fa.causes.push_back(c);
    f.kind = fa.causes.empty() ? "unexplained" : "host_side";
    if (!fa.causes.empty())
      f.title += fmt::format("; likely cause on {}: [{}] {}", n.machine, fa.causes.front().detector,
                             fa.causes.front().title);
    else
      f.title += "; none of its own findings explains it";
  }
  uint64_t last_total = 0, instances_total = 0;
  for (const RankLag& r : fa.ranks)
    if (r.machine == top.machine) {
      last_total += r.last;
      instances_total += r.instances;
      const GpuSummary* g = r.gpu < n.gpus.size() ? &n.gpus[r.gpu] : nullptr;
      f.evidence.push_back(fmt::format("{} rank {}: mean arrival lag {}, worst {}, last to arrive at {} of {} "
                                       "collective instances",
                                       g ? g->gpu : "GPU", r.rank, FormatNs(r.mean_lag_ns), FormatNs(r.max_lag_ns),
                                       r.last, r.instances));
    }
  f.evidence.push_back(fmt::format("per step, the worst of {}'s GPUs: compute {} (peers' GPUs, median {}), host wait "
                                   "{} (peers' median {}); machine average in collectives {}",
                                   n.machine, FormatNs(top_compute), FormatNs(MedianOf(peer_compute)),
                                   FormatNs(top_host), FormatNs(MedianOf(peer_host)), FormatNs(top.collective_ns)));
  for (const Finding& c : fa.causes)
    f.evidence.push_back(fmt::format("cause on {}: [{}] {} (cost {})", n.machine, c.detector, c.title,
                                     FormatNs(c.cost_ns)));
  f.metrics = {{"cost_per_step_ns", static_cast<double>(top.cost_per_step_ns)},
               {"peers_wait_per_step_ns", static_cast<double>(top.peers_wait_per_step_ns)},
               {"mean_lag_ns", static_cast<double>(top.mean_lag_ns)},
               {"steps", static_cast<double>(fa.steps)},
               {"instances", static_cast<double>(instances_total)},
               {"last_share", instances_total ? static_cast<double>(last_total) / static_cast<double>(instances_total) : 0},
               {"compute_excess_per_step_ns", static_cast<double>(compute_excess)},
               {"host_wait_excess_per_step_ns", static_cast<double>(host_excess)}};
  fa.findings.push_back(std::move(f));
  return fa;
}

}  // namespace gpunoise::analyze
