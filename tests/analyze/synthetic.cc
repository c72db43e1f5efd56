#include "analyze/synthetic.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace gpunoise::testing {

void Synth::Add(uint64_t ts, uint32_t cpu, int32_t tid, model::Payload payload) {
  items_.push_back({ts, order_++, model::Event{ts, cpu, tid, std::move(payload)}});
}

Synth& Synth::Switch(uint64_t ts, uint32_t cpu, int32_t prev, int32_t next, int64_t state) {
  model::SchedSwitch s;
  s.prev_tid = prev;
  s.prev_state = state;
  s.next_tid = next;
  Add(ts, cpu, prev, s);
  return *this;
}

Synth& Synth::Wake(uint64_t ts, uint32_t waker_cpu, int32_t tid, int32_t target_cpu) {
  model::SchedWaking w;
  w.tid = tid;
  w.target_cpu = target_cpu;
  Add(ts, waker_cpu, 0, w);
  return *this;
}

Synth& Synth::WakeBy(uint64_t ts, uint32_t waker_cpu, int32_t waker, int32_t tid, int32_t target_cpu,
                     uint16_t flags) {
  model::SchedWaking w;
  w.tid = tid;
  w.target_cpu = target_cpu;
  Add(ts, waker_cpu, waker, w);
  items_.back().event.common_flags = flags;
  return *this;
}

Synth& Synth::Migrate(uint64_t ts, uint32_t cpu, int32_t tid, int32_t from, int32_t to) {
  model::SchedMigrate m;
  m.tid = tid;
  m.orig_cpu = from;
  m.dest_cpu = to;
  Add(ts, cpu, 0, m);
  return *this;
}

Synth& Synth::Irq(uint32_t cpu, uint64_t start, uint64_t end, int32_t irq) {
  Add(start, cpu, 0, model::IrqEntry{irq});
  Add(end, cpu, 0, model::IrqExit{irq, 1});
  return *this;
}

Synth& Synth::Softirq(uint32_t cpu, uint64_t start, uint64_t end, uint32_t vec) {
  Add(start, cpu, 0, model::SoftirqEntry{vec});
  Add(end, cpu, 0, model::SoftirqExit{vec});
  return *this;
}

Synth& Synth::Net(uint64_t ts, uint32_t cpu, model::NetTraceKind kind, std::string device, int64_t value,
                  int64_t budget, int32_t queue, std::string reason) {
  model::NetTraceEvent e;
  e.ts = ts;
  e.cpu = cpu;
  e.kind = kind;
  e.value = value;
  e.budget = budget;
  e.queue = queue;
  net_.push_back({e, {std::move(device), std::move(reason)}});
  return *this;
}

Synth& Synth::Loss(uint32_t cpu, uint64_t from, uint64_t to) {
  losses_.push_back({cpu, from, to});
  return *this;
}

Synth& Synth::Thread(int32_t tid, int32_t tgid, std::string name) {
  builder_.OnThread(tid, tgid, name);
  return *this;
}

Synth& Synth::Process(int32_t pid, std::string name, bool kthread) {
  builder_.OnProcess(pid, 1, name, kthread);
  return *this;
}

Synth& Synth::IrqName(int32_t irq, std::string name) {
  builder_.OnIrqName(irq, name);
  return *this;
}

Synth& Synth::Alternate(uint32_t cpu, uint64_t from, uint64_t to, int32_t a, uint64_t a_run, int32_t b,
                        uint64_t b_run) {
  Switch(from, cpu, 0, a);
  uint64_t t = from;
  while (t + a_run + b_run <= to) {
    Switch(t + a_run, cpu, a, b, 256);
    Switch(t + a_run + b_run, cpu, b, a, 256);
    t += a_run + b_run;
  }
  return *this;
}

Synth& Synth::RunSleep(uint32_t cpu, uint64_t from, uint64_t to, int32_t tid, uint64_t run, uint64_t sleep,
                       uint64_t latency) {
  Switch(from, cpu, 0, tid);
  uint64_t t = from;
  while (t + run + sleep + latency <= to) {
    Switch(t + run, cpu, tid, 0, 1);
    Wake(t + run + sleep, cpu, tid, static_cast<int32_t>(cpu));
    Switch(t + run + sleep + latency, cpu, 0, tid);
    t += run + sleep + latency;
  }
  return *this;
}

Synth& Synth::PeriodicIrq(uint32_t cpu, uint64_t from, uint64_t to, int32_t irq, uint64_t period, uint64_t len) {
  for (uint64_t t = from + period / 2; t + len < to; t += period) Irq(cpu, t, t + len, irq);
  return *this;
}

Synth& Synth::PeriodicSoftirq(uint32_t cpu, uint64_t from, uint64_t to, uint32_t vec, uint64_t period,
                              uint64_t len) {
  for (uint64_t t = from + period / 3; t + len < to; t += period) Softirq(cpu, t, t + len, vec);
  return *this;
}

analyze::Timeline Synth::Build() {
  // Per CPU in time order; at equal times, in the order they were added.
  std::stable_sort(items_.begin(), items_.end(), [](const Item& a, const Item& b) {
    return a.ts != b.ts ? a.ts < b.ts : a.order < b.order;
  });
  size_t loss = 0;
  std::sort(losses_.begin(), losses_.end(), [](const LossItem& a, const LossItem& b) { return a.to < b.to; });
  for (auto& item : items_) {
    while (loss < losses_.size() && losses_[loss].to <= item.ts) {
      builder_.OnCpuLoss(losses_[loss].cpu, losses_[loss].from, losses_[loss].to);
      ++loss;
    }
    builder_.OnEvent(item.event);
  }
  for (auto& [e, strings] : net_) {
    e.device = strings.first;
    e.reason = strings.second;
    builder_.OnNetEvent(e);
  }
  return builder_.Finish();
}

analyze::Analysis AnalyzeOrDie(const analyze::Timeline& t, std::vector<std::string> focus,
                               std::vector<std::string> thresholds) {
  analyze::AnalysisOptions options;
  options.focus = std::move(focus);
  for (const auto& th : thresholds) EXPECT_TRUE(options.thresholds.Set(th).ok()) << th;
  auto a = analyze::Analyze(t, options);
  EXPECT_TRUE(a.ok()) << (a.ok() ? "" : a.error().message);
  return a.ok() ? std::move(a).value() : analyze::Analysis{};
}

std::vector<analyze::Finding> FindingsOf(const analyze::Analysis& a, std::string_view detector) {
  std::vector<analyze::Finding> out;
  for (const auto& f : a.findings)
    if (f.detector == detector) out.push_back(f);
  return out;
}

}  // namespace gpunoise::testing
