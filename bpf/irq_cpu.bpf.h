/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The irqtime collector's per-CPU interrupt state (struct gn_irq_cpu,
 * bpf/irqtime.h), defined once for every object that holds it: irqtime
 * writes it; the sampler and runqlat objects read irqtime's through
 * bpf_map__reuse_fd, so the definitions must match (without irqtime each
 * keeps an all-zero copy of its own). */
#ifndef GPUNOISE_IRQ_CPU_BPF_H
#define GPUNOISE_IRQ_CPU_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "irqtime.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gn_irq_cpu);
} gn_irq_cpu SEC(".maps");

#endif /* GPUNOISE_IRQ_CPU_BPF_H */
