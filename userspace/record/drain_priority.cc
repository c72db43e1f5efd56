#include "record/drain_priority.h"

#include <algorithm>
#include <future>
#include <system_error>

#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/clock.h"
#include "common/capabilities.h"
#include "common/log.h"
#include "common/thread_priority.h"

namespace gpunoise::record {

namespace {

constexpr uint64_t kMinSlackNs = 25'000'000;
// From the guard's raise to a drain that reads again: the raised thread
// waits for a CPU under SCHED_OTHER (a tick or two), then reads at about
// 100 ns an event. Generous on purpose.
constexpr uint64_t kReactionNs = 50'000'000;
// Calm turns before the first step down, at the start of the loop: a
// recording that starts inside a storm must not begin starved (with 1 MiB
// rings a UDP flood fills a ring in about 30 ms).
constexpr uint32_t kStartCalmNeeded = 3;
constexpr uint32_t kFirstCalmNeeded = 10;
constexpr uint32_t kMaxCalmNeeded = 640;

}  // namespace

DrainYieldPolicy::DrainYieldPolicy(uint64_t interval_ns)
    : interval_ns_(std::max<uint64_t>(interval_ns, 1'000'000)),
      min_late_(interval_ns_ + std::max(kMinSlackNs, interval_ns_ / 4)),
      max_late_(std::max(min_late_, 3 * interval_ns_)),
      late_after_(max_late_),
      raised_(true),
      calm_needed_(kStartCalmNeeded) {}

DrainYieldPolicy::Step DrainYieldPolicy::OnTurn(uint64_t now, std::span<const BufferFill> buffers, bool new_loss) {
  const uint64_t since_read = last_read_ && now > last_read_ ? now - last_read_ : 0;
  const bool late_turn = last_read_ && since_read > late_after_;
  if (window_produced_.size() != buffers.size()) window_produced_.assign(buffers.size(), 0);
  // Each buffer's rate, over windows of at least an interval: turns come
  // back to back under a storm (each drain is bounded), and a few
  // milliseconds' rate is noise.
  bool half_full = false;
  for (size_t i = 0; i < buffers.size(); ++i) {
    window_produced_[i] += buffers[i].produced;
    half_full |= buffers[i].capacity && buffers[i].held * 2 >= buffers[i].capacity;
  }
  window_ns_ += since_read;
  if (window_ns_ >= interval_ns_) {
    rate_known_ = true;
    fill_ns_ = UINT64_MAX;
    for (size_t i = 0; i < buffers.size(); ++i) {
      if (!window_produced_[i] || !buffers[i].capacity) continue;
      const double fill = static_cast<double>(buffers[i].capacity) * static_cast<double>(window_ns_) /
                          static_cast<double>(window_produced_[i]);
      fill_ns_ = std::min(fill_ns_, static_cast<uint64_t>(std::min(fill, 1e18)));
    }
    window_ns_ = 0;
    std::fill(window_produced_.begin(), window_produced_.end(), 0);
  }
  // The time the first buffer takes to fill from empty at that rate. A
  // late drain must fit in it, with room to spare (a VM's stall, a slow
  // turn): the guard acts after a third of it, and a buffer that fills in
  // less than the shortest late_after() and twice kReactionNs cannot wait
  // for a low-priority drain at all. The doorbell catches a starved drain
  // at half full instead, whenever that comes: then only the half left
  // must outlast the reaction. (With 4 MiB rings a UDP flood that fills one
  // in 130 ms kept the drain raised through the flood, and the job's
  // receiver missed 14% of its datagrams: docs/performance.md.)
  late_after_ = std::clamp(fill_ns_ / 3, min_late_, max_late_);
  const uint64_t fills_too_fast = doorbell_ ? 2 * kReactionNs : min_late_ + 2 * kReactionNs;
  const bool pressure = new_loss || half_full || fill_ns_ < fills_too_fast;
  last_read_ = now;
  last_turn_ = now;
  if (!raised_) return pressure ? Step::kRaise : Step::kStay;
  // A step down needs a rate seen over a whole window: until then the
  // buffers' room is unknown.
  calm_turns_ = pressure || late_turn || !rate_known_ ? 0 : calm_turns_ + 1;
  return calm_turns_ >= calm_needed_ ? Step::kLower : Step::kStay;
}

void DrainYieldPolicy::Raised() {
  raised_ = true;
  calm_turns_ = 0;
  ++raises_;
  calm_needed_ = std::min(kFirstCalmNeeded << std::min<uint32_t>(raises_ - 1, 6), kMaxCalmNeeded);
}

DrainYield::DrainYield(bool yield, uint64_t interval_ns, std::unique_ptr<collect::Doorbell> doorbell)
    : doorbell_(std::move(doorbell)), policy_(interval_ns) {
  drain_tid_ = ThisThreadId();
  if (!yield) return;
  wake_fd_.Reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  drain_wake_fd_.Reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  epoll_fd_.Reset(::epoll_create1(EPOLL_CLOEXEC));
  if (!wake_fd_.valid() || !drain_wake_fd_.valid() || !epoll_fd_.valid()) {
    stats_.unavailable = fmt::format("no guard: {}", std::strerror(errno));
    return;
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u32 = 0;
  ::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, wake_fd_.get(), &ev);
  if (doorbell_) {
    ev.data.u32 = 1;
    if (::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, doorbell_->fd(), &ev) != 0) {
      log::Warning("record: the drain's guard cannot watch its doorbell: {}", std::strerror(errno));
      doorbell_.reset();
    }
  }
  policy_.WatchesDoorbell(doorbell_ != nullptr);
  auto policy = ThreadPolicy(drain_tid_);
  auto nice = ThreadNice(drain_tid_);
  if (!policy.ok() || !nice.ok()) {
    stats_.unavailable = !policy.ok() ? policy.error().message : nice.error().message;
    return;
  }
  if (*policy != SCHED_OTHER) {
    stats_.unavailable = fmt::format("gpunoise runs under scheduling policy {}, not SCHED_OTHER", *policy);
    return;
  }
  // The way back: RLIMIT_NICE for the whole process (no capability kept),
  // else CAP_SYS_NICE for the guard alone (a root without
  // CAP_SYS_RESOURCE, as in some containers).
  if (Status limit = AllowNiceDownTo(*nice); !limit.ok()) {
    auto caps = CurrentCapabilities();
    if (!caps.ok() || !(caps->effective & CapBit(kCapSysNice))) {
      stats_.unavailable = limit.error().message + ", and no CAP_SYS_NICE";
      return;
    }
    keep_sys_nice_ = true;
  }
  std::promise<std::string> ready;
  std::future<std::string> dropped = ready.get_future();
  try {
    guard_ = std::thread([this, ready = std::move(ready)]() mutable {
      ::pthread_setname_np(::pthread_self(), "gn-drain-guard");
      // Made before the recorder drops its capabilities, it drops its own.
      auto kept = DropCapabilitiesExcept(keep_sys_nice_ ? CapBit(kCapSysNice) : 0);
      ready.set_value(kept.ok() ? "" : kept.error().message);
      if (kept.ok()) Guard();
    });
  } catch (const std::system_error& e) {
    stats_.unavailable = std::string("no guard thread: ") + e.what();
    return;
  }
  // Wait for the drop: the guard must not be seen holding what the
  // recorder gave up.
  if (std::string error = dropped.get(); !error.empty()) {
    guard_.join();
    stats_.unavailable = "the guard could not drop its capabilities: " + error;
    return;
  }
  stats_.yielded = true;
}

DrainYield::~DrainYield() { Stop(); }

void DrainYield::Begin(uint64_t now) {
  if (!guard_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    if (stop_) return;
    begun_ = true;
    policy_.Beat(now);
  }
  Notify();
}

void DrainYield::Follow(pid_t tid) {
  if (!guard_.joinable() || tid <= 0) return;
  std::lock_guard lock(mu_);
  followers_.push_back(tid);
  if (low_) {
    if (Status st = SetThreadIdle(tid, true); !st.ok()) log::Warning("record: {}", st.error().message);
  }
}

void DrainYield::TurnStarted(uint64_t now) {
  if (!guard_.joinable()) return;
  std::lock_guard lock(mu_);
  policy_.Beat(now);
}

void DrainYield::TurnEnded(uint64_t now, std::span<const BufferFill> buffers, bool new_loss) {
  if (!guard_.joinable()) return;
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    if (!begun_ || stop_) return;
    switch (policy_.OnTurn(now, buffers, new_loss)) {
      case DrainYieldPolicy::Step::kRaise:
        policy_.Raised();
        wake = true;
        break;
      case DrainYieldPolicy::Step::kLower:
        policy_.Lowered();
        wake = true;
        break;
      case DrainYieldPolicy::Step::kStay:
        // The guard sleeps until the next turn is due; woken only when that
        // came sooner (a futex wake per turn would double the recorder's
        // wakeups).
        wake = !policy_.raised() && guard_due_ != 0 && guard_due_ != UINT64_MAX &&
               policy_.last_turn() + policy_.late_after() < guard_due_;
        break;
    }
  }
  if (wake) Notify();
}

void DrainYield::ApplyLocked(uint64_t now) {
  const bool want_low = begun_ && !stop_ && !policy_.raised();
  if (want_low == low_) return;
  if (Status st = SetThreadIdle(drain_tid_, want_low); !st.ok()) {
    log::Warning("record: {}", st.error().message);
    if (want_low) policy_.Raised();  // stays where it is: watched as raised
    return;
  }
  for (pid_t tid : followers_)
    if (Status st = SetThreadIdle(tid, want_low); !st.ok()) log::Warning("record: {}", st.error().message);
  if (want_low) {
    if (stats_.idle_from) stats_.raised_ns += now - std::min(now, raised_at_);
    else stats_.idle_from = now;
  } else if (!stop_) {  // at the end it is no raise
    raised_at_ = now;
    ++stats_.raises;
    if (raise_ == Raise::kLate) ++stats_.raised_for_late;
    if (raise_ == Raise::kDoorbell) ++stats_.raised_for_doorbell;
  }
  raise_ = Raise::kPolicy;
  low_ = want_low;
}

void DrainYield::Notify() {
  if (!wake_fd_.valid()) return;
  const uint64_t one = 1;
  // Fails only when the counter is about to overflow: the guard is awake.
  [[maybe_unused]] ssize_t n = ::write(wake_fd_.get(), &one, sizeof(one));
}

bool DrainYield::WaitForWake(int timeout_ms) {
  epoll_event events[2];
  const int n = ::epoll_wait(epoll_fd_.get(), events, 2, timeout_ms);
  bool rang = false;
  for (int i = 0; i < n; ++i) {
    if (events[i].data.u32 == 0) {
      uint64_t count;
      [[maybe_unused]] ssize_t r = ::read(wake_fd_.get(), &count, sizeof(count));
    } else {
      doorbell_->Clear();
      rang = true;
    }
  }
  if (rang) {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t w = ::write(drain_wake_fd_.get(), &one, sizeof(one));
  }
  return rang;
}

// The guard's choice is made once, in the constructor (stats_.yielded), so
// the fd stays the same after Stop().
int DrainYield::drain_wake_fd() const {
  if (stats_.yielded) return drain_wake_fd_.get();
  return doorbell_ ? doorbell_->fd() : -1;
}

void DrainYield::TakeDrainWake() {
  if (stats_.yielded) {
    uint64_t count;
    [[maybe_unused]] ssize_t r = ::read(drain_wake_fd_.get(), &count, sizeof(count));
  } else if (doorbell_) {
    doorbell_->Clear();
  }
}

void DrainYield::Guard() {
  std::unique_lock lock(mu_);
  bool rang = false;
  while (!stop_) {
    uint64_t now = BoottimeNs();
    // A ring or log half full: its drain must run now, before the buffer
    // loses records (a raised drain is already on its way).
    if (rang && begun_ && !policy_.raised()) {
      policy_.Raised();
      raise_ = Raise::kDoorbell;
    } else if (begun_ && policy_.Late(now)) {
      policy_.Raised();
      raise_ = Raise::kLate;
    }
    ApplyLocked(now);
    int timeout_ms = -1;  // under SCHED_OTHER nothing is timed: it waits for a change
    if (!begun_ || policy_.raised()) {
      guard_due_ = 0;
    } else {
      guard_due_ = policy_.last_turn() + policy_.late_after();
      // At least a millisecond: never a loop that holds the lock.
      const uint64_t wait_ns = std::max<uint64_t>(guard_due_ - std::min(guard_due_, now), 1'000'000);
      timeout_ms = static_cast<int>((wait_ns + 999'999) / 1'000'000);
    }
    lock.unlock();
    rang = WaitForWake(timeout_ms);
    lock.lock();
    guard_due_ = UINT64_MAX;
  }
  // Back to SCHED_OTHER for the end of the recording.
  const uint64_t now = BoottimeNs();
  if (!low_ && stats_.idle_from && stats_.raises) stats_.raised_ns += now - std::min(now, raised_at_);
  ApplyLocked(now);
}

void DrainYield::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stop_) return;
    stop_ = true;
  }
  Notify();
  if (guard_.joinable()) guard_.join();
}

DrainYieldStats DrainYield::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace gpunoise::record
