// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* irqtime collector (the monitor's always-on interrupt aggregates): time
 * and count of every softirq vector per CPU, of every hard IRQ per CPU and
 * of the x86 system vectors (local timer, IPIs, ...) per CPU, and the part
 * of it that ran while a focus thread was current. bcc's softirqs and
 * hardirqs tools measure the same way: the entry timestamp sits in per-CPU
 * scratch (neither hard irqs nor softirqs nest on one CPU), exit adds the
 * difference. No ring records.
 *
 * Each event has a tp_btf program and a classic tracepoint twin; user space
 * autoloads one of the two. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "focus.bpf.h"
#include "irqtime.h"
#include "irq_cpu.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Aggregate updates that found the IRQ hash full (4096 IRQs with traffic
 * on one node is far beyond any real machine), per CPU. */
__u64 gn_irq_full[GN_MAX_CPUS] = {};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gn_softirq_time);
} gn_softirq_time SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	/* Allocated as keys appear: preallocated, every key's value for
	 * every possible CPU is over 100 MiB a map on a 256-CPU node. */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, __s32);
	__type(value, struct gn_hardirq_time);
} gn_hardirq_time SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gn_vector_time);
} gn_vector_time SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gn_focus_irq);
} gn_focus_irq SEC(".maps");

static __always_inline struct gn_irq_cpu *gn_state(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&gn_irq_cpu, &zero);
}

static __always_inline struct gn_focus_irq *gn_focus_stats(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&gn_focus_irq, &zero);
}

/* ---- softirqs ------------------------------------------------------------ */

static __always_inline void gn_softirq_in(__u32 vec)
{
	/* Counted at entry, as the kernel's /proc/softirqs counts them (on
	 * the line before this tracepoint): the monitor compares the two to
	 * count the softirqs the kernel never reported to a tracepoint
	 * (monitor/continuous_softirq_audit.h). */
	__u32 zero = 0;
	struct gn_softirq_time *t = bpf_map_lookup_elem(&gn_softirq_time, &zero);
	if (t && vec < GN_NR_SOFTIRQS)
		t->count[vec] += 1; /* per-CPU copy; no hard irq touches it */
	struct gn_irq_cpu *st = gn_state();
	if (!st)
		return;
	st->softirq_vec = vec;
	st->softirq_focus = gn_current_focus();
	st->softirq_hard0 = st->hard_total_ns;
	st->softirq_ts = bpf_ktime_get_boot_ns();
}

static __always_inline void gn_softirq_out(__u32 vec)
{
	struct gn_irq_cpu *st = gn_state();
	if (!st || !st->softirq_ts)
		return; /* attached mid-softirq: no entry seen */
	__u64 now = bpf_ktime_get_boot_ns();
	__u64 delta = now > st->softirq_ts ? now - st->softirq_ts : 0;
	bool focus = st->softirq_focus;
	st->softirq_ts = 0;
	__u64 nested = st->hard_total_ns - st->softirq_hard0;
	st->soft_total_ns += delta > nested ? delta - nested : 0;
	if (vec >= GN_NR_SOFTIRQS)
		return;
	__u32 zero = 0;
	struct gn_softirq_time *t = bpf_map_lookup_elem(&gn_softirq_time, &zero);
	if (t)
		t->ns[vec] += delta;
	if (focus) {
		struct gn_focus_irq *f = gn_focus_stats();
		if (f) {
			f->softirq_count += 1;
			f->softirq_ns += delta;
		}
	}
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(gn_it_si_in, unsigned int vec)
{
	gn_softirq_in(vec);
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(gn_it_si_out, unsigned int vec)
{
	gn_softirq_out(vec);
	return 0;
}

SEC("tracepoint/irq/softirq_entry")
int gn_tit_si_in(struct trace_event_raw_softirq *ctx)
{
	gn_softirq_in(ctx->vec);
	return 0;
}

SEC("tracepoint/irq/softirq_exit")
int gn_tit_si_out(struct trace_event_raw_softirq *ctx)
{
	gn_softirq_out(ctx->vec);
	return 0;
}

/* ---- hard irqs and system vectors ------------------------------------------- */

static __always_inline void gn_hardirq_in(__s32 irq)
{
	struct gn_irq_cpu *st = gn_state();
	if (!st)
		return;
	st->hardirq_irq = irq;
	st->hardirq_focus = gn_current_focus();
	st->hardirq_ts = bpf_ktime_get_boot_ns();
}

/* Returns the time spent since entry, or 0 when no entry was seen. */
static __always_inline __u64 gn_hardirq_out(void)
{
	struct gn_irq_cpu *st = gn_state();
	if (!st || !st->hardirq_ts)
		return 0;
	__u64 now = bpf_ktime_get_boot_ns();
	__u64 delta = now > st->hardirq_ts ? now - st->hardirq_ts : 1;
	st->hardirq_ts = 0;
	st->hard_total_ns += delta;
	if (st->hardirq_focus) {
		struct gn_focus_irq *f = gn_focus_stats();
		if (f) {
			f->hardirq_count += 1;
			f->hardirq_ns += delta;
		}
	}
	return delta;
}

static __always_inline void gn_irq_out(__s32 irq)
{
	__u64 delta = gn_hardirq_out();
	if (!delta)
		return;
	struct gn_hardirq_time *t = bpf_map_lookup_elem(&gn_hardirq_time, &irq);
	if (!t) {
		static const struct gn_hardirq_time zero = {};
		bpf_map_update_elem(&gn_hardirq_time, &irq, &zero, BPF_NOEXIST);
		t = bpf_map_lookup_elem(&gn_hardirq_time, &irq);
		if (!t) {
			__u32 cpu = bpf_get_smp_processor_id();
			__sync_fetch_and_add(&gn_irq_full[cpu & (GN_MAX_CPUS - 1)], 1);
			return;
		}
	}
	t->count += 1;
	t->ns += delta;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(gn_it_irq_in, int irq, struct irqaction *action)
{
	gn_hardirq_in(irq);
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(gn_it_irq_out, int irq, struct irqaction *action, int ret)
{
	gn_irq_out(irq);
	return 0;
}

SEC("tracepoint/irq/irq_handler_entry")
int gn_tit_irq_in(struct trace_event_raw_irq_handler_entry *ctx)
{
	gn_hardirq_in(ctx->irq);
	return 0;
}

SEC("tracepoint/irq/irq_handler_exit")
int gn_tit_irq_out(struct trace_event_raw_irq_handler_exit *ctx)
{
	gn_irq_out(ctx->irq);
	return 0;
}

static __always_inline void gn_vector_in(__u32 kind)
{
	gn_hardirq_in(GN_VECTOR_IRQ_BASE - (__s32)kind);
}

static __always_inline void gn_vector_out(__u32 kind)
{
	__u64 delta = gn_hardirq_out();
	if (!delta || kind >= GN_NR_VECTOR_KINDS)
		return;
	__u32 zero = 0;
	struct gn_vector_time *t = bpf_map_lookup_elem(&gn_vector_time, &zero);
	if (!t)
		return;
	t->count[kind] += 1;
	t->ns[kind] += delta;
}

/* Program names stay under the kernel's 15 characters. */
#define GN_IT_VECTOR_PROGS(event, short_name, vkind)                             \
	SEC("tp_btf/" #event "_entry")                                           \
	int BPF_PROG(gn_iv_##short_name##_i, int vector)                         \
	{                                                                        \
		gn_vector_in(vkind);                                             \
		return 0;                                                        \
	}                                                                        \
	SEC("tp_btf/" #event "_exit")                                            \
	int BPF_PROG(gn_iv_##short_name##_o, int vector)                         \
	{                                                                        \
		gn_vector_out(vkind);                                            \
		return 0;                                                        \
	}                                                                        \
	SEC("tracepoint/irq_vectors/" #event "_entry")                           \
	int gn_tiv_##short_name##_i(struct trace_event_raw_x86_irq_vector *ctx)  \
	{                                                                        \
		gn_vector_in(vkind);                                             \
		return 0;                                                        \
	}                                                                        \
	SEC("tracepoint/irq_vectors/" #event "_exit")                            \
	int gn_tiv_##short_name##_o(struct trace_event_raw_x86_irq_vector *ctx)  \
	{                                                                        \
		gn_vector_out(vkind);                                            \
		return 0;                                                        \
	}

#if defined(__TARGET_ARCH_x86)
GN_X86_VECTORS(GN_IT_VECTOR_PROGS)
#endif
