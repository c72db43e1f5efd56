/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* cpustate collector: what the CPUs under the threads did beyond the
 * scheduler's own events: idle periods (power:cpu_idle, entry to exit, with
 * the state), frequency changes (power:cpu_frequency), and NUMA balancing
 * (sched:sched_move_numa, sched:sched_swap_numa, migrate:mm_migrate_pages).
 * Idle periods and frequency changes are frequent: each CPU writes them into
 * its own region of one mmap'able array (no ring records, no shared cache
 * line), as the kwork collector does. NUMA balancing is rare: one .bss log,
 * as the memstall collector keeps. Shared layouts only: fixed-width fields
 * (userspace/collect/cpustate_collector.cc pins them). */
#ifndef GPUNOISE_BPF_CPUSTATE_H
#define GPUNOISE_BPF_CPUSTATE_H

#ifndef __bpf__
#include <linux/types.h>
#endif

enum gn_cpustate_kind {
	GN_CS_IDLE = 0,      /* power:cpu_idle entry .. exit (PWR_EVENT_EXIT): a whole idle period */
	GN_CS_FREQUENCY = 1, /* power:cpu_frequency: the CPU's new frequency (kHz), an instant */
	GN_CS_KINDS = 2,
};

enum gn_numa_kind {
	GN_NB_MOVE = 0,    /* sched:sched_move_numa: a task moved to its preferred node */
	GN_NB_SWAP = 1,    /* sched:sched_swap_numa: two tasks swapped CPUs across nodes */
	GN_NB_MIGRATE = 2, /* migrate:mm_migrate_pages, reason NUMA_MISPLACED only: pages migrated in the current task's context */
	GN_NB_KINDS = 3,
};

/* Per CPU (a power of two). At the default 100 ms drain a CPU may go idle
 * 80k times a second before entries are overwritten (and counted lost);
 * user space drains sooner when a CPU fills a quarter of it. */
#define GN_CS_LOG 8192

struct gn_cpustate {
	__u64 seq;   /* index on this CPU + 1, written last */
	__u64 begin; /* CLOCK_BOOTTIME ns: idle entry; the frequency change */
	__u64 end;   /* idle exit; = begin for a frequency change */
	__u32 value; /* idle: the state index (cpuidle's, as cpu_idle reports it); frequency: kHz */
	__u16 kind;  /* enum gn_cpustate_kind */
	__u16 cpu;   /* the CPU the idle period or frequency belongs to */
};

/* One per CPU, a cache line each. */
struct gn_cpustate_head {
	__u64 next;     /* entries written on this CPU */
	__u64 unpaired; /* idle exits with no entry (attached mid-idle) */
	__u64 read;     /* user space: entries it has read on this CPU (the doorbell, bpf/doorbell.bpf.h) */
	__u64 pad[5];
};

/* NUMA balancing events (a power of two). */
#define GN_NB_LOG 1024

struct gn_numa {
	__u64 seq;       /* index + 1, written last */
	__u64 ts;        /* CLOCK_BOOTTIME ns */
	__u64 succeeded; /* migrate: pages migrated (nr_succeeded) */
	__u64 failed;    /* migrate: pages that failed to migrate */
	__u32 tid;       /* move: the task moved; swap: the source task; migrate: the current task */
	__u32 other_tid; /* swap: the task it swapped with; else 0 */
	__s32 src_cpu, dst_cpu;
	__s32 src_nid, dst_nid;
	__s32 reason;    /* migrate: enum migrate_reason (5: MR_NUMA_MISPLACED); else -1 */
	__u16 kind;      /* enum gn_numa_kind */
	__u16 cpu;       /* where the event fired */
};

#endif /* GPUNOISE_BPF_CPUSTATE_H */
