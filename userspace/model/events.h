// The event model: what the collectors saw, independent of how it was
// captured (eBPF records) or stored (Perfetto). Analysis (userspace/analyze)
// and every exporter work on these types; nothing here includes libbpf or
// protobuf.
#pragma once

#include <array>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

#include "model/exec_path.h"
#include "model/net_events.h"

namespace gpunoise::model {

// A kernel task name (TASK_COMM_LEN bytes, NUL-padded).
class TaskComm {
 public:
  static constexpr size_t kMaxLen = 16;
  TaskComm() { bytes_.fill(0); }
  explicit TaskComm(std::string_view s) {
    bytes_.fill(0);
    // An empty view may have no data at all: memcpy from null is undefined.
    if (!s.empty()) std::memcpy(bytes_.data(), s.data(), std::min(s.size(), kMaxLen - 1));
  }
  static TaskComm FromBytes(const char* data) {
    TaskComm c;
    std::memcpy(c.bytes_.data(), data, kMaxLen);
    c.bytes_[kMaxLen - 1] = 0;
    return c;
  }
  std::string_view view() const { return std::string_view(bytes_.data(), strnlen(bytes_.data(), kMaxLen)); }
  bool operator==(const TaskComm& o) const { return bytes_ == o.bytes_; }

 private:
  std::array<char, kMaxLen> bytes_;
};

// prev_state as the sched_switch tracepoint reports it.
namespace task_state {
inline constexpr int64_t kRunnable = 0x0000;
inline constexpr int64_t kInterruptible = 0x0001;
inline constexpr int64_t kUninterruptible = 0x0002;
inline constexpr int64_t kPreempted = 0x0100;  // TASK_REPORT_MAX, Linux >= 4.14
}  // namespace task_state

struct SchedSwitch {
  int32_t prev_tid = 0;
  int32_t prev_tgid = 0;  // 0: unknown
  int64_t prev_state = 0;
  int32_t next_tid = 0;
  int32_t next_tgid = 0;  // 0: unknown
  int32_t next_prio = 0;
  TaskComm next_comm;
};

struct SchedWaking {
  int32_t tid = 0;
  int32_t tgid = 0;
  int32_t prio = 0;
  int32_t target_cpu = 0;
  TaskComm comm;
  bool is_new_task = false;  // sched_wakeup_new
};

struct SchedMigrate {
  int32_t tid = 0;
  int32_t tgid = 0;
  int32_t prio = 0;
  int32_t orig_cpu = 0;
  int32_t dest_cpu = 0;
  TaskComm comm;
};

struct ProcessFork {
  int32_t parent_tid = 0;
  int32_t parent_tgid = 0;
  int32_t child_tid = 0;
  int32_t child_tgid = 0;
  bool is_thread = false;
  TaskComm parent_comm;
  TaskComm child_comm;
};

struct ProcessExec {
  int32_t tid = 0;
  int32_t tgid = 0;
  int32_t old_tid = 0;
  TaskComm comm;
  ExecPath filename;
};

struct ProcessExit {
  int32_t tid = 0;
  int32_t tgid = 0;
  int32_t prio = 0;
  TaskComm comm;
};

struct TaskRename {
  int32_t tid = 0;
  int32_t tgid = 0;
  TaskComm old_comm;
  TaskComm new_comm;
};

struct IrqEntry {
  int32_t irq = 0;
};
struct IrqExit {
  int32_t irq = 0;
  int32_t ret = 0;
};

// Softirq vector numbers, include/linux/interrupt.h.
enum class SoftirqVec : uint32_t {
  kHi = 0, kTimer = 1, kNetTx = 2, kNetRx = 3, kBlock = 4,
  kIrqPoll = 5, kTasklet = 6, kSched = 7, kHrtimer = 8, kRcu = 9,
};
inline constexpr uint32_t kNumSoftirqVecs = 10;
using SoftirqCounts = std::array<uint64_t, kNumSoftirqVecs>;  // indexed by SoftirqVec
std::string_view SoftirqName(uint32_t vec);  // "NET_RX", ... or "?"
std::optional<uint32_t> SoftirqVecNamed(std::string_view name);  // SoftirqName's inverse

struct SoftirqEntry {
  uint32_t vec = 0;
  // ns since the earliest raise of this vector on this CPU that no entry had
  // answered yet; 0 when no raise was seen. The recorder folds raises into
  // entries, so a recording's SoftirqRaise events are this field, expanded on
  // export (ftrace_bundle_encoder).
  uint32_t raise_wait_ns = 0;
  // NET_RX only: softirqs of this vector that ran on this CPU since its
  // previous timed entry without being timed (the recorder samples NET_RX
  // storms, bpf/irq.bpf.c); the trace carries their running count on a
  // counter track (NodeMetric::kNetRxUntimed), not in the ftrace event.
  uint32_t untimed_before = 0;
};
struct SoftirqExit {
  uint32_t vec = 0;
};
struct SoftirqRaise {
  uint32_t vec = 0;
};

// x86 system vectors that irq_handler_entry does not report.
enum class VectorKind : uint32_t {
  kLocalTimer = 0, kReschedule = 1, kCallFunction = 2, kCallFunctionSingle = 3,
  kIrqWork = 4, kPlatformIpi = 5, kThermal = 6, kErrorApic = 7, kSpurious = 8,
};
inline constexpr uint32_t kNumVectorKinds = 9;
std::string_view VectorName(VectorKind kind);

struct VectorEntry {
  VectorKind kind = VectorKind::kLocalTimer;
  int32_t vector = 0;
};
struct VectorExit {
  VectorKind kind = VectorKind::kLocalTimer;
  int32_t vector = 0;
};

using Payload = std::variant<SchedSwitch, SchedWaking, SchedMigrate, ProcessFork, ProcessExec,
                             ProcessExit, TaskRename, IrqEntry, IrqExit, SoftirqEntry,
                             SoftirqExit, SoftirqRaise, VectorEntry, VectorExit,
                             // network (model/net_events.h)
                             NapiPoll, NetReceive, NetTransmit, NetTxTimeout, DqlStall,
                             TcpRetransmit, GroReceiveEntry, GroReceiveExit, SkbDrop, NicEvent>;

// ftrace's common_flags bits for the context an event fired in
// (include/linux/trace_events.h TRACE_FLAG_*), as Perfetto reads them.
inline constexpr uint16_t kFlagHardirq = 0x08;
inline constexpr uint16_t kFlagSoftirq = 0x10;
inline constexpr uint16_t kFlagNmi = 0x40;

// CPU numbers a trace may carry: Linux builds for at most 8192 CPUs
// (NR_CPUS), so anything past this is a corrupt or hostile file, and readers
// that keep per-CPU tables refuse it instead of sizing a table by it.
inline constexpr uint32_t kMaxTraceCpus = 16384;

struct Event {
  uint64_t ts = 0;   // CLOCK_BOOTTIME ns
  uint32_t cpu = 0;
  int32_t tid = 0;   // task current on `cpu` when the event fired
  Payload payload;
  uint16_t common_flags = 0;  // kFlag*: the context it fired in
};

// Staging, sorting and writing move events by their bytes; nothing in an
// event may own memory (model/exec_path.h says what that cost).
static_assert(std::is_trivially_copyable_v<Event>);

// The tracepoint an event came from ("sched_switch"), as loss by kind names
// it; kinds are numbered for counting in arrays on hot paths.
inline constexpr size_t kEventKinds = std::variant_size_v<Payload> + 1;  // + sched_wakeup_new
size_t EventKindIndex(const Event& e);
std::string_view EventKindName(size_t kind_index);
inline std::string_view EventName(const Event& e) { return EventKindName(EventKindIndex(e)); }

// How deeply an event's context nests on its CPU: task 0, softirq 1, hardirq
// 2, NMI 3. A program can only interrupt one of a lower level.
inline int ContextLevel(const Event& e) {
  if (e.common_flags & kFlagNmi) return 3;
  if (e.common_flags & kFlagHardirq) return 2;
  if (e.common_flags & kFlagSoftirq) return 1;
  return 0;
}

}  // namespace gpunoise::model
