// bpf/console.bpf.c: every kernel log message at printk time (the
// printk:console tracepoint), with the CPU, the task and the trace-clock
// time of the printk, read from the object's .bss log (no ring records).
// An entry the log overwrote before it was read is counted as lost
// (lost(), the session's collector report and the report's kernel log loss line), never silently dropped.
#pragma once

#include <vector>

#include "collect/collector.h"
#include "model/kernel_log_match.h"

struct console_bpf;

namespace gpunoise::collect {

class ConsoleCollector : public Collector {
 public:
  ConsoleCollector();
  ~ConsoleCollector() override;

  std::string_view name() const override { return "console"; }
  void Start(const CollectorContext& context) override;

  // Appends the messages logged since the last call.
  void Drain(std::vector<model::ConsoleRecord>* out);
  uint64_t lost() const { return lost_; }

 private:
  console_bpf* skel_ = nullptr;
  uint64_t cursor_ = 0;
  uint64_t lost_ = 0;
};

}  // namespace gpunoise::collect
