#include "analyze/interval_replay.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "analyze/attribution.h"
#include "analyze/interference_detector.h"
#include "model/net_trace_event.h"

namespace gpunoise::analyze {
namespace {

constexpr uint64_t kSampleNs = 1'000'000;  // one sampler hit per millisecond of running

uint64_t Packets(double integrated) { return integrated > 0 ? static_cast<uint64_t>(std::llround(integrated)) : 0; }

class Builder {
 public:
  Builder(const AnalysisContext& ctx, Replay* out) : ctx_(ctx), t_(ctx.t()), out_(out) {
    for (const auto& [irq, q] : ctx.nic_irqs) {
      model::IrqInfo info;
      info.irq = irq;
      info.name = t_.IrqName(irq);
      info.device = q.device;
      info.queue = q.queue;
      out->irqs[irq] = info;
    }
  }

  void Fill(uint64_t a, uint64_t b, model::AggregateSnapshot* d) {
    d->ts = b;
    Cpus(a, b, d);
    Focus(a, b, d);
    Net(a, b, d);
    KernelHealth(a, b, d);
  }

 private:
  model::NetDeviceKey Key(const std::string& device) {
    auto [it, fresh] = keys_.try_emplace(device, model::NetDeviceKey{0, static_cast<uint32_t>(keys_.size() + 1)});
    if (fresh) out_->names.devices[it->second] = device;
    return it->second;
  }
  uint32_t Reason(const std::string& reason) {
    auto [it, fresh] = reasons_.try_emplace(reason, static_cast<uint32_t>(reasons_.size() + 1));
    if (fresh) out_->names.drop_reasons[it->second] = reason;
    return it->second;
  }

  void Cpus(uint64_t a, uint64_t b, model::AggregateSnapshot* d) {
    for (uint32_t cpu = 0; cpu < t_.cpus.size(); ++cpu) {
      const CpuTimeline& c = t_.cpus[cpu];
      if (!c.has_data()) continue;
      model::SoftirqCpuCounters s;
      s.cpu = cpu;
      bool any = false;
      for (const IntrSlice& x : c.softirqs) {
        if (x.end <= a || x.start >= b || x.id < 0 || static_cast<uint32_t>(x.id) >= model::kNumSoftirqVecs) continue;
        s.ns[x.id] += Overlap(x.start, x.end, a, b);
        if (x.start >= a) ++s.count[x.id];
        any = true;
      }
      if (any) d->softirqs.push_back(s);
      std::map<int32_t, model::HardirqCounter> irqs;
      for (const IntrSlice& x : c.hardirqs) {
        if (x.end <= a || x.start >= b || x.id < 0) continue;
        auto& h = irqs[x.id];
        h.cpu = cpu;
        h.irq = x.id;
        h.ns += Overlap(x.start, x.end, a, b);
        if (x.start >= a) ++h.count;
      }
      for (auto& [id, h] : irqs) d->hardirqs.push_back(h);
      // The sampler: a hit per millisecond each task (or the idle task) ran.
      std::map<int32_t, uint64_t> ran;
      for (const RunSlice& r : c.runs)
        if (r.end > a && r.start < b) ran[r.tid] += Overlap(r.start, r.end, a, b);
      for (const auto& [tid, ns] : ran) {
        model::SampleCounter sc;
        sc.cpu = cpu;
        sc.count = ns / kSampleNs;
        if (!sc.count) continue;
        // The recorder's threads as the monitor's sampler sees its own.
        std::string name = tid <= 0 ? "swapper" : IsRecorderThread(t_, tid) ? "gpunoise" : t_.ThreadName(tid);
        sc.context = tid > 0 ? model::SampleContext::kTask : model::SampleContext::kIdle;
        sc.task_class = tid <= 0                ? model::TaskClass::kIdle
                        : ctx_.focus.count(tid) ? model::TaskClass::kFocus
                                                : model::TaskClass::kOther;
        sc.comm = model::TaskComm(name);
        d->samples.push_back(sc);
      }
    }
  }

  void Focus(uint64_t a, uint64_t b, model::AggregateSnapshot* d) {
    std::map<uint32_t, model::FocusCpuCounters> by_cpu;
    std::map<std::pair<uint32_t, int32_t>, model::RunqueueCulprit> culprits;  // cpu, tid
    for (const auto& [tid, act] : ctx_.activities) {
      for (const ThreadRun& r : act.runs) {
        if (r.end <= a || r.start >= b) continue;
        auto& f = by_cpu[r.cpu];
        const uint64_t from = std::max(r.start, a), to = std::min(r.end, b);
        f.oncpu_ns += to - from;
        Breakdown bd;
        AttributeInterrupts(t_, r.cpu, from, to, &bd);
        for (const auto& [who, ns] : bd) {
          if (who.kind == Culprit::Kind::kHardirq) f.hardirq_ns += ns;
          if (who.kind == Culprit::Kind::kSoftirq) f.softirq_ns += ns;
        }
      }
      for (const ThreadWait& w : act.waits) {
        if (w.end <= a || w.start >= b) continue;
        auto& f = by_cpu[w.cpu];
        uint64_t ns = Overlap(w.start, w.end, a, b);
        (w.after_preemption ? f.wait_preempted_ns : f.wait_woken_ns) += ns;
        if (w.start >= a) ++f.waits;
        // Who had the CPU meanwhile, as the kernel charges a wait.
        Breakdown bd;
        AttributeCpu(t_, w.cpu, std::max(w.start, a), std::min(w.end, b), &bd);
        for (const auto& [who, part] : bd) {
          switch (who.kind) {
            case Culprit::Kind::kHardirq: f.wait_hardirq_ns += part; break;
            case Culprit::Kind::kSoftirq: f.wait_softirq_ns += part; break;
            case Culprit::Kind::kUnknown: f.wait_unknown_ns += part; break;
            case Culprit::Kind::kIdle: break;
            case Culprit::Kind::kTask: {
              if (who.id <= 0 || who.id == tid) break;
              auto& c = culprits[{w.cpu, who.id}];
              c.wait_ns += part;
              if (w.end <= b) ++c.waits;  // once, in the interval where the wait ends
              break;
            }
          }
        }
      }
    }
    for (auto& [cpu, f] : by_cpu) {
      f.cpu = cpu;
      d->focus.push_back(f);
    }
    for (auto& [key, c] : culprits) {
      c.cpu = key.first;
      c.tid = key.second;
      c.tgid = t_.TgidOf(c.tid);
      c.comm = model::TaskComm(IsRecorderThread(t_, c.tid) ? "gpunoise" : t_.ThreadName(c.tid));
      d->culprits.push_back(c);
    }
  }

  void Net(uint64_t a, uint64_t b, model::AggregateSnapshot* d) {
    std::map<std::tuple<std::string, int32_t, uint32_t>, model::NapiCount> napi;  // device, queue, cpu
    std::map<std::pair<std::string, std::string>, uint64_t> drops;             // device, reason
    std::map<std::pair<std::string, int32_t>, uint64_t> timeouts;              // device, queue
    bool poll_records = false, drop_records = false;
    for (const NetRecord& e : t_.net.events) {
      if (e.ts < a || e.ts >= b) continue;
      std::string dev(t_.net.Name(e.device));
      switch (static_cast<model::NetTraceKind>(e.kind)) {
        case model::NetTraceKind::kNapiPoll: {
          poll_records = true;
          auto& n = napi[{dev, e.queue, e.cpu}];
          ++n.polls;
          n.work += static_cast<uint64_t>(std::max<int64_t>(0, e.value));
          if (e.budget > 0 && e.value >= e.budget) ++n.full_budget;
          break;
        }
        case model::NetTraceKind::kDrop: {
          drop_records = true;
          std::string reason(t_.net.Name(e.reason));
          ++drops[{dev, reason.empty() ? "unknown reason" : reason}];
          break;
        }
        case model::NetTraceKind::kTxTimeout: ++timeouts[{dev, e.queue}]; break;
        case model::NetTraceKind::kDqlStall: ++d->dql_stalls; break;
        default: break;
      }
    }
    if (!poll_records) CountersAsNapi(a, b, &napi);
    std::map<std::string, uint64_t> counted_timeouts;
    for (const NetCounter& c : ctx_.net.counters) {
      if (c.metric == model::NetMetric::kDrops && !drop_records) {
        uint64_t n = Packets(IntegrateRate(*c.samples, a, b));
        if (n) drops[{c.device, c.detail}] += n;
      } else if (c.metric == model::NetMetric::kTxTimeouts) {
        counted_timeouts[c.device] += static_cast<uint64_t>(std::max(0.0, Increase(*c.samples, a, b)));
      }
    }
    for (const auto& [dev, n] : counted_timeouts) {
      uint64_t seen = 0;
      for (const auto& [key, m] : timeouts)
        if (key.first == dev) seen += m;
      if (n > seen) timeouts[{dev, -1}] += n - seen;
    }
    for (auto& [key, n] : napi) {
      n.dev = Key(std::get<0>(key));
      n.queue = std::get<1>(key);
      n.cpu = std::get<2>(key);
      if (n.polls || n.work || n.full_budget) d->net.napi.push_back(n);
    }
    for (const auto& [key, n] : drops) {
      model::DropCount c;
      c.dev = Key(key.first);
      c.reason = Reason(key.second);
      c.packets = n;
      d->net.drops.push_back(c);
    }
    for (const auto& [key, n] : timeouts) {
      model::DeviceQueueCount c;
      c.dev = Key(key.first);
      c.queue = key.second;
      c.dir = model::NetDirection::kTxTimeout;
      c.packets = n;
      d->net.devices.push_back(c);
    }
  }

  // /sys/kernel/*_count as the monitor reads them each interval: the rise
  // of each sampled counter within the interval.
  void KernelHealth(uint64_t a, uint64_t b, model::AggregateSnapshot* d) {
    for (const auto& [uuid, samples] : t_.tracks.counters) {
      const model::TrackIdentity* id = t_.tracks.Identity(uuid);
      if (!id || id->kind != model::TrackKind::kKernelHealthCounter || id->detail.empty()) continue;
      // The rise of the samples taken in [a, b) over the last one before
      // (the first sample is the baseline: the counter counts since boot).
      double base = samples.empty() ? 0 : samples.front().value, peak = base;
      for (const CounterSample& c : samples) {
        if (c.ts >= b) break;
        if (c.ts < a) base = peak = c.value;
        else peak = std::max(peak, c.value);
      }
      if (peak > base) d->kernel[id->detail] += Packets(peak - base);
    }
  }

  // Without per-poll records: the collectors' per-CPU NAPI packet counters
  // (else received packets) as NAPI work, each on the queue and IRQ of the
  // device's busiest NAPI instance on that CPU; the per-device full-budget
  // counter on the CPU that did the most of the device's work.
  void CountersAsNapi(uint64_t a, uint64_t b, std::map<std::tuple<std::string, int32_t, uint32_t>, model::NapiCount>* napi) {
    std::map<std::pair<std::string, uint32_t>, std::pair<double, double>> per_cpu;  // napi, rx
    std::map<std::string, double> full;
    for (const NetCounter& c : ctx_.net.counters) {
      if (c.metric == model::NetMetric::kNapiFullBudget) full[c.device] += IntegrateRate(*c.samples, a, b);
      if (c.cpu < 0) continue;
      if (c.metric == model::NetMetric::kCpuNapiPackets)
        per_cpu[{c.device, static_cast<uint32_t>(c.cpu)}].first += IntegrateRate(*c.samples, a, b);
      if (c.metric == model::NetMetric::kCpuRxPackets)
        per_cpu[{c.device, static_cast<uint32_t>(c.cpu)}].second += IntegrateRate(*c.samples, a, b);
    }
    std::map<std::string, std::pair<uint64_t, uint32_t>> busiest;  // device -> work, cpu
    for (const auto& [key, pk] : per_cpu) {
      uint64_t work = Packets(pk.first > 0 ? pk.first : pk.second);
      if (!work) continue;
      int32_t queue = -1, irq = -1;
      uint64_t top = 0;
      for (const NapiInstance& n : ctx_.net.napi)
        if (n.device == key.first && n.cpu == key.second && n.packets > top) {
          top = n.packets;
          queue = n.queue;
          irq = n.irq;
        }
      auto& n = (*napi)[{key.first, queue, key.second}];
      n.work += work;
      n.irq = irq;
      auto& best = busiest[key.first];
      if (work > best.first) best = {work, key.second};
    }
    for (const auto& [device, polls] : full) {
      uint64_t n = Packets(polls);
      if (!n) continue;
      uint32_t cpu = busiest.count(device) ? busiest[device].second : 0;
      for (auto& [key, count] : *napi)
        if (std::get<0>(key) == device && std::get<2>(key) == cpu) {
          count.full_budget += n;
          n = 0;
          break;
        }
      if (n) (*napi)[{device, -1, cpu}].full_budget += n;
    }
  }

  const AnalysisContext& ctx_;
  const Timeline& t_;
  Replay* out_;
  std::map<std::string, model::NetDeviceKey> keys_;
  std::map<std::string, uint32_t> reasons_;
};

}  // namespace

Replay ReplayAsIntervals(const AnalysisContext& ctx, uint64_t interval_ns) {
  Replay out;
  if (!interval_ns || ctx.to <= ctx.from) return out;
  Builder b(ctx, &out);
  for (uint64_t a = ctx.from; a < ctx.to; a += std::min(interval_ns, ctx.to - a)) {
    ReplayedInterval in;
    in.start = a;
    in.end = a + std::min(interval_ns, ctx.to - a);
    b.Fill(in.start, in.end, &in.delta);
    out.intervals.push_back(std::move(in));
  }
  return out;
}

}  // namespace gpunoise::analyze
