/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What per-CPU batching in the kernel would save per record (issue 18's
 * first lever), measured before building it into the collectors: the same
 * sched_switch-sized record written N times, either through the collectors'
 * path (gn_reserve: gate, ring lookup, bpf_ringbuf_query, reserve, submit)
 * or appended to a per-CPU batch that goes to the ring with one
 * bpf_ringbuf_output when it is full. Run with BPF_PROG_TEST_RUN on one CPU
 * (bench/batch_cost.cc); never attached.
 *
 * The batch follows the design in the note, so that its cost is the
 * cost of a nesting-safe batch, not of a plain buffer:
 *  - claim then commit: one 64-bit state word holds the bytes claimed (high
 *    half) and committed (low half). A writer claims with a compare-and-swap
 *    and commits with an atomic add, so a program that interrupts another on
 *    this CPU (an irq's inside a task's) appends behind the interrupted one's
 *    claim and never touches its half-written record;
 *  - only a writer that finds committed == claimed after its own commit
 *    flushes, i.e. no record on this CPU is half-written (an interrupted
 *    writer resumes only after its interrupter finished);
 *  - the flush marks the state (GN_BATCH_FLUSHING), writes the batch with
 *    bpf_ringbuf_output (variable size; bpf_ringbuf_reserve needs a
 *    constant), and clears it. A writer that finds the batch full or being
 *    flushed counts its record as lost; it never writes around the batch,
 *    which would put it ahead of older records.
 * Not measured here: the flush of a partial batch at the gate's close or on
 * the drain timer (once per CPU per drain period, not per record).
 * The collectors' batch (bpf/batch.bpf.h) has since replaced the claim's
 * compare-and-swap and the commit's add with a busy mark in plain stores;
 * this program keeps the design these figures were measured with. */
#include "../bpf/common.bpf.h"
#include "../bpf/sched.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define GN_BATCH_BYTES 4096
#define GN_BATCH_FLUSHING (1ull << 63)
#define GN_REC_BYTES sizeof(struct gn_sched_switch)

struct gn_batch {
	__u64 state; /* claimed << 32 | committed; GN_BATCH_FLUSHING while flushing */
	__u8 buf[GN_BATCH_BYTES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gn_batch);
} gn_batch SEC(".maps");

/* Set before load: flush once this many bytes are committed. */
const volatile __u32 gn_flush_bytes = GN_BATCH_BYTES - GN_REC_BYTES;

__u64 gn_batch_lost = 0;    /* records refused: batch full or flushing */
__u64 gn_batches = 0;       /* batches written to the ring */
__u64 gn_batch_failed = 0;  /* batches the ring had no room for */

static __always_inline void gn_fill_switch(struct gn_sched_switch *r, __u64 i)
{
	r->prev_tgid = 1000;
	r->prev_state = (i % 4) ? 1 : 0x100;
	r->next_tid = 1000 + (i & 7);
	r->next_tgid = 1000 + (i & 7);
	r->next_prio = 120;
	r->pad = 0;
	__builtin_memcpy(r->next_comm, "pt_main_thread\0", GN_TASK_COMM_LEN);
}

struct gn_cost_loop {
	__u32 ring;
	__u32 written;
};

static long gn_direct_one(__u64 i, void *ctx)
{
	struct gn_cost_loop *loop = ctx;
	__u64 wake;
	struct gn_sched_switch *r = (struct gn_sched_switch *)gn_reserve_on(
		loop->ring, sizeof(struct gn_sched_switch), GN_REC_SCHED_SWITCH, &wake);
	if (!r)
		return 1;
	gn_fill_switch(r, i);
	gn_submit(r, wake);
	loop->written++;
	return 0;
}

static __always_inline void gn_batch_flush(struct gn_batch *b, __u64 state, __u32 ring_index)
{
	if (__sync_val_compare_and_swap(&b->state, state, state | GN_BATCH_FLUSHING) != state)
		return; /* someone appended meanwhile; the last to commit flushes */
	__u64 len = state & 0xffffffff;
	void *ring = bpf_map_lookup_elem(&gn_rings, &ring_index);
	/* Keeps the bound check on the register the helper gets. */
	asm volatile("" : "+r"(len));
	if (!ring || len > GN_BATCH_BYTES || bpf_ringbuf_output(ring, b->buf, len, BPF_RB_NO_WAKEUP) != 0)
		__sync_fetch_and_add(&gn_batch_failed, 1);
	else
		__sync_fetch_and_add(&gn_batches, 1);
	/* Writers that saw GN_BATCH_FLUSHING gave up, so nobody holds a claim. */
	__sync_lock_test_and_set(&b->state, 0);
}

static long gn_batch_one(__u64 i, void *ctx)
{
	struct gn_cost_loop *loop = ctx;
	__u32 zero = 0;
	if (gn_gate_closed())
		return 1;
	struct gn_batch *b = bpf_map_lookup_elem(&gn_batch, &zero);
	if (!b)
		return 1;
	__u64 old = b->state;
	__u64 claimed = (old >> 32) & 0x7fffffff;
	if ((old & GN_BATCH_FLUSHING) || claimed > GN_BATCH_BYTES - GN_REC_BYTES ||
	    __sync_val_compare_and_swap(&b->state, old, old + ((__u64)GN_REC_BYTES << 32)) != old) {
		__sync_fetch_and_add(&gn_batch_lost, 1);
		return 0;
	}
	struct gn_sched_switch *r = (struct gn_sched_switch *)(b->buf + claimed);
	r->hdr.ts = bpf_ktime_get_boot_ns();
	r->hdr.kind = GN_REC_SCHED_SWITCH;
	r->hdr.flags = gn_context_flags();
	r->hdr.tid = (__u32)bpf_get_current_pid_tgid();
	gn_fill_switch(r, i);
	__u64 now = __sync_add_and_fetch(&b->state, GN_REC_BYTES);
	if ((now >> 32) == (now & 0xffffffff) && (__u32)now >= gn_flush_bytes)
		gn_batch_flush(b, now, loop->ring);
	loop->written++;
	return 0;
}

/* args[0]: ring, args[1]: records. Returns how many were written. */
SEC("raw_tp")
int gn_cost_direct(struct bpf_raw_tracepoint_args *ctx)
{
	struct gn_cost_loop loop = {.ring = (__u32)ctx->args[0]};
	bpf_loop((__u32)ctx->args[1], gn_direct_one, &loop, 0);
	return loop.written;
}

SEC("raw_tp")
int gn_cost_batched(struct bpf_raw_tracepoint_args *ctx)
{
	struct gn_cost_loop loop = {.ring = (__u32)ctx->args[0]};
	bpf_loop((__u32)ctx->args[1], gn_batch_one, &loop, 0);
	return loop.written;
}

/* The flush at the gate's close: writes what the batch holds, if no record
 * is half-written. Run on each CPU with BPF_F_TEST_RUN_ON_CPU. args[0]: ring. */
SEC("raw_tp")
int gn_cost_flush(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 zero = 0;
	struct gn_batch *b = bpf_map_lookup_elem(&gn_batch, &zero);
	if (!b)
		return 0;
	__u64 state = b->state;
	if ((state & GN_BATCH_FLUSHING) || (state >> 32) != (state & 0xffffffff) || !(__u32)state)
		return 0;
	gn_batch_flush(b, state, (__u32)ctx->args[0]);
	return 1;
}

/* The same two paths on a real tracepoint, for the kernel's own per-program
 * cost (bpf_stats): bench/batch_cost.cc --attach attaches one at a time.
 * sched_switch runs with interrupts off (the runqueue lock), so nothing nests
 * inside it; what the batch's atomics cost is still paid. */
SEC("tp_btf/sched_switch")
int BPF_PROG(gn_switch_direct, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct gn_cost_loop loop = {.ring = bpf_get_smp_processor_id()};
	gn_direct_one(0, &loop);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(gn_switch_batched, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct gn_cost_loop loop = {.ring = bpf_get_smp_processor_id()};
	gn_batch_one(0, &loop);
	return 0;
}

/* The collectors' path without its bpf_ringbuf_query: every record submitted
 * with BPF_RB_NO_WAKEUP, the consumer's drain timer then being its only
 * wakeup (the second lever, measured beside the batch). */
static __always_inline void *gn_reserve_no_query(__u32 ring_index, __u32 size, __u16 kind)
{
	if (gn_gate_closed())
		return NULL;
	void *ring = bpf_map_lookup_elem(&gn_rings, &ring_index);
	if (!ring) {
		gn_count_lost(kind);
		return NULL;
	}
	struct gn_header *hdr = bpf_ringbuf_reserve(ring, size, 0);
	if (!hdr) {
		gn_count_lost(kind);
		return NULL;
	}
	hdr->ts = bpf_ktime_get_boot_ns();
	hdr->kind = kind;
	hdr->flags = gn_context_flags();
	hdr->tid = (__u32)bpf_get_current_pid_tgid();
	return hdr;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(gn_switch_no_query, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct gn_sched_switch *r = (struct gn_sched_switch *)gn_reserve_no_query(
		bpf_get_smp_processor_id(), sizeof(struct gn_sched_switch), GN_REC_SCHED_SWITCH);
	if (!r)
		return 0;
	gn_fill_switch(r, 0);
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}
