// Builds a Timeline from what a trace reader (or a test) streams: model
// events per CPU in time order, network and track events, and metadata.
#pragma once

#include <cstdint>
#include <unordered_set>
#include <vector>

#include "analyze/timeline.h"
#include "model/trace_sink.h"

namespace gpunoise::analyze {

class TimelineBuilder : public model::TraceSink {
 public:
  TimelineBuilder() = default;

  void OnEvent(const model::Event& event) override;
  void OnNetEvent(const model::NetTraceEvent& event) override;
  void OnCpuLoss(uint32_t cpu, uint64_t from_ts, uint64_t to_ts) override;
  void OnProcess(int32_t pid, int32_t ppid, std::string_view name, bool is_kthread) override;
  void OnThread(int32_t tid, int32_t tgid, std::string_view name) override;
  void OnIrqName(int32_t irq, std::string_view name) override;
  void OnKernelLog(const model::KernelLogEntry& entry) override { t_.kernel_log.push_back(entry); }
  void OnKernelLogLoss(uint64_t lost) override { t_.kernel_log_lost += lost; }
  void OnHostInfo(const model::HostInfo& host) override;
  void OnFtraceStats(const model::FtraceStatsSummary& stats) override;
  void OnTraceStats(const model::TraceServiceStats& stats) override;
  void OnPacketLoss(uint32_t sequence_id, uint32_t reasons) override;
  void OnTrack(const model::TrackInfo& track) override;
  void OnTrackEvent(const model::TrackEventRecord& event) override;

  // Closes what is still open at the end of the data and sorts.
  Timeline Finish();

 private:
  struct OpenCpu {
    int32_t current = -1;  // -1: not known
    uint64_t since = 0;
    int32_t irq = INT32_MIN;  // open hard IRQ or vector; INT32_MIN: none
    uint64_t irq_start = 0;
    int32_t softirq = -1;  // open softirq vector; -1: none
    uint64_t softirq_start = 0;
    bool runs_unsorted = false, hardirqs_unsorted = false, softirqs_unsorted = false;
  };
  struct OpenSlice {
    uint64_t start;
    uint32_t name, category;
    uint64_t correlation_id;
    std::vector<uint64_t> flows, terminating_flows;
    uint64_t payload = 0;
    bool has_payload = false;
    int64_t kernel_work = -1;  // index into Timeline::kernel_work
    NcclRangeFields nccl;
  };
  struct PendingFork {
    int32_t parent_tid, child_tid;
  };

  CpuTimeline& Cpu(uint32_t cpu);
  void OnSwitch(const model::Event& ev, const model::SchedSwitch& s, CpuTimeline& c, OpenCpu& o);
  OpenCpu& Open(uint32_t cpu);
  void Name(int32_t tid, const model::TaskComm& comm);
  void SetTgid(int32_t tid, int32_t tgid);
  uint16_t NetName(std::string_view s);
  uint32_t TrackString(std::string_view s);
  // Gives every track its identity (typed, else legacy by name) and hands the
  // metadata instants to their tracks' readers.
  void ResolveTracks();
  // A kwork record's typed args into Timeline::kernel_work; its index.
  int64_t AddKernelWork(const model::TrackEventRecord& e);
  void CloseRun(uint32_t cpu, uint64_t ts, int32_t state);

  Timeline t_;
  std::vector<OpenCpu> open_;
  std::vector<PendingFork> forks_;
  bool wakeups_unsorted_ = false;
  std::unordered_map<std::string, uint16_t> net_names_;
  std::unordered_map<std::string, uint32_t> track_strings_;
  std::unordered_map<uint64_t, std::vector<OpenSlice>> open_slices_;
  std::unordered_set<uint32_t> lossy_sequences_;
  // gpunoise's metadata instants, in trace order, until Finish() knows what
  // their tracks are (an identity may follow the first instant on a track).
  struct PendingMeta {
    uint64_t track = 0;
    bool link = false;  // a link event: network metadata on any track
    MetaInstant instant;
  };
  std::vector<PendingMeta> pending_meta_;
};

}  // namespace gpunoise::analyze
