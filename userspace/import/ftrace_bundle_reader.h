// Decodes FtraceEventBundles (ftrace data as Perfetto stores it) into model
// events: compact sched columns and full-format ftrace events of one CPU are
// merged into one time-ordered stream and handed to the sink.
//
// Compact sched drops each switch's prev_pid (it is the previous switch's
// next_pid on that CPU) and each waking's waker, so the reader keeps the task
// current on every CPU across bundles, and forgets it when the recorder says
// events were lost there.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "import/packet_error.h"
#include "common/proto_wire_reader.h"
#include "model/events.h"
#include "model/trace_sink.h"

namespace gpunoise::import {

struct BundleStats {
  uint64_t events = 0;      // kernel events handed to the sink
  uint64_t net_events = 0;
  uint64_t unknown_events = 0;  // ftrace events this reader does not use
  uint64_t unseen_switches = 0;  // full-format switches whose prev was not the CPU's current task
  uint64_t first_ts = 0;
  uint64_t last_ts = 0;
};

class FtraceBundleReader {
 public:
  explicit FtraceBundleReader(model::TraceSink& sink);

  // `data` is one FtraceEventBundle message.
  bool Decode(const uint8_t* data, size_t size, PacketError* error);

  const BundleStats& stats() const { return stats_; }

 private:
  struct FullEvent {
    uint64_t ts;
    const uint8_t* data;
    size_t size;
  };
  struct CpuState {
    int32_t current_tid = -1;  // -1: not known
    int64_t clock_offset = 0;  // added to ftrace timestamps to get BOOTTIME
  };
  struct CompactColumns;

  CpuState& Cpu(uint32_t cpu);
  bool DecodeCompact(const ProtoField& field, CompactColumns* cols, PacketError* error);
  bool EmitMerged(uint32_t cpu, CompactColumns& cols, PacketError* error);
  bool EmitFullEvent(uint32_t cpu, const FullEvent& fe, PacketError* error);
  void Emit(model::Event& ev);
  bool EmitCached(model::Event& ev, uint64_t ts, uint32_t cpu, int32_t tid);
  void EmitNet(model::NetTraceEvent& ev);
  void DecodeGeneric(uint32_t cpu, uint64_t ts, int32_t tid, const ProtoField& field);

  model::TraceSink& sink_;
  std::vector<CpuState> cpus_;
  std::vector<FullEvent> full_events_;  // reused per bundle
  std::vector<std::string_view> intern_;  // reused per bundle
  std::vector<bool> named_irqs_;          // IRQs whose name was handed on
  const uint8_t* bundle_begin_ = nullptr;
  BundleStats stats_;

  // One event object per payload kind, reused so the hot path neither
  // allocates nor re-constructs the variant.
  model::Event switch_event_;
  model::Event waking_event_;
  model::Event irq_entry_event_, irq_exit_event_;
  model::Event softirq_entry_event_, softirq_exit_event_;
  model::Event other_event_;
};

}  // namespace gpunoise::import
