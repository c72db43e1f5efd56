#include "model/kernel_aggregates.h"

#include <algorithm>

namespace gpunoise::model {
namespace {

// A counter that went down was reset (its map entry deleted and recreated):
// everything it holds now is new.
uint64_t Sub(uint64_t later, uint64_t earlier) { return later >= earlier ? later - earlier : later; }

template <typename T, size_t N>
void SubArray(T (&out)[N], const T (&later)[N], const T (&earlier)[N]) {
  for (size_t i = 0; i < N; ++i) out[i] = Sub(later[i], earlier[i]);
}

// Pairs each entry of `later` with the entry of `earlier` that has the
// same key (or a zero one), and calls fn(later_entry, earlier_entry).
template <typename T, typename KeyFn, typename Fn>
void Pair(const std::vector<T>& earlier, const std::vector<T>& later, KeyFn key, Fn fn) {
  using Key = decltype(key(later.front()));
  std::map<Key, const T*> before;
  for (const T& e : earlier) before.emplace(key(e), &e);
  static const T kZero{};
  for (const T& l : later) {
    auto it = before.find(key(l));
    fn(l, it == before.end() ? kZero : *it->second);
  }
}

}  // namespace

std::string_view TaskClassName(TaskClass c) {
  switch (c) {
    case TaskClass::kIdle: return "idle";
    case TaskClass::kFocus: return "focus";
    case TaskClass::kKernel: return "kernel";
    case TaskClass::kOther: return "other";
  }
  return "other";
}

std::string_view SampleContextName(SampleContext c) {
  switch (c) {
    case SampleContext::kTask: return "task";
    case SampleContext::kSoftirq: return "softirq";
    case SampleContext::kHardirq: return "hardirq";
    case SampleContext::kIdle: return "idle";
  }
  return "task";
}

AggregateSnapshot Delta(const AggregateSnapshot& earlier, const AggregateSnapshot& later) {
  AggregateSnapshot d;
  d.ts = later.ts;
  Pair(earlier.softirqs, later.softirqs, [](const SoftirqCpuCounters& c) { return c.cpu; },
       [&](const SoftirqCpuCounters& l, const SoftirqCpuCounters& e) {
         SoftirqCpuCounters out;
         out.cpu = l.cpu;
         SubArray(out.count, l.count, e.count);
         SubArray(out.ns, l.ns, e.ns);
         d.softirqs.push_back(out);
       });
  Pair(earlier.hardirqs, later.hardirqs,
       [](const HardirqCounter& c) { return std::make_pair(c.cpu, c.irq); },
       [&](const HardirqCounter& l, const HardirqCounter& e) {
         d.hardirqs.push_back({l.cpu, l.irq, Sub(l.count, e.count), Sub(l.ns, e.ns)});
       });
  Pair(earlier.vectors, later.vectors, [](const VectorCpuCounters& c) { return c.cpu; },
       [&](const VectorCpuCounters& l, const VectorCpuCounters& e) {
         VectorCpuCounters out;
         out.cpu = l.cpu;
         SubArray(out.count, l.count, e.count);
         SubArray(out.ns, l.ns, e.ns);
         d.vectors.push_back(out);
       });
  Pair(earlier.focus, later.focus, [](const FocusCpuCounters& c) { return c.cpu; },
       [&](const FocusCpuCounters& l, const FocusCpuCounters& e) {
         FocusCpuCounters out;
         out.cpu = l.cpu;
         out.switches = Sub(l.switches, e.switches);
         out.preempted = Sub(l.preempted, e.preempted);
         SubArray(out.preempted_by, l.preempted_by, e.preempted_by);
         out.oncpu_ns = Sub(l.oncpu_ns, e.oncpu_ns);
         out.wait_woken_ns = Sub(l.wait_woken_ns, e.wait_woken_ns);
         out.wait_preempted_ns = Sub(l.wait_preempted_ns, e.wait_preempted_ns);
         out.waits = Sub(l.waits, e.waits);
         out.hardirq_count = Sub(l.hardirq_count, e.hardirq_count);
         out.hardirq_ns = Sub(l.hardirq_ns, e.hardirq_ns);
         out.softirq_count = Sub(l.softirq_count, e.softirq_count);
         out.softirq_ns = Sub(l.softirq_ns, e.softirq_ns);
         out.wait_hardirq_ns = Sub(l.wait_hardirq_ns, e.wait_hardirq_ns);
         out.wait_softirq_ns = Sub(l.wait_softirq_ns, e.wait_softirq_ns);
         out.wait_unknown_ns = Sub(l.wait_unknown_ns, e.wait_unknown_ns);
         d.focus.push_back(out);
       });
  Pair(earlier.runqueue, later.runqueue, [](const RunqueueCpuHistograms& c) { return c.cpu; },
       [&](const RunqueueCpuHistograms& l, const RunqueueCpuHistograms& e) {
         d.runqueue.push_back({l.cpu, HistogramDelta(e.all, l.all), HistogramDelta(e.focus, l.focus)});
       });
  Pair(earlier.samples, later.samples, [](const SampleCounter& c) { return c.Key(); },
       [&](const SampleCounter& l, const SampleCounter& e) {
         SampleCounter out = l;
         out.count = Sub(l.count, e.count);
         d.samples.push_back(out);
       });
  Pair(earlier.culprits, later.culprits, [](const RunqueueCulprit& c) { return std::make_pair(c.cpu, c.tid); },
       [&](const RunqueueCulprit& l, const RunqueueCulprit& e) {
         RunqueueCulprit out = l;
         out.wait_ns = Sub(l.wait_ns, e.wait_ns);
         out.waits = Sub(l.waits, e.waits);
         if (out.wait_ns || out.waits) d.culprits.push_back(out);
       });
  d.net = Delta(earlier.net, later.net);
  for (const auto& [name, value] : later.kernel) {
    auto it = earlier.kernel.find(name);
    d.kernel[name] = Sub(value, it == earlier.kernel.end() ? 0 : it->second);
  }
  d.dql_stalls = Sub(later.dql_stalls, earlier.dql_stalls);
  d.lost = Sub(later.lost, earlier.lost);
  return d;
}

Log2Histogram TotalRunqueue(const AggregateSnapshot& s, bool focus_only) {
  Log2Histogram total;
  for (const auto& cpu : s.runqueue) total.Add(focus_only ? cpu.focus : cpu.all);
  return total;
}

}  // namespace gpunoise::model
