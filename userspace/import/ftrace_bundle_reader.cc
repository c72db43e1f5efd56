#include "import/ftrace_bundle_reader.h"

#include <string>

#include <fmt/format.h>

#include <limits>

#include "export/perfetto/protos/perfetto_fields.h"

namespace gpunoise::import {
namespace {


constexpr uint64_t kNoTs = std::numeric_limits<uint64_t>::max();

model::TaskComm Comm(std::string_view s) { return model::TaskComm(s); }

}  // namespace

struct FtraceBundleReader::CompactColumns {
  PackedVarints switch_ts, switch_state, switch_pid, switch_prio, switch_comm;
  PackedVarints waking_ts, waking_pid, waking_cpu, waking_prio, waking_comm, waking_flags;
  bool present = false;
};

FtraceBundleReader::FtraceBundleReader(model::TraceSink& sink) : sink_(sink) {
  switch_event_.payload = model::SchedSwitch{};
  waking_event_.payload = model::SchedWaking{};
  irq_entry_event_.payload = model::IrqEntry{};
  irq_exit_event_.payload = model::IrqExit{};
  softirq_entry_event_.payload = model::SoftirqEntry{};
  softirq_exit_event_.payload = model::SoftirqExit{};
}

FtraceBundleReader::CpuState& FtraceBundleReader::Cpu(uint32_t cpu) {
  if (cpu >= cpus_.size()) cpus_.resize(cpu + 1);
  return cpus_[cpu];
}

void FtraceBundleReader::Emit(model::Event& ev) {
  ++stats_.events;
  if (stats_.first_ts == 0 || ev.ts < stats_.first_ts) stats_.first_ts = ev.ts;
  if (ev.ts > stats_.last_ts) stats_.last_ts = ev.ts;
  sink_.OnEvent(ev);
}

bool FtraceBundleReader::EmitCached(model::Event& ev, uint64_t ts, uint32_t cpu, int32_t tid) {
  ev.ts = ts;
  ev.cpu = cpu;
  ev.tid = tid;
  Emit(ev);
  return true;
}

void FtraceBundleReader::EmitNet(model::NetTraceEvent& ev) {
  ++stats_.net_events;
  sink_.OnNetEvent(ev);
}

bool FtraceBundleReader::DecodeCompact(const ProtoField& field, CompactColumns* cols,
                                       PacketError* error) {
  ProtoReader r(field);
  ProtoField col;
  cols->present = true;
  while (r.Next(&col)) {
    if (col.id == pf::FtraceEventBundle::CompactSched::kInternTable) {
      if (col.type != WireType::kLengthDelimited) continue;
      intern_.push_back(col.as_string());
      continue;
    }
    if (col.type != WireType::kLengthDelimited) {
      // Perfetto always packs these columns; an unpacked one cannot be
      // merged with the others by position.
      *error = {static_cast<size_t>(field.data - bundle_begin_) + r.offset(),
                fmt::format("compact_sched column {} is not packed", col.id)};
      return false;
    }
    PackedVarints v(col);
    switch (col.id) {
      case pf::FtraceEventBundle::CompactSched::kSwitchTimestamp: cols->switch_ts = v; break;
      case pf::FtraceEventBundle::CompactSched::kSwitchPrevState: cols->switch_state = v; break;
      case pf::FtraceEventBundle::CompactSched::kSwitchNextPid: cols->switch_pid = v; break;
      case pf::FtraceEventBundle::CompactSched::kSwitchNextPrio: cols->switch_prio = v; break;
      case pf::FtraceEventBundle::CompactSched::kSwitchNextCommIndex: cols->switch_comm = v; break;
      case pf::FtraceEventBundle::CompactSched::kWakingTimestamp: cols->waking_ts = v; break;
      case pf::FtraceEventBundle::CompactSched::kWakingPid: cols->waking_pid = v; break;
      case pf::FtraceEventBundle::CompactSched::kWakingTargetCpu: cols->waking_cpu = v; break;
      case pf::FtraceEventBundle::CompactSched::kWakingPrio: cols->waking_prio = v; break;
      case pf::FtraceEventBundle::CompactSched::kWakingCommIndex: cols->waking_comm = v; break;
      case pf::FtraceEventBundle::CompactSched::kWakingCommonFlags: cols->waking_flags = v; break;
      default: break;  // columns added after this reader was written
    }
  }
  if (r.error()) {
    *error = {static_cast<size_t>(field.data - bundle_begin_) + r.error_offset(),
              "compact_sched message is malformed"};
    return false;
  }
  return true;
}

bool FtraceBundleReader::Decode(const uint8_t* data, size_t size, PacketError* error) {
  bundle_begin_ = data;
  full_events_.clear();
  intern_.clear();
  uint32_t cpu = 0;
  bool lost = false;
  uint64_t previous_end = 0;
  bool has_clock = false;
  int64_t ftrace_ts = 0, boot_ts = 0;
  bool has_ftrace_ts = false, has_boot_ts = false;
  CompactColumns cols;
  ProtoField compact_field;
  bool has_compact = false;

  ProtoReader r(data, size);
  ProtoField field;
  while (r.Next(&field)) {
    switch (field.id) {
      case pf::FtraceEventBundle::kCpu: cpu = field.as_uint32(); break;
      case pf::FtraceEventBundle::kEvent: {
        if (field.type != WireType::kLengthDelimited) break;
        // FtraceEvent.timestamp is field 1; writers put it first, so this
        // usually reads one varint.
        uint64_t ts = kNoTs;
        ProtoReader er(field);
        ProtoField ef;
        while (er.Next(&ef))
          if (ef.id == pf::FtraceEvent::kTimestamp && ef.type == WireType::kVarint) {
            ts = ef.int_value;
            break;
          }
        if (er.error()) {
          *error = {static_cast<size_t>(field.data - data) + er.error_offset(),
                    "FtraceEvent is malformed"};
          return false;
        }
        if (ts == kNoTs) {
          ++stats_.unknown_events;
          break;
        }
        full_events_.push_back({ts, field.data, field.size});
        break;
      }
      case pf::FtraceEventBundle::kLostEvents: lost = field.as_bool(); break;
      case pf::FtraceEventBundle::kCompactSched:
        if (field.type == WireType::kLengthDelimited) {
          compact_field = field;
          has_compact = true;
        }
        break;
      case pf::FtraceEventBundle::kFtraceClock: has_clock = field.int_value != 0; break;
      case pf::FtraceEventBundle::kFtraceTimestamp:
        ftrace_ts = field.as_int64();
        has_ftrace_ts = true;
        break;
      case pf::FtraceEventBundle::kBootTimestamp:
        boot_ts = field.as_int64();
        has_boot_ts = true;
        break;
      case pf::FtraceEventBundle::kPreviousBundleEndTimestamp: previous_end = field.int_value; break;
      default: break;
    }
  }
  if (r.error()) {
    *error = {r.error_offset(), "FtraceEventBundle is malformed"};
    return false;
  }
  if (has_compact && !DecodeCompact(compact_field, &cols, error)) return false;

  if (cpu >= model::kMaxTraceCpus) {
    *error = {0, "FtraceEventBundle names CPU " + std::to_string(cpu) + ", beyond any machine"};
    return false;
  }
  CpuState& state = Cpu(cpu);
  // A recorder that could not use the boot clock gives a pair of readings
  // of both clocks per bundle; ftrace timestamps move by their difference.
  if (has_clock && has_ftrace_ts && has_boot_ts) state.clock_offset = boot_ts - ftrace_ts;
  if (!has_clock) state.clock_offset = 0;

  if (lost) {
    state.current_tid = -1;
    uint64_t first = kNoTs;
    if (!full_events_.empty()) first = full_events_.front().ts;
    if (cols.present && !cols.switch_ts.done()) {
      PackedVarints copy = cols.switch_ts;
      uint64_t t;
      if (copy.Next(&t)) first = std::min(first, t);
    }
    if (cols.present && !cols.waking_ts.done()) {
      PackedVarints copy = cols.waking_ts;
      uint64_t t;
      if (copy.Next(&t)) first = std::min(first, t);
    }
    uint64_t to = first == kNoTs ? previous_end : first + state.clock_offset;
    sink_.OnCpuLoss(cpu, previous_end ? previous_end + state.clock_offset : 0, to);
  }
  return EmitMerged(cpu, cols, error);
}

bool FtraceBundleReader::EmitMerged(uint32_t cpu, CompactColumns& cols, PacketError* error) {
  CpuState& state = Cpu(cpu);
  const int64_t offset = state.clock_offset;
  uint64_t next_switch = kNoTs, next_waking = kNoTs;
  uint64_t delta;
  if (cols.present && cols.switch_ts.Next(&delta)) next_switch = delta;
  if (cols.present && cols.waking_ts.Next(&delta)) next_waking = delta;
  size_t full_index = 0;
  auto column_error = [&]() {
    *error = {0, "compact_sched columns are malformed or of unequal length"};
    return false;
  };

  switch_event_.cpu = cpu;
  waking_event_.cpu = cpu;
  auto& sw = *std::get_if<model::SchedSwitch>(&switch_event_.payload);
  auto& wk = *std::get_if<model::SchedWaking>(&waking_event_.payload);

  while (true) {
    uint64_t next_full = full_index < full_events_.size() ? full_events_[full_index].ts : kNoTs;
    if (next_switch == kNoTs && next_waking == kNoTs && next_full == kNoTs) break;
    if (next_switch <= next_waking && next_switch <= next_full) {
      uint64_t state_v, pid, prio, comm;
      if (!cols.switch_state.Next(&state_v) || !cols.switch_pid.Next(&pid) ||
          !cols.switch_prio.Next(&prio) || !cols.switch_comm.Next(&comm))
        return column_error();
      switch_event_.ts = next_switch + static_cast<uint64_t>(offset);
      switch_event_.tid = state.current_tid < 0 ? 0 : state.current_tid;
      sw.prev_tid = state.current_tid;
      sw.prev_state = static_cast<int64_t>(state_v);
      sw.next_tid = static_cast<int32_t>(pid);
      sw.next_prio = static_cast<int32_t>(prio);
      sw.next_comm = comm < intern_.size() ? Comm(intern_[comm]) : model::TaskComm();
      state.current_tid = sw.next_tid;
      Emit(switch_event_);
      if (cols.switch_ts.Next(&delta))
        next_switch += delta;
      else if (cols.switch_ts.error())
        return column_error();
      else
        next_switch = kNoTs;
    } else if (next_waking <= next_full) {
      uint64_t pid, target, prio, comm;
      if (!cols.waking_pid.Next(&pid) || !cols.waking_cpu.Next(&target) ||
          !cols.waking_prio.Next(&prio) || !cols.waking_comm.Next(&comm))
        return column_error();
      waking_event_.ts = next_waking + static_cast<uint64_t>(offset);
      waking_event_.tid = state.current_tid < 0 ? 0 : state.current_tid;
      wk.tid = static_cast<int32_t>(pid);
      wk.target_cpu = static_cast<int32_t>(target);
      wk.prio = static_cast<int32_t>(prio);
      wk.comm = comm < intern_.size() ? Comm(intern_[comm]) : model::TaskComm();
      // Optional column (older recorders write none).
      uint64_t flags = 0;
      waking_event_.common_flags = cols.waking_flags.Next(&flags) ? static_cast<uint16_t>(flags) : 0;
      Emit(waking_event_);
      if (cols.waking_ts.Next(&delta))
        next_waking += delta;
      else if (cols.waking_ts.error())
        return column_error();
      else
        next_waking = kNoTs;
    } else {
      if (!EmitFullEvent(cpu, full_events_[full_index], error)) return false;
      ++full_index;
    }
  }
  return true;
}

}  // namespace gpunoise::import
