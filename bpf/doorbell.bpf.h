/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The drain's doorbell. A drain that yielded its CPU to the job (record
 * --drain-priority idle) can be starved for as long as the job keeps every
 * CPU busy, and its guard thread would only notice a turn late by 125 to
 * 300 ms. The span logs (kwork, cpustate) wake nobody and overwrite their
 * oldest entries, and an IPI storm fills a kernel-work log in 30 ms; a UDP
 * flood fills a 1 MiB ring (a 256-CPU node's share) as fast. So a program
 * that finds its CPU's log, or makes its CPU's ring, half full rings this
 * ring, and the guard (userspace/record/drain_priority.h), woken at once,
 * puts the drain back under SCHED_OTHER. Shared like gn_gate; an object's
 * own copy fills unread, and then rings nobody. */
#ifndef GPUNOISE_DOORBELL_BPF_H
#define GPUNOISE_DOORBELL_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096); /* user space shares a page-sized one */
} gn_doorbell SEC(".maps");

static __always_inline void gn_doorbell_ring(__u32 cpu)
{
	bpf_ringbuf_output(&gn_doorbell, &cpu, sizeof(cpu), BPF_RB_FORCE_WAKEUP);
}

/* `n`: the index this program just claimed in its CPU's log of `size`
 * entries (a power of two, at least 8); `read`: the entries user space has
 * read there. Looked at once every size/8 entries, so an event pays an AND
 * and a branch. Rings at each look from half full until the log laps (at
 * most four times a lap): a ring the guard found while the drain was
 * already raised costs one wakeup. */
static __always_inline void gn_doorbell_check(__u64 n, __u64 size, const __u64 *read, __u32 cpu)
{
	if (((n + 1) & (size / 8 - 1)) != 0)
		return;
	__u64 done = *(const volatile __u64 *)read;
	/* An entry claimed after this one may already be read. */
	if (done >= n + 1)
		return;
	__u64 unread = n + 1 - done;
	if (unread < size / 2 || unread >= size)
		return;
	gn_doorbell_ring(cpu);
}

#endif /* GPUNOISE_DOORBELL_BPF_H */
