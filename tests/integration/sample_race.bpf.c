// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Runs the sampler's insert path (bpf/sample_count.bpf.h) on a key of the
 * test's choosing, with BPF_PROG_TEST_RUN: the test makes the race (the key
 * already inserted, as by another CPU between lookup and update) and the
 * full map happen on demand. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "../../bpf/sample_count.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

__u32 key = 0;
__u64 full = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} samples SEC(".maps");

SEC("raw_tp")
int insert_after_a_missed_lookup(void *ctx)
{
	__u32 k = key;
	if (!gn_insert_sample(&samples, &k))
		full += 1;
	return 0;
}
