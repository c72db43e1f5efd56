// Synthetic event streams for detector tests: a few calls describe who ran
// where and when, what interrupted it, and what the network did; Build()
// feeds them, in per-CPU time order, through the same TimelineBuilder the
// report uses on real traces.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/analysis.h"
#include "analyze/timeline.h"
#include "analyze/timeline_builder.h"
#include "model/events.h"

namespace gpunoise::testing {

constexpr uint64_t kUs = 1000;
constexpr uint64_t kMs = 1000 * kUs;
constexpr uint64_t kBase = 1'000'000'000;  // synthetic traces start at 1 s of boot time

class Synth {
 public:
  // A switch on `cpu` at `ts` from `prev` (ending in `state`) to `next`.
  Synth& Switch(uint64_t ts, uint32_t cpu, int32_t prev, int32_t next, int64_t state = 0);
  Synth& Wake(uint64_t ts, uint32_t waker_cpu, int32_t tid, int32_t target_cpu);
  // A wakeup by `waker` (the task current on waker_cpu) in context `flags`
  // (model::kFlag*: 0 for task context).
  Synth& WakeBy(uint64_t ts, uint32_t waker_cpu, int32_t waker, int32_t tid, int32_t target_cpu, uint16_t flags = 0);
  Synth& Migrate(uint64_t ts, uint32_t cpu, int32_t tid, int32_t from, int32_t to);
  Synth& Irq(uint32_t cpu, uint64_t start, uint64_t end, int32_t irq);
  Synth& Softirq(uint32_t cpu, uint64_t start, uint64_t end, uint32_t vec);
  Synth& Net(uint64_t ts, uint32_t cpu, model::NetTraceKind kind, std::string device, int64_t value = 0,
             int64_t budget = 0, int32_t queue = -1, std::string reason = "");
  Synth& Loss(uint32_t cpu, uint64_t from, uint64_t to);
  // Names: a thread (in process `tgid`) and a process.
  Synth& Thread(int32_t tid, int32_t tgid, std::string name);
  Synth& Process(int32_t pid, std::string name, bool kthread = false);
  Synth& IrqName(int32_t irq, std::string name);

  // Two tasks sharing `cpu` from `from` to `to`: `a` runs `a_run`, is
  // preempted (R+), `b` runs `b_run`, and so on. Ends with `a` switched in.
  Synth& Alternate(uint32_t cpu, uint64_t from, uint64_t to, int32_t a, uint64_t a_run, int32_t b, uint64_t b_run);
  // `tid` alone on `cpu`: runs `run`, sleeps `sleep` (S, the CPU idles), is
  // woken by the timer and runs again `latency` later.
  Synth& RunSleep(uint32_t cpu, uint64_t from, uint64_t to, int32_t tid, uint64_t run, uint64_t sleep,
                  uint64_t latency);
  // A periodic interrupt: every `period` for `len`.
  Synth& PeriodicIrq(uint32_t cpu, uint64_t from, uint64_t to, int32_t irq, uint64_t period, uint64_t len);
  Synth& PeriodicSoftirq(uint32_t cpu, uint64_t from, uint64_t to, uint32_t vec, uint64_t period, uint64_t len);

  // Track data (GPU work, counters, metadata instants) goes straight to the
  // builder.
  analyze::TimelineBuilder& builder() { return builder_; }

  analyze::Timeline Build();

 private:
  struct Item {
    uint64_t ts;
    int order;
    model::Event event;
  };
  void Add(uint64_t ts, uint32_t cpu, int32_t tid, model::Payload payload);

  analyze::TimelineBuilder builder_;
  std::vector<Item> items_;
  std::vector<std::pair<model::NetTraceEvent, std::pair<std::string, std::string>>> net_;
  struct LossItem {
    uint32_t cpu;
    uint64_t from, to;
  };
  std::vector<LossItem> losses_;
  int order_ = 0;
};

// Analyze with default thresholds (plus `thresholds` "NAME=VALUE" edits).
analyze::Analysis AnalyzeOrDie(const analyze::Timeline& t, std::vector<std::string> focus = {},
                               std::vector<std::string> thresholds = {});

// Findings of one detector (copies: the analysis may be a temporary).
std::vector<analyze::Finding> FindingsOf(const analyze::Analysis& a, std::string_view detector);

}  // namespace gpunoise::testing
