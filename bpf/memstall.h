/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* memstall collector: tasks stalled in memory reclaim (vmscan direct and
 * memcg reclaim, reclaim throttling) and compaction. Each completed stall
 * goes into a fixed log in .bss that user space reads as it goes (no ring
 * records); a stall the log had no room for is counted. Shared layouts
 * only: fixed-width fields (userspace/collect/memstall_collector.cc pins
 * them). */
#ifndef GPUNOISE_BPF_MEMSTALL_H
#define GPUNOISE_BPF_MEMSTALL_H

#ifndef __bpf__
#include <linux/types.h>
#endif

enum gn_memstall_kind {
	GN_MS_DIRECT_RECLAIM = 0, /* vmscan:mm_vmscan_direct_reclaim_begin/end */
	GN_MS_MEMCG_RECLAIM = 1,  /* vmscan:mm_vmscan_memcg_reclaim_begin/end */
	GN_MS_COMPACTION = 2,     /* compaction:mm_compaction_begin/end */
	GN_MS_THROTTLED = 3,      /* vmscan:mm_vmscan_throttled (its usec_delayed) */
	GN_MS_DIRTY_THROTTLE = 4, /* writeback:balance_dirty_pages (the pause it is about to sleep) */
	GN_MS_KINDS = 5,
};

/* Entries of the log (a power of two). */
#define GN_MS_LOG 8192

struct gn_memstall {
	__u64 seq;   /* index + 1, written last: a reader checks it was not overwritten */
	__u64 begin; /* CLOCK_BOOTTIME ns */
	__u64 end;
	__u64 value; /* nr_reclaimed, compaction status or throttle reason */
	__u32 tid;
	__u16 kind;  /* enum gn_memstall_kind */
	__u16 cpu;
};

#endif /* GPUNOISE_BPF_MEMSTALL_H */
