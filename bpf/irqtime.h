/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* irqtime collector aggregates (bpf/irqtime.bpf.c <-> userspace/collect):
 * softirq time and count per CPU and vector, hard-irq time and count per IRQ
 * and CPU, x86 system-vector time per CPU, and the interrupt time that
 * landed on focus threads. Cumulative; user space computes deltas. */
#ifndef GPUNOISE_BPF_IRQTIME_H
#define GPUNOISE_BPF_IRQTIME_H

#include "irq.h"

/* gn_softirq_time: PERCPU_ARRAY, one entry. */
struct gn_softirq_time {
	__u64 count[GN_NR_SOFTIRQS]; /* at entry, like /proc/softirqs */
	__u64 ns[GN_NR_SOFTIRQS];    /* at exit */
};

/* gn_hardirq_time: PERCPU_HASH keyed by IRQ number. */
struct gn_hardirq_time {
	__u64 count;
	__u64 ns;
};

/* gn_vector_time: PERCPU_ARRAY, one entry (x86 system vectors). */
struct gn_vector_time {
	__u64 count[GN_NR_VECTOR_KINDS];
	__u64 ns[GN_NR_VECTOR_KINDS];
};

/* gn_focus_irq: PERCPU_ARRAY, one entry: interrupts that ran while a focus
 * thread was current on this CPU (the time was taken from it). */
struct gn_focus_irq {
	__u64 hardirq_count; /* device IRQs and system vectors */
	__u64 hardirq_ns;
	__u64 softirq_count;
	__u64 softirq_ns;
};

/* gn_irq_cpu: PERCPU_ARRAY, one entry: what interrupt context this CPU is
 * in right now, and its interrupt clocks. The sampler object shares this
 * map to tell which softirq or IRQ a sample interrupted; the runqlat object
 * shares it to take interrupt time out of the task runs that a focus
 * thread waited behind (as the report's attribution does). Hard irqs do not
 * nest (handlers run with interrupts off), and softirqs do not nest on a
 * CPU. */
#define GN_IRQ_NONE (-1)
#define GN_VECTOR_IRQ_BASE (-1000) /* hardirq_irq for system vector k: base - k */
struct gn_irq_cpu {
	__u64 hardirq_ts;   /* 0: not in a hard irq */
	__s32 hardirq_irq;  /* IRQ number, or GN_VECTOR_IRQ_BASE - kind */
	__u32 softirq_vec;
	__u64 softirq_ts;   /* 0: not in a softirq */
	__u32 hardirq_focus;/* the interrupted task is a focus thread */
	__u32 softirq_focus;
	__u64 hard_total_ns;  /* hard irqs and system vectors on this CPU, ever */
	__u64 soft_total_ns;  /* softirqs on this CPU, less the hard irqs inside them */
	__u64 softirq_hard0;  /* hard_total_ns when the current softirq began */
};

#endif /* GPUNOISE_BPF_IRQTIME_H */
