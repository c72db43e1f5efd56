/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A per-CPU, direct-mapped front for the per-CPU hash maps that count
 * packets (gn_dev_stats, gn_napi_stats, gn_drop_stats).
 *
 * Under a NET_RX flood three counter programs run per packet, and the hash
 * lookup was a third of each run: 94-98 ns per run against 61-64 ns with a
 * plain array slot (bpf_stats, UDP flood, docs/performance.md). A key's
 * slot is an array index (CPU x GN_AGG_CACHE_SLOTS + a mix of the key), a
 * lookup the verifier inlines. The first key that lands on a free slot owns
 * it for good and counts there; any other key on that slot counts in the
 * hash map as before. A count never moves between the two, so user space
 * reads each key's count on a CPU as its slot's plus its hash entry's, and
 * every count it reads only grows. The monitor frees the slots of devices
 * that are gone (user space writes GN_AGG_SLOT_FREE through its mapping).
 *
 * Slots hold the state word, then the key, then the value, all in 64-bit
 * words (bpf/net.h, struct gn_*_cache_slot). */
#ifndef GPUNOISE_AGG_CACHE_BPF_H
#define GPUNOISE_AGG_CACHE_BPF_H

#include "net.bpf.h"

/* Defines `name`, a cache of `struct slot`s. User space sizes it to
 * possible CPUs x GN_AGG_CACHE_SLOTS before load; left at one CPU's slots,
 * the other CPUs find no slot and count in the hash map. */
#define GN_AGG_CACHE(name, slot)                                        \
	struct {                                                        \
		__uint(type, BPF_MAP_TYPE_ARRAY);                       \
		__uint(map_flags, BPF_F_MMAPABLE);                      \
		__uint(max_entries, GN_AGG_CACHE_SLOTS);                \
		__type(key, __u32);                                     \
		__type(value, struct slot);                             \
	} name SEC(".maps")

static __always_inline __u64 *gn_agg_cache_slot(void *cache, __u32 mixed)
{
	__u32 idx = bpf_get_smp_processor_id() * GN_AGG_CACHE_SLOTS + (mixed & (GN_AGG_CACHE_SLOTS - 1));
	return bpf_map_lookup_elem(cache, &idx);
}

static __always_inline bool gn_agg_slot_holds(const __u64 *slot, const __u64 *key, const __u32 key_words)
{
	if (*(volatile const __u64 *)slot != GN_AGG_SLOT_OWNED)
		return false;
	bool same = true;
	for (__u32 i = 0; i < key_words; i++)
		same &= slot[1 + i] == key[i];
	return same;
}

/* This CPU's value for `key` (key_words 64-bit words): its own cache slot,
 * claimed when free, else its hash entry, created zeroed when missing.
 * `*created` as for gn_agg_slot. A program that interrupts a claim finds
 * the slot GN_AGG_SLOT_CLAIMING and counts in the hash map. */
static __always_inline void *gn_agg_cached(void *cache, void *map, const void *key,
					   const __u32 key_words, const void *zero,
					   const __u32 value_words, __u32 mixed, bool *created)
{
	const __u64 *k = key;
	__u64 *slot = gn_agg_cache_slot(cache, mixed);
	if (slot) {
		if (gn_agg_slot_holds(slot, k, key_words))
			return slot + 1 + key_words;
		if (*(volatile __u64 *)slot == GN_AGG_SLOT_FREE &&
		    __sync_val_compare_and_swap(slot, GN_AGG_SLOT_FREE, GN_AGG_SLOT_CLAIMING) ==
			    GN_AGG_SLOT_FREE) {
			for (__u32 i = 0; i < key_words; i++)
				slot[1 + i] = k[i];
			for (__u32 i = 0; i < value_words; i++)
				slot[1 + key_words + i] = 0;
			/* An exchange, not a store: BPF's atomics with fetch are
			 * full barriers, so a reader that sees the slot owned
			 * sees its key on any architecture. */
			__sync_lock_test_and_set(slot, GN_AGG_SLOT_OWNED);
			*created = true;
			return slot + 1 + key_words;
		}
	}
	return gn_agg_slot(map, key, zero, created);
}

/* This CPU's existing value for `key`, wherever it counts; NULL if none. */
static __always_inline void *gn_agg_cached_find(void *cache, void *map, const void *key,
						const __u32 key_words, __u32 mixed)
{
	__u64 *slot = gn_agg_cache_slot(cache, mixed);
	if (slot && gn_agg_slot_holds(slot, key, key_words))
		return slot + 1 + key_words;
	return bpf_map_lookup_elem(map, key);
}

#define GN_WORDS(type) (sizeof(type) / sizeof(__u64))

#endif /* GPUNOISE_AGG_CACHE_BPF_H */
