/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* runqlat collector aggregates (bpf/runqlat.bpf.c <-> userspace/collect):
 * run-queue latency histograms in log2 microseconds, as bcc's runqlat keeps
 * them, for all threads and for focus threads, and what happened to the
 * focus threads on each CPU. Everything is cumulative; user space computes
 * interval deltas. */
#ifndef GPUNOISE_BPF_RUNQLAT_H
#define GPUNOISE_BPF_RUNQLAT_H

#include "record.h"

/* Slot i counts waits of [2^i, 2^(i+1)) us (slot 0: under 2 us); the last
 * slot also takes everything longer (2^26 us = 67 s and up). */
#define GN_RQ_SLOTS 27

enum gn_rq_scope {
	GN_RQ_ALL = 0,   /* every thread switched in */
	GN_RQ_FOCUS = 1, /* focus threads only */
	GN_RQ_NR_SCOPES = 2,
};

/* gn_rq_hist: PERCPU_ARRAY indexed by enum gn_rq_scope; the CPU is the one
 * the thread was switched in on. */
struct gn_rq_hist {
	__u64 slots[GN_RQ_SLOTS];
	__u64 count;
	__u64 sum_ns;
};

/* Why a thread was waiting in a run queue. */
enum gn_rq_reason {
	GN_RQ_WOKEN = 0,     /* sched_wakeup / sched_wakeup_new */
	GN_RQ_PREEMPTED = 1, /* switched out while still runnable */
};

/* gn_focus_sched: PERCPU_ARRAY, one entry: focus threads on this CPU. */
struct gn_focus_sched {
	__u64 switches;         /* focus thread switched out */
	__u64 preempted;        /* ... while still runnable (involuntary) */
	__u64 preempted_by[4];  /* ... by a task of enum gn_task_class */
	__u64 oncpu_ns;         /* time focus threads ran here */
	__u64 wait_woken_ns;    /* run-queue wait after a wakeup */
	__u64 wait_preempted_ns;/* run-queue wait after a preemption */
	__u64 waits;            /* run-queue waits that ended here */
};

#endif /* GPUNOISE_BPF_RUNQLAT_H */
