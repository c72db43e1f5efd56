/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* sampler collector aggregates (bpf/sampler.bpf.c <-> userspace/collect):
 * what was on a focus CPU when a low-rate perf clock sampled it. */
#ifndef GPUNOISE_BPF_SAMPLER_H
#define GPUNOISE_BPF_SAMPLER_H

#include "focus.h"

enum gn_sample_context {
	GN_CTX_TASK = 0,    /* a task ran (comm and class in the key) */
	GN_CTX_SOFTIRQ = 1, /* a softirq ran (id: vector) */
	GN_CTX_HARDIRQ = 2, /* a hard irq ran (id: IRQ; only NMI-driven clocks see these) */
	GN_CTX_IDLE = 3,    /* the CPU was idle */
	GN_NR_SAMPLE_CONTEXTS = 4,
};

/* gn_samples: PERCPU_HASH of these keys -> __u64 sample count. */
struct gn_sample_key {
	__u16 context; /* enum gn_sample_context */
	__u16 task_class; /* enum gn_task_class of the task that was current */
	__s32 id;      /* softirq vector or IRQ number; -1 for tasks */
	char comm[GN_TASK_COMM_LEN]; /* GN_CTX_TASK only; zeroed otherwise */
};

#endif /* GPUNOISE_BPF_SAMPLER_H */
