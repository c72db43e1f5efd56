#include "collect/load_heap.h"

#include <malloc.h>
#include <sys/stat.h>

#include <algorithm>
#include <mutex>

namespace gpunoise::collect {

namespace {

// glibc's bounds for its dynamic mmap threshold on 64-bit hosts
// (DEFAULT_MMAP_THRESHOLD_MIN, DEFAULT_MMAP_THRESHOLD_MAX).
constexpr size_t kMinThreshold = 128 * 1024;
constexpr size_t kMaxThreshold = 32 * 1024 * 1024;
// The most every glibc accepts for M_MMAP_THRESHOLD (HEAP_MAX_SIZE / 2), and
// far above the kernel BTF's size.
constexpr int kLoadingThreshold = 32 * 1024 * 1024;

std::mutex g_mutex;
int g_depth = 0;

// What each libbpf object reads and frees whole: the kernel's BTF.
size_t KernelBtfBytes() {
  struct stat st {};
  if (::stat("/sys/kernel/btf/vmlinux", &st) != 0 || st.st_size <= 0) return 0;
  return static_cast<size_t>(st.st_size);
}

}  // namespace

size_t ScopedHeapReuse::ThresholdAfter(size_t largest_block) {
  return std::clamp(largest_block, kMinThreshold, kMaxThreshold);
}

ScopedHeapReuse::ScopedHeapReuse() {
  std::lock_guard lock(g_mutex);
  if (g_depth++ > 0) return;
  mallopt(M_MMAP_THRESHOLD, kLoadingThreshold);
  mallopt(M_TRIM_THRESHOLD, kLoadingThreshold);
}

ScopedHeapReuse::~ScopedHeapReuse() {
  std::lock_guard lock(g_mutex);
  if (--g_depth > 0) return;
  size_t threshold = ThresholdAfter(KernelBtfBytes());
  mallopt(M_MMAP_THRESHOLD, static_cast<int>(threshold));
  mallopt(M_TRIM_THRESHOLD, static_cast<int>(2 * threshold));
  malloc_trim(0);
}

}  // namespace gpunoise::collect
