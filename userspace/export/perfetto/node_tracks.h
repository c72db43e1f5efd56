// Node-wide counters as TrackEvent packets (record/node_recording.h): per-CPU
// steal share and, per cgroup with a CPU quota, its throttling counters,
// plus the metadata the report needs to join them to threads (the quota of
// each cgroup and the processes it applies to). Each counter track carries
// its typed identity (model/track_identity.h: node_counter,
// kernel_health_counter), which the report finds it by; the track names are
// for people (docs/report.md). The instants' names below are record types.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "export/perfetto/trace_packet_builder.h"
#include "export/perfetto/track_event_writer.h"
#include "model/cpu_state.h"
#include "model/kernel_work.h"
#include "model/node_counters.h"
#include "model/numa_topology.h"
#include "model/track_identity.h"

namespace gpunoise::perfetto {

inline constexpr std::string_view kNodeMetadataTrackName = "gpunoise node";
inline constexpr std::string_view kNodeRootTrackName = "Node";
// Instants on kNodeMetadataTrackName.
inline constexpr std::string_view kCpuQuotaEventName = "cpu quota";         // path, version, quota_us, period_us
inline constexpr std::string_view kQuotaProcessEventName = "quota process";  // cgroup, pid
inline constexpr std::string_view kMemStallCategory = "gpunoise.memstall";  // slices on thread tracks
// Kernel work (model/kernel_work.h): IPI sends as instants on the sender's
// thread track, callbacks, work items and hrtimers as slices on per-CPU
// tracks; args kind (model::KernelWorkName), cpu, tid, function, and for a
// send callsite and targets (CPUs 0..63 as a mask).
inline constexpr std::string_view kKernelWorkCategory = "gpunoise.kwork";
inline constexpr std::string_view kAffinityEventName = "affinity";            // tid, cpus ("0-3,8")
// The cpustate collector (node_cpustate_tracks.cc, docs/report.md "Idle
// states, frequency, NUMA balancing and SMIs"): counter tracks "cpu<N> idle
// state" (the cpuidle state index from entry to exit, -1 while not idle)
// and "cpu<N> frequency" (kHz); instants on kNodeMetadataTrackName named
// model::NumaEventName, kCpuStateInfoEventName (what could be measured),
// kIdleStateEventName (cpu, state, name, exit_latency_us),
// kFrequencyLimitsEventName (cpu, min_khz, max_khz) and kSmiCountEventName
// (cpu, start, end: MSR_SMI_COUNT at both ends).
inline constexpr std::string_view kCpuStateInfoEventName = "cpustate";
inline constexpr std::string_view kIdleStateEventName = "cpu idle state";
inline constexpr std::string_view kFrequencyLimitsEventName = "cpu frequency limits";
inline constexpr std::string_view kSmiCountEventName = "smi count";
// The NUMA topology (model/numa_topology.h), written at the start; the NIC
// IRQs' CPUs at the start and at the end (phase "start"/"end"); NVML's PCI
// address of each GPU, by UUID and index (written by the GPU side).
inline constexpr std::string_view kNumaNodeEventName = "numa node";        // node, cpus
inline constexpr std::string_view kNumaDeviceEventName = "numa device";    // kind, name, bus_id, numa_node
inline constexpr std::string_view kNicIrqCpusEventName = "nic irq cpus";   // irq, device, cpus, effective, phase
inline constexpr std::string_view kGpuBusIdEventName = "gpu bus id";       // uuid, index, bus_id

namespace node_metric {
// "cpu<N> steal": share of the CPU stolen by the hypervisor from the
// sample's time to the next sample's (0..1).
std::string CpuSteal(uint32_t cpu);
std::string CpuIdleState(uint32_t cpu);  // "cpu<N> idle state"
std::string CpuFrequency(uint32_t cpu);  // "cpu<N> frequency"
// "cgroup <path> nr_throttled" / "throttled ns" / "nr_periods": increase
// since the recording started (cumulative).
inline constexpr std::string_view kCgroupPrefix = "cgroup ";
inline constexpr std::string_view kNrThrottled = " nr_throttled";
inline constexpr std::string_view kThrottledNs = " throttled ns";
inline constexpr std::string_view kNrPeriods = " nr_periods";
// "kernel softlockup_count": the kernel's counter (since boot), sampled at
// the start and at each change.
inline constexpr std::string_view kKernelHealthPrefix = "kernel ";
}  // namespace node_metric

struct QuotaInfo {
  std::string path;
  int version = 1;
  uint64_t quota_us = 0, period_us = 0;
};

class NodeTrackWriter {
 public:
  using PacketOut = std::function<Status(const TracePacketBuilder&)>;
  NodeTrackWriter(TrackEventWriter& writer, PacketOut out);

  // Once per cgroup (later calls with a known path write nothing).
  Status WriteQuota(uint64_t ts, const QuotaInfo& quota);
  // Once per (cgroup, pid).
  Status WriteQuotaProcess(uint64_t ts, const std::string& cgroup, int32_t pid);
  // A thread's CPU affinity, written when it differs from the last one
  // written for that tid.
  Status WriteAffinity(uint64_t ts, int32_t tid, const std::vector<int>& cpus);
  // The NUMA nodes' CPUs and the devices' nodes (node_numa_tracks.cc).
  Status WriteNumaTopology(uint64_t ts, const model::NumaTopology& topology);
  // A NIC IRQ's CPUs at `phase` ("start" or "end").
  Status WriteNicIrqCpus(uint64_t ts, const model::NicIrqAffinity& irq, std::string_view phase);
  // A reclaim or compaction stall as a slice on its thread's track
  // (category kMemStallCategory, named by model::MemStallName).
  Status WriteStall(const model::MemStall& stall, int32_t pid, std::string_view thread_name);
  // Kernel work (category kKernelWorkCategory; node_kwork_tracks.cc), with
  // its functions already named from the kernel's symbols.
  Status WriteKernelWork(const model::KernelWork& work, std::string_view function, std::string_view callsite,
                         int32_t pid, std::string_view thread_name);
  // The cpustate collector's records (node_cpustate_tracks.cc): an idle
  // period as its state at entry and -1 at exit; a frequency change; a NUMA
  // balancing event; and metadata instants with integer or string args.
  Status WriteIdle(const model::CpuStateEvent& idle);
  Status WriteFrequency(uint64_t ts, uint32_t cpu, uint32_t khz);
  Status WriteNuma(const model::NumaEvent& numa);
  // NET_RX softirqs left untimed on `cpu` before `ts`, since the recording
  // started (model::NodeMetric::kNetRxUntimed).
  Status WriteNetRxUntimed(uint64_t ts, uint32_t cpu, uint64_t total);
  struct MetaArg {
    std::string_view name;
    int64_t number = 0;
    std::string_view text;  // used when not empty
  };
  Status WriteNodeInstant(uint64_t ts, std::string_view name, std::initializer_list<MetaArg> args);
  // Steal shares over (earlier.ts, later.ts], written at earlier.ts, the
  // cgroups' counters at later.ts as increases over `baseline`, and the
  // kernel's trouble counters when they changed (the first time from
  // `baseline`).
  Status WriteSample(const model::NodeSnapshot& baseline, const model::NodeSnapshot& earlier,
                     const model::NodeSnapshot& later);
  // Ends the steal tracks at `ts` (a final zero).
  Status Close(uint64_t ts);

 private:
  uint64_t MetadataTrack(uint64_t ts);  // ts: of its identity instant, if new
  // `id`: what the track counts, written as its identity with its
  // descriptor (the report finds it by that, not by `name`).
  Status CpuStateCounter(uint64_t ts, const std::string& name, double value, std::string_view unit,
                         const model::TrackIdentity& id);
  // The counter track `name`, its descriptor and identity written at `ts`
  // when it is new.
  Result<uint64_t> CpuStateTrack(uint64_t ts, const std::string& name, std::string_view unit,
                                 const model::TrackIdentity& id);
  Status Counter(uint64_t ts, const std::string& name, double value, std::string_view unit,
                 const model::TrackIdentity& id);

  TrackEventWriter& writer_;
  PacketOut out_;
  uint64_t metadata_track_ = 0, root_track_ = 0;
  std::map<std::string, uint64_t> counter_tracks_;
  std::set<std::string> quotas_;
  std::set<std::pair<std::string, int32_t>> processes_;
  std::map<int32_t, std::vector<int>> affinity_;
  std::map<std::pair<int32_t, int>, uint64_t> stall_tracks_;  // (tid, kind)
  std::map<std::pair<int32_t, int>, uint64_t> kwork_tracks_;  // (tid, -1) for senders, (cpu, kind) for spans
  std::map<std::string, uint64_t> cpustate_tracks_;  // not closed with a zero (0 is a state and a frequency)
  // Each CPU's idle samples, on a sequence of their own (CpuIdleSequenceId)
  // whose default track is the CPU's idle-state track (null: none yet), and
  // a packet reused for them: a CPU can go idle tens of thousands of times
  // a second.
  std::vector<std::unique_ptr<TrackEventWriter>> idle_writers_;
  TracePacketBuilder idle_packet_;
  std::map<std::string, uint64_t> kernel_health_;  // last value written, by counter file
};

}  // namespace gpunoise::perfetto
