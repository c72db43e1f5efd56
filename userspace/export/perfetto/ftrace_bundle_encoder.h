// Encodes one CPU's events of one drain as a Perfetto FtraceEventBundle:
// sched_switch/sched_waking in compact form, everything else as Perfetto's own
// ftrace event messages, so the trace processor builds its CPU, thread-state,
// irq and softirq tracks itself.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "export/perfetto/compact_sched.h"
#include "model/events.h"

namespace gpunoise::perfetto {

class TracePacket;

class IrqNameSource {
 public:
  virtual ~IrqNameSource() = default;
  virtual std::string_view IrqName(int32_t irq) = 0;
};

// True for events this encoder writes; the others (x86 system vectors other
// than the local timer, which Perfetto has no ftrace message for) go to
// track events.
bool HasFtraceForm(const model::Event& event);

class FtraceBundleEncoder {
 public:
  struct BundleInfo {
    uint32_t cpu = 0;
    bool lost_events = false;                 // the kernel dropped records since the last bundle
    // The trace processor reads this on a CPU's first bundle as "this CPU's
    // data is complete from here" and drops anything earlier on every CPU
    // (ftrace_latest_data_start_ns); on later bundles it marks where the
    // previous one ended. 0: not set.
    uint64_t previous_bundle_end_timestamp = 0;
  };

  // `events` belong to one CPU and are sorted by timestamp.
  void Encode(const BundleInfo& info, std::span<const model::Event> events,
              IrqNameSource& irq_names, TracePacket* packet);

 private:
  CompactSchedBuilder compact_;
};

}  // namespace gpunoise::perfetto
