// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sampler collector: "who runs on my training cores". User space opens a
 * cpu-clock perf event on each focus CPU at a low frequency (49 Hz by
 * default, off the beat of the 100/250/1000 Hz ticks) and attaches this
 * program to it. Each sample counts what the CPU was doing, in a per-CPU
 * hash: a task (by comm and class: focus, kernel thread, other), a softirq
 * (by vector), a hard irq (by number) or idle. The cost is bounded by the
 * rate, whatever the workload does.
 *
 * Which interrupt context a sample landed in comes from the irqtime
 * collector's per-CPU state (gn_irq_cpu, shared with bpf_map__reuse_fd).
 * A cpu-clock sample is itself taken in the local-timer interrupt, so that
 * vector never counts as the interrupted context. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "focus.bpf.h"
#include "irq_cpu.bpf.h"
#include "irqtime.h"
#include "sampler.h"
#include "sample_count.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Samples whose key found the hash full, per CPU (counted, never silent). */
__u64 gn_sample_full[GN_MAX_CPUS] = {};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct gn_sample_key);
	__type(value, __u64);
} gn_samples SEC(".maps");

SEC("perf_event")
int gn_sample(struct bpf_perf_event_data *ctx)
{
	struct gn_sample_key key = {};
	key.id = -1;
	key.task_class = gn_current_class();

	__u32 zero = 0;
	struct gn_irq_cpu *st = bpf_map_lookup_elem(&gn_irq_cpu, &zero);
	if (st && st->hardirq_ts &&
	    st->hardirq_irq != GN_VECTOR_IRQ_BASE - GN_VEC_LOCAL_TIMER) {
		key.context = GN_CTX_HARDIRQ;
		key.id = st->hardirq_irq;
	} else if (st && st->softirq_ts) {
		key.context = GN_CTX_SOFTIRQ;
		key.id = st->softirq_vec;
	} else if (key.task_class == GN_CLASS_IDLE) {
		key.context = GN_CTX_IDLE;
	} else {
		key.context = GN_CTX_TASK;
		bpf_get_current_comm(key.comm, sizeof(key.comm));
	}

	if (!gn_count_sample(&gn_samples, &key)) {
		__u32 cpu = bpf_get_smp_processor_id();
		__sync_fetch_and_add(&gn_sample_full[cpu & (GN_MAX_CPUS - 1)], 1);
	}
	return 0;
}
