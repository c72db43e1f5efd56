// Encodes one CPU's events of one drain as a Perfetto FtraceEventBundle:
// sched_switch/sched_waking in compact form, everything else as Perfetto's own
// ftrace event messages, so the trace processor builds its CPU, thread-state,
// irq and softirq tracks itself.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "export/perfetto/compact_sched.h"
#include "model/event_view.h"
#include "model/events.h"

namespace gpunoise::perfetto {


class IrqNameSource {
 public:
  virtual ~IrqNameSource() = default;
  virtual std::string_view IrqName(int32_t irq) = 0;
};

// True for events this encoder writes; the others (x86 system vectors other
// than the local timer, which Perfetto has no ftrace message for) go to
// track events. Network events Perfetto has a message for (netif_receive_skb,
// net_dev_xmit, napi_gro_receive_*, kfree_skb, tcp_retransmit_skb) use it, so
// the trace processor builds its per-device traffic counters, GRO slices and
// retransmit slices; the others (napi_poll, net_dev_xmit_timeout,
// dql_stall_detected, NIC-driver events) are GenericFtraceEvent, which the
// trace processor keeps in its ftrace_event table with their fields as args.
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

  // `events` belong to one CPU and are sorted by timestamp. Appends one
  // serialized TracePacket holding the bundle to `packet`, written field by
  // field (no message objects: this runs for every event recorded).
  void EncodePacket(const BundleInfo& info, model::EventView events,
                    IrqNameSource& irq_names, std::string* packet);
  // The same, parsed into `packet` (merged into what it holds) by
  // libprotobuf's classes: for tests, which read the bundle with that
  // independent decoder. A template, so that no product code links it.
  template <typename ProtobufPacket>
  void Encode(const BundleInfo& info, std::span<const model::Event> events, IrqNameSource& irq_names,
              ProtobufPacket* packet) {
    std::string bytes;
    EncodePacket(info, events, irq_names, &bytes);
    packet->MergeFromString(bytes);
  }

  // "category/event" of the nic collector's events, by the index NicEvent
  // carries.
  void set_nic_event_names(std::vector<std::string> names) { nic_event_names_ = std::move(names); }

 private:
  CompactSchedBuilder compact_;
  std::vector<std::string> nic_event_names_;
};

}  // namespace gpunoise::perfetto
