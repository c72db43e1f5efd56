/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Kernel-side helpers shared by every collector: the per-CPU ring transport,
 * loss accounting and the CPU filter. */
#ifndef GPUNOISE_COMMON_BPF_H
#define GPUNOISE_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "record.h"
#include "irq.h"
#include "cpu_filter.bpf.h"
#include "gate.bpf.h"
#include "doorbell.bpf.h"

/* Template for the inner maps only. User space creates one ring per CPU with
 * the size chosen on the command line, builds the outer map itself and hands
 * the same outer map to every collector object (bpf_map__reuse_fd). */
struct gn_ring_template {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, GN_MAX_CPUS);
	__type(key, __u32);
	__array(values, struct gn_ring_template);
} gn_rings SEC(".maps");

/* Records lost because their CPU's ring was full (or the CPU had no ring),
 * by record kind, per CPU. Cumulative: user space computes deltas, so nothing
 * is lost between a read and a reset. Shared like gn_rings, so one read
 * gives every collector's loss. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, GN_REC_KIND_MAX);
	__type(key, __u32);
	__type(value, __u64);
} gn_lost_kinds SEC(".maps");

/* Set before load (rodata): the verifier sees constants, so disabled filters
 * cost nothing. */
const volatile __u64 gn_wakeup_bytes = 64 * 1024;
GN_CPU_FILTER(gn_filter_cpus, gn_cpu_mask, GN_MAX_CPUS / 64, gn_cpu_allowed)

static __always_inline void gn_count_lost(__u16 kind)
{
	__u32 key = kind;
	__u64 *n = bpf_map_lookup_elem(&gn_lost_kinds, &key);
	/* Programs nest on a CPU (an irq's program interrupts a task's). */
	if (n)
		__sync_fetch_and_add(n, 1);
	/* The total too, in the slot no kind uses: every drain reads it, and
	 * one key costs a fraction of the 256 a read by kind copies. */
	key = GN_LOST_TOTAL_KEY;
	n = bpf_map_lookup_elem(&gn_lost_kinds, &key);
	if (n)
		__sync_fetch_and_add(n, 1);
}

/* The context the event fired in, as ftrace's common_flags encode it
 * (TRACE_FLAG_HARDIRQ/SOFTIRQ, include/linux/trace_events.h). Neither attach
 * path gets it from the kernel: tp_btf programs receive no common fields,
 * and a classic tracepoint's BPF program runs before perf fills them (the
 * first 8 bytes of its context hold a pt_regs pointer, perf_trace_run_bpf_submit).
 * The per-CPU preempt count is no help either without CONFIG_KALLSYMS_ALL
 * (the verifier finds no address for __preempt_count). So the irq collector
 * keeps each CPU's interrupt state in struct gn_cpu_context (bpf/record.h)
 * from its own entry and exit programs (irq handlers, x86 system vectors,
 * softirqs). Each is a flag, set on entry and cleared on exit, not a depth:
 * hard irqs do not nest on a CPU, and a flag set by an entry whose exit
 * program was not attached yet is cleared by the next exit. Shared like
 * gn_rings; all zero when no irq collector runs, and then every record
 * reads as task context. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gn_cpu_context);
} gn_cpu_ctx SEC(".maps");

static __always_inline struct gn_cpu_context *gn_this_cpu_context(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&gn_cpu_ctx, &zero);
}

static __always_inline __u16 gn_flags_of(const struct gn_cpu_context *c)
{
	if (!c)
		return 0;
	return (c->hardirq ? GN_FLAG_HARDIRQ : 0) | (c->softirq ? GN_FLAG_SOFTIRQ : 0);
}

static __always_inline __u16 gn_context_flags(void)
{
	return gn_flags_of(gn_this_cpu_context());
}

/* ns from a softirq's earliest unanswered raise to its entry at `at`,
 * saturated (struct gn_softirq.raise_wait_ns); 0 when none was seen. */
static __always_inline __u32 gn_raise_wait(__u64 at, __u64 raised)
{
	__u64 wait = raised && at > raised ? at - raised : 0;
	return wait > 0xffffffffull ? 0xffffffffu : (__u32)wait;
}

/* A write of `adding` bytes to a ring that holds `avail` unread ones makes
 * it cross its half mark: the drain's doorbell (bpf/doorbell.bpf.h). Once
 * a crossing, so a ring the drain keeps below half never rings. */
static __always_inline void gn_doorbell_on_half(__u64 avail, __u64 adding)
{
	__u64 half = gn_wakeup_bytes * (GN_WAKEUP_FRACTION / 2);
	if (avail < half && avail + adding >= half)
		gn_doorbell_ring(bpf_get_smp_processor_id());
}

/* The consumer is woken when a record makes the ring cross the wakeup mark. */
static __always_inline __u64 gn_wake_flags(void *ring, __u32 size)
{
	__u64 avail = bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA);
	gn_doorbell_on_half(avail, size + 8);
	return (avail < gn_wakeup_bytes && avail + size + 8 >= gn_wakeup_bytes) ? BPF_RB_FORCE_WAKEUP
										 : BPF_RB_NO_WAKEUP;
}

/* Reserves `size` bytes on `ring`, then takes this CPU's softirq entry that
 * waits for its exit (bpf/irq.bpf.c, "Softirq entries wait for their exit"):
 * *opened is its time, GN_SOFTIRQ_OPENING, or 0 when none was open. In that
 * order: a program that interrupts this one in between finds the entry gone
 * and writes its own records behind an uncommitted one, which the consumer
 * does not read past, so one drain gets them all and sorts them; one that
 * came before the reservation took the entry itself. An entry taken without
 * room for it is counted lost. */
static __always_inline void *gn_reserve_taking_open_softirq(void *ring, __u32 size, struct gn_cpu_context *c,
							    __u64 *opened)
{
	void *rec = bpf_ringbuf_reserve(ring, size, 0);
	*opened = __sync_lock_test_and_set(&c->softirq_open_ts, 0);
	if (!rec && *opened)
		gn_count_lost(GN_REC_SOFTIRQ_ENTRY);
	return rec;
}

/* Writes this CPU's open softirq entry ahead of another record made inside
 * that softirq, so the ring keeps the entry before what is nested in it. */
static __always_inline void gn_write_open_softirq(void *ring, struct gn_cpu_context *c)
{
	__u64 wake = gn_wake_flags(ring, sizeof(struct gn_softirq));
	__u64 opened;
	struct gn_softirq *rec = gn_reserve_taking_open_softirq(ring, sizeof(*rec), c, &opened);
	if (!rec)
		return;
	if (!opened) {
		bpf_ringbuf_discard(rec, BPF_RB_NO_WAKEUP);
		return;
	}
	/* Still opening: its program was interrupted before it read the
	 * clock, so the softirq began before now. */
	__u64 ts = opened == GN_SOFTIRQ_OPENING ? bpf_ktime_get_boot_ns() : opened;
	rec->hdr.ts = ts;
	rec->hdr.kind = GN_REC_SOFTIRQ_ENTRY;
	rec->hdr.flags = GN_FLAG_SOFTIRQ;
	rec->hdr.tid = (__u32)bpf_get_current_pid_tgid();
	rec->vec = c->softirq_open_vec;
	rec->untimed_before = c->softirq_open_untimed;
	rec->raise_wait_ns = gn_raise_wait(ts, c->softirq_open_raised);
	bpf_ringbuf_submit(rec, wake);
}

/* Run before every record of this CPU, direct or batched: an open softirq
 * entry goes to the ring first, so that nothing nested in the softirq
 * reaches user space ahead of it (a batch may be flushed before the softirq
 * ends). Only the irq collector opens entries, on this CPU's ring. `ring`:
 * this CPU's ring, or NULL to look it up only when an entry is open. */
static __always_inline void gn_open_softirq_first(struct gn_cpu_context *c, void *ring)
{
	if (!c || !*(volatile __u64 *)&c->softirq_open_ts)
		return;
	if (!ring) {
		__u32 cpu = bpf_get_smp_processor_id();
		ring = bpf_map_lookup_elem(&gn_rings, &cpu);
		if (!ring)
			return;
	}
	gn_write_open_softirq(ring, c);
}

/* Reserves `size` bytes on this CPU's ring and fills the header.
 *
 * The timestamp is taken *after* the reservation: a program interrupted
 * between the two (by a hard irq whose own program records) then holds the
 * earlier ring position with the later timestamp, and both records are
 * committed before the consumer can read past them, so one drain always sees
 * both and can restore order. Taking it before would let the out-of-order
 * pair straddle two drains.
 *
 * The consumer is woken only when this record makes the ring cross the
 * wakeup mark (BPF_RB_NO_WAKEUP otherwise): a wakeup per event is itself a
 * context switch, and MEASURED.md shows it halves a switch-heavy workload.
 *
 * NULL when the gate is closed or the ring is full (then counted in
 * gn_lost_kinds).
 *
 * hdr->flags carries the context (gn_context_flags): the consumer restores
 * order across drains with it (a record made in task context was never
 * reserved inside another program's window), and Perfetto marks wakeups from
 * interrupts with it. */
/* gn_reserve on ring `ring_index` rather than this CPU's: only the scale
 * model (bench/scale_model.cc) writes into rings of CPUs it does not run on. */
static __always_inline void *gn_reserve_on(__u32 ring_index, __u32 size, __u16 kind, __u64 *wake_flags)
{
	if (gn_gate_closed())
		return NULL;
	void *ring = bpf_map_lookup_elem(&gn_rings, &ring_index);
	if (!ring) {
		gn_count_lost(kind);
		return NULL;
	}
	/* The scale model, which writes into other CPUs' rings, loads no irq
	 * collector, so no entry is open there. */
	struct gn_cpu_context *c = gn_this_cpu_context();
	gn_open_softirq_first(c, ring);
	*wake_flags = gn_wake_flags(ring, size);
	struct gn_header *hdr = bpf_ringbuf_reserve(ring, size, 0);
	if (!hdr) {
		gn_count_lost(kind);
		return NULL;
	}
	hdr->ts = bpf_ktime_get_boot_ns();
	hdr->kind = kind;
	hdr->flags = gn_flags_of(c);
	hdr->tid = (__u32)bpf_get_current_pid_tgid();
	return hdr;
}

static __always_inline void *gn_reserve(__u32 size, __u16 kind, __u64 *wake_flags)
{
	return gn_reserve_on(bpf_get_smp_processor_id(), size, kind, wake_flags);
}

#define GN_RESERVE(type, kind, flagsp) ((type *)gn_reserve(sizeof(type), (kind), (flagsp)))

static __always_inline void gn_submit(void *rec, __u64 wake_flags)
{
	bpf_ringbuf_submit(rec, wake_flags);
}

#endif /* GPUNOISE_COMMON_BPF_H */
