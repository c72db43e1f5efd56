// ScopedHeapReuse (collect/load_heap.h): freed large blocks stay in the heap
// while loading, and go back to the kernel afterwards. Faults are counted
// with getrusage, so this runs in a binary of its own: other tests' heaps
// would move the numbers.
#include "collect/load_heap.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdlib>
#include <cstring>

namespace gpunoise::collect {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kOwnAllocator = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kOwnAllocator = true;
#else
constexpr bool kOwnAllocator = false;
#endif
#else
constexpr bool kOwnAllocator = false;
#endif

// Below the threshold while loading (32 MiB), above the one set afterwards
// (the kernel BTF's size: 5.5 MB here, under 10 MB on distribution kernels).
constexpr size_t kBlock = 24 * 1024 * 1024;
constexpr long kPages = kBlock / 4096;

long MinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_minflt;
}

// Allocates, touches every page and frees one block; the faults it took.
long FaultsOfOneBlock() {
  long before = MinorFaults();
  void* block = std::malloc(kBlock);
  EXPECT_NE(block, nullptr);
  std::memset(block, 1, kBlock);
  // Keeps the compiler from removing the allocation.
  asm volatile("" : : "r"(block) : "memory");
  std::free(block);
  return MinorFaults() - before;
}

class ScopedHeapReuseTest : public testing::Test {
 protected:
  void SetUp() override {
    if (kOwnAllocator) GTEST_SKIP() << "the sanitizer's allocator ignores mallopt";
  }
};

TEST_F(ScopedHeapReuseTest, FreedBlockIsReusedWithoutFaults) {
  ScopedHeapReuse heap;
  FaultsOfOneBlock();  // the heap grows once
  EXPECT_LT(FaultsOfOneBlock(), kPages / 10);
}

TEST_F(ScopedHeapReuseTest, NestedInstancesKeepReuseUntilOutermostEnds) {
  ScopedHeapReuse outer;
  { ScopedHeapReuse inner; }
  FaultsOfOneBlock();
  EXPECT_LT(FaultsOfOneBlock(), kPages / 10);
}

TEST_F(ScopedHeapReuseTest, AfterTheScopeLargeBlocksGoBackToTheKernel) {
  { ScopedHeapReuse heap; }
  FaultsOfOneBlock();
  // Above the mmap threshold: every page is faulted in again.
  EXPECT_GT(FaultsOfOneBlock(), kPages / 2);
}

TEST_F(ScopedHeapReuseTest, ThresholdAfterClampsToGlibcRange) {
  EXPECT_EQ(ScopedHeapReuse::ThresholdAfter(0), 128u * 1024);
  EXPECT_EQ(ScopedHeapReuse::ThresholdAfter(5519912), 5519912u);
  EXPECT_EQ(ScopedHeapReuse::ThresholdAfter(size_t{1} << 30), 32u * 1024 * 1024);
}

}  // namespace
}  // namespace gpunoise::collect
