// BatchFlusher's choice of CPUs (collect/batch_flush.h). A flush program fd
// of -1 makes every flush run fail, so runs() counts the IPIs a real
// program would have cost, without root.
#include "collect/batch_flush.h"

#include <gtest/gtest.h>
#include <time.h>

#include <vector>

namespace gpunoise::collect {
namespace {

uint64_t BoottimeNow() {
  timespec ts{};
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

TEST(BatchFlusher, FlushesOnlyTheCpusWhoseBatchHoldsRecords) {
  std::vector<gn_batch_word> words(GN_MAX_CPUS);
  words[0].seq = 128;
  words[2].state = 56 | (1ull << 16);  // one record committed
  words[3].busy = 1;                    // the first record being written
  words[5].seq = 64;
  BatchFlusher f(-1, {0, 2, 3, 5}, GN_BATCH_STREAM_IRQ, words.data());
  uint64_t before = BoottimeNow();
  EXPECT_EQ(f.FlushAll(), 2u);  // both runs fail: fd -1
  uint64_t after = BoottimeNow();
  EXPECT_EQ(f.runs(), 2u);
  EXPECT_EQ(f.skipped(), 2u);
  ASSERT_EQ(f.idle().size(), 2u);
  EXPECT_EQ(f.idle()[0].cpu, 0);
  EXPECT_EQ(f.idle()[0].seq, 128u);
  EXPECT_EQ(f.idle()[1].cpu, 5);
  EXPECT_EQ(f.idle()[1].seq, 64u);
  // The read's time, a little earlier: never after the read.
  EXPECT_LE(f.idle()[0].ts, after);
  EXPECT_GE(f.idle()[0].ts + 1'000'000, before);
  EXPECT_EQ(f.stream(), static_cast<uint32_t>(GN_BATCH_STREAM_IRQ));
}

TEST(BatchFlusher, ABatchBeingFlushedIsNotIdle) {
  std::vector<gn_batch_word> words(GN_MAX_CPUS);
  // The flush's last steps: the state is already empty, the mark not yet
  // cleared.
  words[1].seq = 64;
  words[1].busy = 1;
  BatchFlusher f(-1, {1}, 0, words.data());
  f.FlushAll();
  EXPECT_EQ(f.runs(), 1u);
  EXPECT_TRUE(f.idle().empty());
}

TEST(BatchFlusher, ACpuWhoseBatchWroteItselfSinceTheLastLookGetsNoIpi) {
  std::vector<gn_batch_word> words(GN_MAX_CPUS);
  words[2].state = 56 | (1ull << 16);
  BatchFlusher f(-1, {2}, 0, words.data());
  f.FlushAll();  // the first look: flushed (the run fails: fd -1)
  EXPECT_EQ(f.runs(), 1u);
  words[2].seq = 64;  // a full batch went to the ring by itself
  f.FlushAll();
  EXPECT_EQ(f.runs(), 1u);
  EXPECT_EQ(f.self_flushed(), 1u);
  EXPECT_TRUE(f.idle().empty());
  f.FlushAll();  // no batch written since: its records wait for this flush
  EXPECT_EQ(f.runs(), 2u);
  EXPECT_EQ(f.self_flushed(), 1u);
}

TEST(BatchFlusher, AnIdleCpuTheIntakeCouldNotTakeIsFlushedOnceNextTime) {
  std::vector<gn_batch_word> words(GN_MAX_CPUS);
  BatchFlusher f(-1, {0, 1}, 0, words.data());
  f.FlushAll();
  EXPECT_EQ(f.runs(), 0u);
  EXPECT_EQ(f.idle().size(), 2u);
  f.FlushNextTime(1);
  f.FlushAll();
  EXPECT_EQ(f.runs(), 1u);
  ASSERT_EQ(f.idle().size(), 1u);
  EXPECT_EQ(f.idle()[0].cpu, 0);
  f.FlushAll();  // once: idle again
  EXPECT_EQ(f.runs(), 1u);
  EXPECT_EQ(f.idle().size(), 2u);
}

TEST(BatchFlusher, WithoutTheStateWordsFlushesEveryCpu) {
  BatchFlusher f(-1, {0, 1, 2});
  EXPECT_EQ(f.FlushAll(), 3u);
  EXPECT_EQ(f.runs(), 3u);
  EXPECT_TRUE(f.idle().empty());
  EXPECT_EQ(f.busy(), 3u);
}

TEST(BatchFlusher, TheEndFlushesEveryCpuWhateverItsState) {
  std::vector<gn_batch_word> words(GN_MAX_CPUS);
  BatchFlusher f(-1, {0, 1}, 0, words.data());
  EXPECT_EQ(f.FlushAllUntilDone(2), 2u);
  EXPECT_EQ(f.runs(), 4u);  // two rounds of two
}

}  // namespace
}  // namespace gpunoise::collect
