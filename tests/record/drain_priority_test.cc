#include "record/drain_priority.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/thread_priority.h"
#include "common/unique_fd.h"

namespace gpunoise::record {
namespace {

using Step = DrainYieldPolicy::Step;

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kInterval = 100 * kMs;
constexpr uint64_t kRing = 4 << 20;

// One turn's rings: the fullest held `held`, the busiest took in `produced`.
std::vector<BufferFill> Ring(uint64_t held, uint64_t produced) { return {{held, produced, kRing}}; }

// Turns every `gap` from `t`, each finding `produced` new bytes in the
// busiest ring, and the fullest ring a quarter of that (the drain keeps up).
// It starts from a drain that stepped down after its first calm turns.
struct Turns {
  DrainYieldPolicy policy{kInterval};
  uint64_t t = 1000 * kMs;
  Turns() {
    for (int i = 0; i < 10; ++i)
      if (Next(kInterval, 0) == Step::kLower) {
        policy.Lowered();
        return;
      }
    ADD_FAILURE() << "a quiet start never stepped down";
  }
  Step Next(uint64_t gap, uint64_t produced, bool new_loss = false) {
    t += gap;
    return policy.OnTurn(t, Ring(produced / 4, produced), new_loss);
  }
};

TEST(DrainYieldPolicy, ItStartsRaisedAndStepsDownOnlyAfterAWholeIntervalShowedRoom) {
  DrainYieldPolicy policy(kInterval);
  EXPECT_TRUE(policy.raised());
  EXPECT_EQ(policy.calm_needed(), 3u);
  uint64_t t = 1000 * kMs;
  // Turns 1 ms apart: no window of an interval yet, so no rate, however calm.
  for (int i = 0; i < 20; ++i) EXPECT_EQ(policy.OnTurn(t += kMs, Ring(0, 0), false), Step::kStay) << i;
  // Inside a storm that fills the rings in 30 ms it stays raised.
  for (int i = 0; i < 20; ++i) EXPECT_EQ(policy.OnTurn(t += kInterval, Ring(0, kRing * 10 / 3), false), Step::kStay);
  // Room: three calm turns, each after a whole interval.
  EXPECT_EQ(policy.OnTurn(t += kInterval, Ring(0, 4096), false), Step::kStay);
  EXPECT_EQ(policy.OnTurn(t += kInterval, Ring(0, 4096), false), Step::kStay);
  EXPECT_EQ(policy.OnTurn(t += kInterval, Ring(0, 4096), false), Step::kLower);
}

TEST(DrainYieldPolicy, AQuietNodeKeepsTheDrainLowAndGivesALateTurnThreeIntervals) {
  Turns turns;
  for (int i = 0; i < 50; ++i) EXPECT_EQ(turns.Next(kInterval, 4096), Step::kStay) << i;
  EXPECT_FALSE(turns.policy.raised());
  EXPECT_EQ(turns.policy.late_after(), 3 * kInterval);
}

TEST(DrainYieldPolicy, ARingHalfFullRaisesTheDrain) {
  Turns turns;
  EXPECT_EQ(turns.policy.OnTurn(turns.t + kInterval, Ring(kRing / 2, 4096), false), Step::kRaise);
}

TEST(DrainYieldPolicy, NewLossRaisesTheDrain) {
  Turns turns;
  EXPECT_EQ(turns.Next(kInterval, 4096, true), Step::kRaise);
}

TEST(DrainYieldPolicy, RingsThatFillFasterThanTheGuardCanCatchALateDrainRaiseIt) {
  // 4 MiB in 200 ms: below the shortest late_after (125 ms) and twice the
  // 50 ms the raised drain takes to read again.
  Turns turns;
  EXPECT_EQ(turns.Next(kInterval, kRing * 100 / 200), Step::kRaise);
  Turns slower;
  EXPECT_EQ(slower.Next(kInterval, kRing * 100 / 240), Step::kStay) << "240 ms is room enough";
}

TEST(DrainYieldPolicy, WithTheDoorbellWatchedOnlyABufferThatFillsInUnderTwiceTheReactionRaisesTheDrain) {
  // A UDP flood that fills a 4 MiB ring in 130 ms (docs/performance.md):
  // the doorbell rings at half full, 65 ms before the ring is full, more
  // than the 50 ms a raised drain takes to read again.
  Turns storm;
  storm.policy.WatchesDoorbell(true);
  for (int i = 0; i < 30; ++i) EXPECT_EQ(storm.Next(kInterval, kRing * 100 / 130), Step::kStay) << i;
  EXPECT_FALSE(storm.policy.raised());
  // Without the doorbell only the guard's late turn would catch a starved
  // drain: 130 ms is too fast for that.
  Turns unwatched;
  EXPECT_EQ(unwatched.Next(kInterval, kRing * 100 / 130), Step::kRaise);
  // Full in 90 ms: the half left when it rings is less than the reaction.
  Turns faster;
  faster.policy.WatchesDoorbell(true);
  EXPECT_EQ(faster.Next(kInterval, kRing * 100 / 90), Step::kRaise);
  // A kernel-work log of 2048 entries full in 31 ms: the same.
  Turns log;
  log.policy.WatchesDoorbell(true);
  Step step = Step::kStay;
  for (int turn = 0; turn < 20 && step == Step::kStay; ++turn) {
    const std::vector<BufferFill> buffers = {{4096, 4096, kRing}, {650, 650, 2048}};
    step = log.policy.OnTurn(log.t += 10 * kMs, buffers, false);
  }
  EXPECT_EQ(step, Step::kRaise);
}

TEST(DrainYieldPolicy, AnInKernelLogThatFillsFasterThanTheGuardCanCatchALateDrainRaisesIt) {
  // The rings have room, but the kernel-work log (2048 entries a CPU) takes
  // in 65k IPI callbacks a second from one CPU: full in 31 ms. Read every
  // 10 ms, it is never half full when read.
  constexpr uint64_t kLog = 2048;
  Turns turns;
  Step step = Step::kStay;
  int turn = 0;
  for (; turn < 20 && step == Step::kStay; ++turn) {
    const std::vector<BufferFill> buffers = {{4096, 4096, kRing}, {650, 650, kLog}};
    step = turns.policy.OnTurn(turns.t += 10 * kMs, buffers, false);
  }
  EXPECT_EQ(turn, 10) << "the rate is known after a whole interval";
  EXPECT_EQ(step, Step::kRaise);
  EXPECT_EQ(turns.policy.late_after(), 125 * kMs) << "the shortest: a third of 31 ms is less";
}

TEST(DrainYieldPolicy, ALogHalfFullOrOverwrittenRaisesTheDrain) {
  Turns turns;
  const std::vector<BufferFill> half = {{0, 0, kRing}, {1024, 1024, 2048}};
  EXPECT_EQ(turns.policy.OnTurn(turns.t + kMs, half, false), Step::kRaise);
  Turns overwritten;
  const std::vector<BufferFill> quiet = {{0, 0, kRing}, {0, 0, 2048}};
  EXPECT_EQ(overwritten.policy.OnTurn(overwritten.t + kMs, quiet, true), Step::kRaise);
}

TEST(DrainYieldPolicy, ABufferKindThisNodeLacksIsNoPressure) {
  Turns turns;
  const std::vector<BufferFill> no_log = {{4096, 4096, kRing}, {}};
  for (int i = 0; i < 20; ++i) EXPECT_EQ(turns.policy.OnTurn(turns.t += kInterval, no_log, false), Step::kStay) << i;
}

TEST(DrainYieldPolicy, ABurstInsideOneIntervalIsNotARate) {
  // Under a storm the drain turns back to back; a 2 ms turn that found
  // 100 KB is 50 MB/s for 2 ms, not the ring's rate.
  Turns turns;
  EXPECT_EQ(turns.Next(2 * kMs, 100'000), Step::kStay);
  // Over the whole interval, about 10 MB/s: the ring fills in 407 ms, room
  // enough.
  for (int i = 0; i < 49; ++i) EXPECT_EQ(turns.Next(2 * kMs, 19'000), Step::kStay) << i;
  // 1,031,000 bytes in 100 ms: 406.8 ms to fill, a third of it to be late.
  EXPECT_NEAR(static_cast<double>(turns.policy.late_after()) / kMs, 135.6, 0.1);
}

TEST(DrainYieldPolicy, TheGuardCallsATurnLateAfterAThirdOfTheRingsFillTime) {
  Turns turns;
  turns.Next(kInterval, kRing / 6);  // fills in 600 ms
  const uint64_t late = turns.policy.late_after();
  EXPECT_NEAR(static_cast<double>(late) / kMs, 200.0, 0.01);
  EXPECT_FALSE(turns.policy.Late(turns.t + late - 1));
  EXPECT_TRUE(turns.policy.Late(turns.t + late));
  turns.policy.Beat(turns.t + 150 * kMs);  // a turn began
  EXPECT_FALSE(turns.policy.Late(turns.t + late));
  turns.policy.Raised();
  EXPECT_FALSE(turns.policy.Late(turns.t + 10'000 * kMs)) << "a raised drain is not watched";
}

TEST(DrainYieldPolicy, ARaisedDrainStepsDownAfterCalmTurnsTwiceAsManyEachTime) {
  Turns turns;
  uint32_t needed = 10;
  for (int raise = 0; raise < 3; ++raise, needed *= 2) {
    turns.policy.Raised();
    EXPECT_EQ(turns.policy.calm_needed(), needed);
    for (uint32_t i = 1; i < needed; ++i) ASSERT_EQ(turns.Next(kInterval, 4096), Step::kStay) << i;
    EXPECT_EQ(turns.Next(kInterval, 4096), Step::kLower);
    turns.policy.Lowered();
  }
}

TEST(DrainYieldPolicy, PressureOrALateTurnStartsTheCalmCountAgain) {
  Turns turns;
  turns.policy.Raised();
  for (int i = 0; i < 9; ++i) turns.Next(kInterval, 4096);
  EXPECT_EQ(turns.Next(kInterval, 4096, true), Step::kStay) << "new loss is not calm";
  for (int i = 0; i < 9; ++i) turns.Next(kInterval, 4096);
  EXPECT_EQ(turns.Next(10 * kInterval, 4096), Step::kStay) << "a turn late by seconds is not calm";
  for (int i = 0; i < 9; ++i) EXPECT_EQ(turns.Next(kInterval, 4096), Step::kStay);
  EXPECT_EQ(turns.Next(kInterval, 4096), Step::kLower);
}

// The DrainYield tests run their drain on a thread of their own, so the test
// thread's nice is never touched.
void OnOwnThread(const std::function<void()>& body) { std::thread(body).join(); }

// Polls for up to 2 s; with `turning`, the drain keeps taking calm turns
// meanwhile (nothing read), so that it steps down and a slow test machine
// does not make it late.
bool WaitForPolicy(pid_t tid, int policy, DrainYield* turning = nullptr) {
  for (int i = 0; i < 400; ++i) {
    if (turning) {
      turning->TurnStarted(BoottimeNs());
      turning->TurnEnded(BoottimeNs(), Ring(0, 0), false);
    }
    auto now = ThreadPolicy(tid);
    if (now.ok() && *now == policy) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

// Begins `yield` and takes calm turns until the drain is under SCHED_IDLE.
// Returns why this machine cannot yield, if it cannot.
std::string BeginAndStepDown(DrainYield& yield, pid_t me) {
  if (!yield.stats().unavailable.empty()) return yield.stats().unavailable;
  yield.Begin(BoottimeNs());
  EXPECT_TRUE(WaitForPolicy(me, SCHED_IDLE, &yield)) << "calm turns did not lower it";
  return "";
}

TEST(DrainYield, LowersTheDrainWhileItRunsAndPutsItBackAtStop) {
  OnOwnThread([] {
    const pid_t me = ThisThreadId();
    const int own = *ThreadNice(me);
    // A 10 ms interval: the first step down comes after 3 calm turns of it.
    DrainYield yield(true, 10 * kMs);
    EXPECT_EQ(*ThreadPolicy(me), SCHED_OTHER) << "not before the loop begins";
    if (auto why = BeginAndStepDown(yield, me); !why.empty()) GTEST_SKIP() << why;
    yield.Stop();
    EXPECT_EQ(*ThreadPolicy(me), SCHED_OTHER);
    EXPECT_EQ(*ThreadNice(me), own) << "its nice is untouched";
    EXPECT_TRUE(yield.stats().yielded);
    EXPECT_NE(yield.stats().idle_from, 0u);
  });
}

TEST(DrainYield, TheGuardRaisesADrainThatMissesItsTurns) {
  OnOwnThread([] {
    const pid_t me = ThisThreadId();
    // A 10 ms interval: a turn is late after 35 ms.
    DrainYield yield(true, 10 * kMs);
    if (auto why = BeginAndStepDown(yield, me); !why.empty()) GTEST_SKIP() << why;
    // No turn from now on: this thread is "starved".
    EXPECT_TRUE(WaitForPolicy(me, SCHED_OTHER)) << "the guard did not raise it";
    DrainYieldStats s = yield.stats();
    EXPECT_EQ(s.raises, 1u);
    EXPECT_EQ(s.raised_for_late, 1u);
    yield.Stop();
    EXPECT_EQ(*ThreadPolicy(me), SCHED_OTHER);
  });
}

TEST(DrainYield, PressureRaisesTheDrainAndCalmTurnsLowerItAgain) {
  OnOwnThread([] {
    const pid_t me = ThisThreadId();
    DrainYield yield(true, 10 * kMs);
    if (auto why = BeginAndStepDown(yield, me); !why.empty()) GTEST_SKIP() << why;
    yield.TurnEnded(BoottimeNs(), Ring(kRing / 2, kRing / 2), false);
    EXPECT_TRUE(WaitForPolicy(me, SCHED_OTHER)) << "a half-full ring did not raise it";
    EXPECT_TRUE(WaitForPolicy(me, SCHED_IDLE, &yield)) << "calm turns did not lower it";
    yield.Stop();
    DrainYieldStats s = yield.stats();
    EXPECT_GE(s.raises, 1u);
    EXPECT_GT(s.raised_ns, 0u);
  });
}

// A doorbell the test rings by hand: an eventfd.
class HandDoorbell final : public collect::Doorbell {
 public:
  HandDoorbell() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}
  int fd() const override { return fd_.get(); }
  void Clear() override {
    uint64_t n;
    [[maybe_unused]] ssize_t r = ::read(fd_.get(), &n, sizeof(n));
    ++clears;
  }
  void Ring() {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t w = ::write(fd_.get(), &one, sizeof(one));
  }
  std::atomic<int> clears{0};

 private:
  UniqueFd fd_;
};

// A drain on this thread that yields, with a doorbell rung by hand, begun
// and stepped down. A 100 ms interval: a turn is late only after 125 ms.
struct HandRungDrain {
  HandDoorbell* doorbell;
  DrainYield yield;
  std::string why_not;  // why this machine cannot yield, if it cannot

  HandRungDrain() : HandRungDrain(std::make_unique<HandDoorbell>()) {}

 private:
  explicit HandRungDrain(std::unique_ptr<HandDoorbell> owned)
      : doorbell(owned.get()), yield(true, kInterval, std::move(owned)) {
    why_not = BeginAndStepDown(yield, ThisThreadId());
  }
};

TEST(DrainYield, ALogsDoorbellRaisesALowDrainAtOnce) {
  OnOwnThread([] {
    const pid_t me = ThisThreadId();
    HandRungDrain drain;
    if (!drain.why_not.empty()) GTEST_SKIP() << drain.why_not;
    HandDoorbell* doorbell = drain.doorbell;
    DrainYield& yield = drain.yield;
    const uint64_t rung = BoottimeNs();
    yield.TurnStarted(rung);
    doorbell->Ring();
    EXPECT_TRUE(WaitForPolicy(me, SCHED_OTHER)) << "the doorbell did not raise it";
    EXPECT_LT(BoottimeNs() - rung, 100 * kMs) << "raised only when the turn was late";
    DrainYieldStats s = yield.stats();
    EXPECT_EQ(s.raises, 1u);
    EXPECT_EQ(s.raised_for_doorbell, 1u);
    EXPECT_EQ(s.raised_for_late, 0u);
    EXPECT_GE(doorbell->clears.load(), 1);
    // A ring while raised changes nothing.
    doorbell->Ring();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(yield.stats().raises, 1u);
    yield.Stop();
  });
}

bool Readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;
}

TEST(DrainYield, ADoorbellWakesTheDrainToo) {
  OnOwnThread([] {
    HandRungDrain drain;
    if (!drain.why_not.empty()) GTEST_SKIP() << drain.why_not;
    HandDoorbell* doorbell = drain.doorbell;
    DrainYield& yield = drain.yield;
    const int fd = yield.drain_wake_fd();
    ASSERT_GE(fd, 0);
    EXPECT_NE(fd, doorbell->fd()) << "the guard reads the doorbell; the drain hears from the guard";
    EXPECT_FALSE(Readable(fd));
    doorbell->Ring();
    bool woke = false;
    for (int i = 0; i < 200 && !woke; ++i) {
      woke = Readable(fd);
      if (!woke) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_TRUE(woke) << "raising the drain does not wake it";
    yield.TakeDrainWake();
    EXPECT_FALSE(Readable(fd));
    yield.Stop();
    EXPECT_EQ(yield.drain_wake_fd(), fd) << "the same fd after the guard stopped";
  });
}

TEST(DrainYield, ADrainThatDoesNotYieldHearsTheDoorbellItself) {
  OnOwnThread([] {
    auto owned = std::make_unique<HandDoorbell>();
    HandDoorbell* doorbell = owned.get();
    DrainYield yield(false, kInterval, std::move(owned));
    EXPECT_EQ(yield.drain_wake_fd(), doorbell->fd());
    doorbell->Ring();
    EXPECT_TRUE(Readable(yield.drain_wake_fd()));
    yield.TakeDrainWake();
    EXPECT_FALSE(Readable(yield.drain_wake_fd()));
    DrainYield none(false, kInterval);
    EXPECT_EQ(none.drain_wake_fd(), -1);
  });
}

TEST(DrainYield, DoesNotYieldWhenAskedNotToOrUnderAnotherPolicy) {
  OnOwnThread([] {
    const pid_t me = ThisThreadId();
    DrainYield off(false, kInterval);
    off.Begin(BoottimeNs());
    EXPECT_FALSE(off.stats().yielded);
    EXPECT_EQ(*ThreadPolicy(me), SCHED_OTHER);
    off.Stop();
    // A recorder someone put under SCHED_BATCH stays there.
    sched_param param{};
    ASSERT_EQ(::sched_setscheduler(me, SCHED_BATCH, &param), 0);
    DrainYield batch(true, kInterval);
    batch.Begin(BoottimeNs());
    EXPECT_NE(batch.stats().unavailable.find("not SCHED_OTHER"), std::string::npos) << batch.stats().unavailable;
    batch.Stop();
    EXPECT_EQ(*ThreadPolicy(me), SCHED_BATCH);
  });
}

}  // namespace
}  // namespace gpunoise::record
