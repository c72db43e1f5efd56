// Keeps freed large blocks in the heap while collector objects load, so that
// each libbpf object's copy of the kernel's BTF reuses the memory of the one
// before instead of faulting in fresh pages.
#pragma once

#include <cstddef>

namespace gpunoise::collect {

// libbpf 1.1 reads and parses the kernel's BTF (5.5 MB here) once per
// bpf_object and frees it after the load. glibc gives blocks that size back
// to the kernel (mmap threshold, or trimming the top of the heap), so the
// next object's copy faults every page in again and the kernel clears each
// one: on this VM that was about a seventh of `record`'s start-up CPU
// (docs/performance.md, "Start-up"). While an instance lives, blocks up to
// 32 MiB come from the heap and freed ones stay there.
//
// When the outermost instance ends, the heap is trimmed and the thresholds
// are set to what glibc's own rule would have reached by then (mmap
// threshold = the largest block freed, here the BTF copy; trim threshold
// twice that; malloc/malloc.c, "dynamic mmap threshold"), so the recording's
// allocations behave as before and a long-running monitor keeps no more
// free heap than it did.
//
// mallopt is process-wide: instances nest (only the outermost acts) and may
// live on several threads at once. Per-thread arenas do not share freed
// blocks, so it pays for objects loaded one after another on one thread.
class ScopedHeapReuse {
 public:
  ScopedHeapReuse();
  ~ScopedHeapReuse();
  ScopedHeapReuse(const ScopedHeapReuse&) = delete;
  ScopedHeapReuse& operator=(const ScopedHeapReuse&) = delete;

  // The mmap threshold set at the end: `largest_block` clamped to glibc's
  // dynamic range [128 KiB, 32 MiB]. Public for testing.
  static size_t ThresholdAfter(size_t largest_block);
};

}  // namespace gpunoise::collect
