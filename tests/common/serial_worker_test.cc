#include "common/serial_worker.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "common/capabilities.h"
#include "common/fork_join.h"

namespace gpunoise {
namespace {

TEST(SerialWorker, RunsTasksInTheOrderPostedOnAThreadOfItsOwn) {
  auto worker = SerialWorker::Start("gn-test-worker", 2);
  ASSERT_TRUE(worker.ok()) << worker.error().message;
  EXPECT_GT((*worker)->tid(), 0);
  EXPECT_NE((*worker)->tid(), ::gettid());
  std::vector<int> order;  // the worker's alone until Wait() returns
  std::atomic<bool> other_thread{true};
  const pid_t poster = ::gettid();
  for (int i = 0; i < 1000; ++i)
    (*worker)->Post([&order, &other_thread, poster, i] {
      if (::gettid() == poster) other_thread = false;
      order.push_back(i);
    });
  (*worker)->Wait();
  ASSERT_EQ(order.size(), 1000u);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(order[static_cast<size_t>(i)], i);
  EXPECT_TRUE(other_thread);
}

// A worker that falls behind holds its poster back: at most `depth` tasks
// wait, so the memory they hold is bounded.
TEST(SerialWorker, PostWaitsWhileDepthTasksAreWaiting) {
  auto worker = SerialWorker::Start("gn-test-worker", 2);
  ASSERT_TRUE(worker.ok());
  std::mutex gate;
  std::unique_lock held(gate);
  std::atomic<int> posted{0};
  std::thread poster([&] {
    for (int i = 0; i < 5; ++i) {
      (*worker)->Post([&gate] { std::lock_guard wait_for_the_gate(gate); });
      ++posted;
    }
  });
  // One runs (blocked on the gate) and two wait: the fourth Post blocks.
  for (int i = 0; i < 200 && posted < 3; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(posted, 3);
  held.unlock();
  poster.join();
  EXPECT_EQ(posted, 5);
  (*worker)->Wait();
}

TEST(SerialWorker, TheDestructorRunsWhatWasPostedFirst) {
  std::atomic<int> ran{0};
  {
    auto worker = SerialWorker::Start("gn-test-worker", 8);
    ASSERT_TRUE(worker.ok());
    for (int i = 0; i < 8; ++i)
      (*worker)->Post([&ran] {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        ++ran;
      });
  }
  EXPECT_EQ(ran, 8);
}

// It runs work of the recorder after the recorder dropped its
// capabilities: it holds none from its first task on, whoever started it.
TEST(SerialWorker, HoldsNoCapabilities) {
  auto worker = SerialWorker::Start("gn-test-worker", 1);
  ASSERT_TRUE(worker.ok());
  CapMask effective = ~CapMask{0}, permitted = ~CapMask{0};
  (*worker)->Post([&] {
    if (auto caps = CurrentCapabilities(); caps.ok()) {
      effective = caps->effective;
      permitted = caps->permitted;
    }
  });
  (*worker)->Wait();
  EXPECT_EQ(effective, 0u);
  EXPECT_EQ(permitted, 0u);
}

// Drain lanes: each lane runs once per Run, lane 0 on the caller, the others
// each on a thread of its own, and Run returns when all have.
TEST(ForkJoin, RunsEachLaneOnceLaneZeroHereAndReturnsWhenAllAreDone) {
  auto f = ForkJoin::Start("gn-test-lane", 3);
  ASSERT_TRUE(f.ok()) << f.error().message;
  ASSERT_EQ((*f)->lanes(), 3u);
  ASSERT_EQ((*f)->tids().size(), 2u);
  for (int round = 0; round < 100; ++round) {
    std::vector<pid_t> ran_on(3, 0);
    std::vector<int> runs(3, 0);
    (*f)->Run([&](size_t lane) {
      if (lane != 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
      ran_on[lane] = ::gettid();
      ++runs[lane];
    });
    ASSERT_EQ(runs, std::vector<int>({1, 1, 1})) << "round " << round;
    EXPECT_EQ(ran_on[0], ::gettid());
    EXPECT_EQ(ran_on[1], (*f)->tids()[0]);
    EXPECT_EQ(ran_on[2], (*f)->tids()[1]);
  }
}

TEST(ForkJoin, OneLaneIsTheCallerAlone) {
  auto f = ForkJoin::Start("gn-test-lane", 1);
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE((*f)->tids().empty());
  pid_t ran_on = 0;
  (*f)->Run([&](size_t) { ran_on = ::gettid(); });
  EXPECT_EQ(ran_on, ::gettid());
}

}  // namespace
}  // namespace gpunoise
