// The one protocol of the logs kernel programs fill in shared memory (the
// console, memstall, kwork and cpustate collectors): a ring of `size`
// entries (a power of two); `next` counts the entries ever claimed, and an
// entry's `seq` becomes its index + 1 once the program has written it all.
// No lock: the program never waits for the reader, so a reader that falls
// behind loses entries, and counts them.
#pragma once

#include <cstdint>
#include <cstring>

namespace gpunoise::collect {

// Hands each whole new entry from `cursor` up to `next` to `take`, in order.
// Stops at an entry still being written (seq 0 or an older lap's index): the
// next read resumes there. Counts into `lost` the entries a whole lap
// overwrote before they were read and those a later lap overwrote while
// they were copied (seq changed under the copy).
template <typename Entry, typename Take>
void ReadSeqRing(const Entry* ring, uint64_t size, uint64_t next, uint64_t& cursor, uint64_t& lost, Take&& take) {
  if (next > cursor + size) {
    lost += next - size - cursor;
    cursor = next - size;
  }
  for (; cursor < next; ++cursor) {
    const Entry& slot = ring[cursor & (size - 1)];
    uint64_t seq = __atomic_load_n(&slot.seq, __ATOMIC_ACQUIRE);
    if (seq < cursor + 1) break;
    Entry e;
    std::memcpy(&e, &slot, sizeof(e));
    if (seq != cursor + 1 || __atomic_load_n(&slot.seq, __ATOMIC_ACQUIRE) != seq || e.seq != seq) {
      ++lost;
      continue;
    }
    take(e);
  }
}

}  // namespace gpunoise::collect
