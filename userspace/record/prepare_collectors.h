// The first stage of `gpunoise record` (record_session.h): what the options
// ask for as a plan (which CPUs, which collectors, how big the rings), the
// collectors that carry it out, and their attach behind the closed gate.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "collect/batch_flush.h"
#include "collect/collector.h"
#include "common/result.h"
#include "model/process_snapshot.h"
#include "model/session_info.h"
#include "record/net_recording.h"
#include "record/node_recording.h"

namespace gpunoise::collect {
class IrqCollector;
class RingTransport;
}  // namespace gpunoise::collect

namespace gpunoise::record {

struct RecordOptions;
class RecordIntake;

// What a recording will do, decided from the options alone.
struct RecordPlan {
  std::vector<int> cpus;  // --cpu, or every online CPU
  uint64_t ring_bytes_per_cpu = 0;
  // The event groups asked for (RecordOptions::event_groups).
  bool sched = false;
  bool hardirq = false;
  bool softirq = false;
  bool net = false;          // "net" or "net-packets"
  bool net_packets = false;  // a record per packet, poll and drop
  bool node = false;
  bool batch_sched = true;   // RecordOptions::batching
  bool batch_irq = false;
  // A filter (--pid, --cgroup) removes switches by design: the switch chain
  // would blame the kernel, so it is not checked.
  bool check_switch_chain = true;
};

// Errors: a CPU of --cpu is not among `online`.
Result<RecordPlan> PlanRecord(const RecordOptions& options, std::span<const int> online);

// The collectors of a plan, built but not started. `irq` points into
// `collectors`; net and node own none (theirs are in `collectors` too).
struct CollectorSet {
  std::vector<std::unique_ptr<collect::Collector>> collectors;
  collect::IrqCollector* irq = nullptr;
  std::unique_ptr<NetRecording> net;
  std::unique_ptr<NodeRecording> node;
};
CollectorSet BuildCollectors(const RecordPlan& plan, const RecordOptions& options);

// The processes as /proc shows them now (command lines redacted under
// --redact), with pod and container names from the kubelet's log dir.
model::ProcessSnapshot ScanProcessSnapshot(const RecordOptions& options);

// Records of a kind belong to the collector (its index in `names`) whose
// name collect::CollectorOfKind gives, for the per-collector counts.
void AssignRecordOwners(std::span<const std::string_view> names, RecordIntake& intake);

// Error "no collector could start (name: reason; ...)" when every report is
// disabled; OK when one collector at least is active. `names[i]` is the
// name of the collector of `reports[i]`.
Status CheckSomeCollectorStarted(std::span<const std::string_view> names,
                                 std::span<const model::CollectorReport> reports);

// Closes the gate, attaches every collector of `set` behind it and tells
// `intake` whose records are whose and which streams are batched. Returns
// the batching collectors' flush programs (run on every CPU before each
// drain). The gate stays closed; errors: none of the collectors started.
Result<std::vector<collect::BatchFlusher>> AttachCollectors(CollectorSet& set, const collect::CollectorContext& context,
                                                            collect::RingTransport& transport, RecordIntake& intake,
                                                            std::span<const int> cpus);

}  // namespace gpunoise::record
