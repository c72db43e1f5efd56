// The drain thread yields to the node's own work: between turns of pressure
// it runs under SCHED_IDLE, where a task of its task group (cgroup, or
// autogroup session) that wakes on its CPU preempts it at once. At
// gpunoise's priority a drain turn delays a woken thread of the job by up to
// a scheduler slice: under W2 UDP the receiver, which shared a CPU with the
// drain, then overflowed its socket buffer on 3 to 5% of the datagrams,
// against 0.3 to 0.7% untraced. Between task groups the scheduler weighs the
// groups first, and there the yield measured as nothing (docs/performance.md).
//
// A SCHED_IDLE thread starves on a node busy on every CPU, and then the
// rings fill, and the in-kernel logs the drain also empties (kernel work,
// CPU state: they overwrite their oldest entries, and an IPI storm fills
// one in 30 ms). So the drain goes back to SCHED_OTHER when one of its
// buffers could not wait for it (DrainYieldPolicy), and a guard thread at
// gpunoise's priority puts it back when a buffer rings its doorbell (a log
// half full and unread, a ring crossing half full: bpf/doorbell.bpf.h) or a
// turn is late, whatever stalled it.
// Once calm again, the drain steps down, each time after twice as many calm
// turns. It starts under SCHED_OTHER, and steps down once a whole interval
// showed that its buffers have room: a recording may start inside a storm.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "collect/doorbell.h"
#include "common/unique_fd.h"
#include "record/buffer_fill.h"

namespace gpunoise::record {

// When the drain should be under SCHED_OTHER, from what each turn read. Pure:
// no clock, no system call (tested on its own).
class DrainYieldPolicy {
 public:
  explicit DrainYieldPolicy(uint64_t interval_ns);

  enum class Step { kStay, kRaise, kLower };
  // A turn at `now` found `buffers` (the same kinds, in the same order,
  // each turn); `new_loss`: a buffer lost records. Pressure is any of: new
  // loss, a buffer half full, or a buffer that fills from empty, at the
  // rate of the last window of at least an interval, too fast for a
  // starved drain to be caught: with the doorbell watched, in less than
  // twice 50 ms (the half that is left when it rings must outlast the
  // raised drain's time to read again); without, in less than the shortest
  // late_after() and twice 50 ms. The step the drain takes (kRaise only
  // while low, kLower only while raised).
  Step OnTurn(uint64_t now, std::span<const BufferFill> buffers, bool new_loss);
  // The guard watches the doorbell: a buffer half full raises the drain at
  // once, not a turn late.
  void WatchesDoorbell(bool watches) { doorbell_ = watches; }
  // The drain is running (a turn began): the guard's clock starts again.
  void Beat(uint64_t now) { last_turn_ = now; }
  // The guard found no turn since `last_turn() + late_after()`.
  bool Late(uint64_t now) const { return !raised_ && now >= last_turn_ + late_after_; }
  void Raised();
  void Lowered() { raised_ = false; }

  bool raised() const { return raised_; }
  uint64_t last_turn() const { return last_turn_; }
  // How late a turn may be, from the last: a third of the time the buffer
  // that fills first takes to fill at its last rate, within [interval + max(25 ms,
  // interval / 4), 3 x interval].
  uint64_t late_after() const { return late_after_; }
  // Calm turns (no pressure, none late, a rate known) a raised drain waits
  // before it steps down: 3 at the start (it starts raised), then 10,
  // doubled at each raise, at most 640.
  uint32_t calm_needed() const { return calm_needed_; }

 private:
  uint64_t interval_ns_;
  uint64_t min_late_, max_late_;
  uint64_t late_after_;
  uint64_t last_turn_ = 0;  // the last beat
  uint64_t last_read_ = 0;  // the end of the last turn: when the buffers were last read
  uint64_t window_ns_ = 0;
  std::vector<uint64_t> window_produced_;  // by buffer kind, in this window
  uint64_t fill_ns_ = UINT64_MAX;  // how long the first buffer to fill takes, at the last window's rates
  bool raised_;  // it starts raised: see kStartCalmNeeded
  bool doorbell_ = false;
  bool rate_known_ = false;
  uint32_t raises_ = 0;
  uint32_t calm_turns_ = 0;
  uint32_t calm_needed_ = 0;
};

struct DrainYieldStats {
  bool yielded = false;          // it may yield: the guard watched it
  uint64_t idle_from = 0;        // when it first went under SCHED_IDLE (CLOCK_BOOTTIME); 0: never
  uint64_t raises = 0;           // times it went back to SCHED_OTHER before the end
  uint64_t raised_for_late = 0;  // of those, by the guard (a turn was late)
  uint64_t raised_for_doorbell = 0;  // of those, by the guard (a ring or log half full rang)
  uint64_t raised_ns = 0;        // time spent under SCHED_OTHER before the end
  std::string unavailable;       // why it does not yield, when it does not
};

// Watches the drain thread (the one that constructs it) from a guard thread
// of its own, which alone puts it back under SCHED_OTHER: a thread cannot
// leave SCHED_IDLE without an RLIMIT_NICE that allows its nice, or
// CAP_SYS_NICE. Made while the recorder still holds its capabilities: it
// sets RLIMIT_NICE (which needs CAP_SYS_RESOURCE), else the guard keeps
// CAP_SYS_NICE, and nothing else, for itself. Without either, or when
// gpunoise runs under another policy than SCHED_OTHER, the drain does not
// yield.
class DrainYield {
 public:
  // `yield` false: a DrainYield that does nothing. `doorbell`: rung when a
  // ring or log needs the drain (null: none).
  DrainYield(bool yield, uint64_t interval_ns, std::unique_ptr<collect::Doorbell> doorbell = nullptr);
  ~DrainYield();
  DrainYield(const DrainYield&) = delete;
  DrainYield& operator=(const DrainYield&) = delete;

  // The drain loop begins: down to SCHED_IDLE.
  void Begin(uint64_t now);
  // At the start of each turn of the drain loop (after its wait).
  void TurnStarted(uint64_t now);
  // At its end: what the turn found (DrainYieldPolicy::OnTurn).
  void TurnEnded(uint64_t now, std::span<const BufferFill> buffers, bool new_loss);
  // Back to SCHED_OTHER for good (the end of the recording), and stops the
  // guard.
  void Stop();
  // Thread `tid` takes every step the drain takes (the writer's deflate
  // thread, which the drain waits for when it falls behind: under
  // SCHED_IDLE while the drain is raised it would hold the drain back).
  void Follow(pid_t tid);
  // Polls readable when a buffer rang the doorbell since TakeDrainWake():
  // raising the drain does not wake it, and it would sleep until its next
  // read of the logs (up to 100 ms into a storm that fills one in 30 ms).
  // The guard's own eventfd when it watches the doorbell, else the
  // doorbell itself; -1 with no doorbell.
  int drain_wake_fd() const;
  void TakeDrainWake();
  DrainYieldStats stats() const;

 private:
  enum class Raise { kPolicy, kLate, kDoorbell };
  void Guard();
  // Puts the drain under what the policy wants; the guard's alone.
  void ApplyLocked(uint64_t now);
  // Wakes the guard.
  void Notify();
  // The guard waits up to `timeout_ms` (-1: for ever) for a notification or
  // the doorbell; true when the doorbell rang.
  bool WaitForWake(int timeout_ms);

  pid_t drain_tid_ = 0;
  std::vector<pid_t> followers_;
  bool keep_sys_nice_ = false;
  DrainYieldStats stats_;
  mutable std::mutex mu_;
  std::unique_ptr<collect::Doorbell> doorbell_;
  UniqueFd wake_fd_;   // an eventfd: Notify()
  UniqueFd drain_wake_fd_;  // an eventfd the guard writes when the doorbell rang
  UniqueFd epoll_fd_;  // the guard's wait: wake_fd_ and the doorbell
  DrainYieldPolicy policy_;
  bool begun_ = false;      // Begin() came: the drain is watched
  bool low_ = false;        // the drain is under SCHED_IDLE now
  uint64_t raised_at_ = 0;
  Raise raise_ = Raise::kPolicy;  // what made the next raise
  // When the guard wakes next (0: it waits for a change; UINT64_MAX: it is
  // awake).
  uint64_t guard_due_ = UINT64_MAX;
  bool stop_ = false;
  std::thread guard_;
};

}  // namespace gpunoise::record
