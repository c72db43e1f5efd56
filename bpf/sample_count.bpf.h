/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Counting one sample per key in a BPF_MAP_TYPE_PERCPU_HASH, for the
 * sampler (bpf/sampler.bpf.c) and the test that races it
 * (tests/integration/sample_race.bpf.c). */
#ifndef GPUNOISE_SAMPLE_COUNT_BPF_H
#define GPUNOISE_SAMPLE_COUNT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

/* The slow path of gn_count_sample: no CPU had `key` when we looked. False
 * when the map is full (the caller counts it). */
static __always_inline bool gn_insert_sample(void *map, const void *key)
{
	__u64 one = 1;
	if (bpf_map_update_elem(map, key, &one, BPF_NOEXIST) == 0)
		return true;
	/* Another CPU inserted the same key between our lookup and our update
	 * (EEXIST): the entry is there now, with this CPU's copy at zero. */
	__u64 *count = bpf_map_lookup_elem(map, key);
	if (!count)
		return false;
	*count += 1; /* this CPU's copy; samples do not nest on a CPU */
	return true;
}

static __always_inline bool gn_count_sample(void *map, const void *key)
{
	__u64 *count = bpf_map_lookup_elem(map, key);
	if (count) {
		*count += 1;
		return true;
	}
	return gn_insert_sample(map, key);
}

#endif /* GPUNOISE_SAMPLE_COUNT_BPF_H */
