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
	/* The run-queue waits split by what had the CPU meanwhile (the rest
	 * went to tasks, gn_rq_culprit, or to idle): */
	__u64 wait_hardirq_ns;  /* hard irqs and system vectors */
	__u64 wait_softirq_ns;  /* softirqs (less the hard irqs inside them) */
	__u64 wait_unknown_ns;  /* before the CPU's oldest remembered run */
};

/* The last runs on each CPU, so that a focus thread's run-queue wait can be
 * charged, when it ends, to the tasks that had the CPU meanwhile (the
 * report's attribution of a wait, done in the kernel). Waits longer than
 * these runs leave the rest as wait_unknown_ns. */
#define GN_RQ_HISTORY 16

struct gn_rq_run {
	__u32 tid; /* 0: the idle task */
	__u32 tgid;
	__u64 start;
	__u64 end;
	__u64 hard_ns; /* interrupt time inside the run (gn_irq_cpu clocks) */
	__u64 soft_ns;
	char comm[16];
};

/* gn_rq_culprit: HASH keyed by the tid of a task that ran while a focus
 * thread waited for a CPU, and that CPU (only that CPU's programs update
 * an entry, so plain adds are safe; a per-CPU hash would preallocate every
 * entry on every CPU). The task's time less the interrupts inside it. User
 * space deletes entries of tasks that have exited. */
struct gn_rq_culprit_key {
	__u32 tid;
	__u32 cpu;
};

struct gn_rq_culprit {
	__u64 wait_ns; /* focus threads' waiting time it had the CPU */
	__u64 waits;   /* waits it was part of */
	__u64 last;    /* end of the last wait counted (counts each wait once) */
	__u32 tgid;
	__u32 pad;
	char comm[16];
};

#endif /* GPUNOISE_BPF_RUNQLAT_H */
