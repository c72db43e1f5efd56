/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Per-CPU batching of storm-heavy records (issue 18): records are appended
 * to this CPU's batch, and the batch goes to the CPU's ring with one
 * bpf_ringbuf_output when it is nearly full, or when user space flushes it
 * (before each drain if it holds records, and at the end;
 * GN_BATCH_FLUSH_PROGRAM). One reservation
 * per batch instead of one per record: bench/batch_cost.cc measured 0.81-0.85
 * of the direct path's cost per sched_switch.
 *
 * Nesting-safe per context: programs nest on a CPU (a hard irq's inside a
 * softirq's, inside a task's), so the batch is claimed then committed. One
 * 64-bit state word (struct gn_batch_word, in .bss so that user space reads
 * it without a syscall) holds
 *   bits  0-15 bytes committed, bits 16-31 records committed,
 *   bits 32-47 bytes claimed,   bit 63 a flush is under way.
 * A writer claims its bytes with a compare-and-swap (retried once: the only
 * way it fails is a program that interrupted this one and finished), fills
 * them and commits with an atomic add; an interrupting program appends behind
 * the interrupted one's claim and never touches its half-written record.
 * Only a commit that leaves committed == claimed flushes (no record of this
 * CPU is half-written then). A record that finds the batch full (nested
 * programs claimed every slot) or being flushed goes to the ring directly,
 * like an unbatched record: it lands ahead of older batched records, but it
 * was stamped after the flush (or after the full batch's claims), so user
 * space holds it back until that batch's flush has been read
 * (record/cpu_staging.h), and nothing is lost to the batch.
 *
 * Records sit in fixed slots (GN_BATCH_SLOT bytes, the largest record the
 * object batches): a lost batch is then counted by kind with a walk at a
 * constant stride, which the verifier checks in one pass per slot (a walk
 * whose stride depends on each record's kind branches at every record).
 * The including object defines GN_BATCH_SLOT and GN_BATCH_STREAM (its enum
 * gn_batch_stream). */
#ifndef GPUNOISE_BATCH_BPF_H
#define GPUNOISE_BATCH_BPF_H

#include "common.bpf.h"

#if !defined(GN_BATCH_SLOT) || !defined(GN_BATCH_STREAM)
#error "define GN_BATCH_SLOT and GN_BATCH_STREAM before including batch.bpf.h"
#endif

/* Records per batch: 64 sched switches are 3.5 KiB. Bigger batches cost the
 * same per record (one output each) but hold records back longer. */
#define GN_BATCH_RECORDS 64
#define GN_BATCH_BYTES (GN_BATCH_RECORDS * GN_BATCH_SLOT)
#define GN_BATCH_FLUSHING (1ull << 63)
#define GN_BATCH_FIELD 0xffffull

/* The records, per CPU; their state is the CPU's gn_batch_words entry. */
struct gn_batch {
	struct gn_batch_hdr hdr; /* filled by the flush, written just before buf */
	__u8 buf[GN_BATCH_BYTES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gn_batch);
} gn_batch SEC(".maps");

/* Set before load: false keeps the direct reserve/submit path
 * (record --no-batching), and the verifier drops the batch code. */
const volatile bool gn_batching = false;

/* Each CPU's batch state and sequence (struct gn_batch_word), indexed by
 * CPU. In .bss, which libbpf maps into user space: before each drain the
 * recorder reads them and flushes only the CPUs whose batch holds records
 * (collect/batch_flush.h); an IPI per idle CPU and drain saved. One cache
 * line per CPU, so that CPUs do not write each other's lines. */
struct gn_batch_word gn_batch_words[GN_MAX_CPUS] __attribute__((aligned(64))) = {};

/* Flushes the user-space flush program found impossible because a record was
 * half-written or another flush was under way, per CPU (it retries at the
 * next drain). */
__u64 gn_batch_flush_busy[GN_MAX_CPUS] = {};

static __always_inline struct gn_batch *gn_this_batch(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&gn_batch, &zero);
}

static __always_inline struct gn_batch_word *gn_this_batch_word(void)
{
	return &gn_batch_words[bpf_get_smp_processor_id() & (GN_MAX_CPUS - 1)];
}

/* A batch the ring had no room for: its records counted lost by kind. */
static __always_inline void gn_batch_count_lost(struct gn_batch *b, __u32 count)
{
	for (__u32 i = 0; i < GN_BATCH_RECORDS; i++) {
		if (i >= count)
			break;
		struct gn_header *h = (struct gn_header *)(b->buf + i * GN_BATCH_SLOT);
		gn_count_lost(h->kind);
	}
}

/* Writes this CPU's batch if `state` is still its state (then nobody else
 * can touch it until it is cleared). Returns false when the state had moved
 * on. */
static __always_inline bool gn_batch_flush(struct gn_batch_word *w, __u64 state, __u32 ring_index)
{
	if (__sync_val_compare_and_swap(&w->state, state, state | GN_BATCH_FLUSHING) != state)
		return false;
	struct gn_batch *b = gn_this_batch();
	if (!b) {
		__sync_lock_test_and_set(&w->state, 0);
		return true;
	}
	__u64 seq = w->seq;
	__u32 len = state & GN_BATCH_FIELD;
	__u32 count = (state >> 16) & GN_BATCH_FIELD;
	b->hdr.hdr.ts = bpf_ktime_get_boot_ns();
	b->hdr.hdr.kind = GN_REC_BATCH;
	b->hdr.hdr.flags = gn_context_flags();
	b->hdr.hdr.tid = 0;
	b->hdr.count = count;
	b->hdr.slot = GN_BATCH_SLOT;
	b->hdr.cpu = bpf_get_smp_processor_id();
	b->hdr.stream = GN_BATCH_STREAM;
	b->hdr.first_seq = seq;
	b->hdr.end_seq = seq + count;
	void *ring = bpf_map_lookup_elem(&gn_rings, &ring_index);
	__u64 total = sizeof(struct gn_batch_hdr) + len;
	/* Keeps the bound check on the register the helper gets. */
	asm volatile("" : "+r"(total));
	bool written = false;
	if (ring && total <= sizeof(struct gn_batch_hdr) + GN_BATCH_BYTES) {
		/* Woken like a direct record: only when this batch makes the
		 * ring cross its wakeup mark. */
		__u64 avail = bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA);
		gn_doorbell_on_half(avail, total + 8);
		__u64 wake = (avail < gn_wakeup_bytes && avail + total + 8 >= gn_wakeup_bytes)
				     ? BPF_RB_FORCE_WAKEUP
				     : BPF_RB_NO_WAKEUP;
		written = bpf_ringbuf_output(ring, &b->hdr, total, wake) == 0;
	}
	if (!written)
		gn_batch_count_lost(b, count);
	/* Only the flush writes seq, and before it clears the state (an atomic
	 * exchange, a full barrier): a reader that sees the state clear then
	 * reads this seq or a later one. */
	*(volatile __u64 *)&w->seq = seq + count;
	/* Writers that saw GN_BATCH_FLUSHING gave up, so nobody holds a claim. */
	__sync_lock_test_and_set(&w->state, 0);
	return true;
}

/* One claim attempt. *claimed is where the record goes, or GN_BATCH_FIELD
 * when the batch is full or being flushed (no point trying again). */
static __always_inline bool gn_batch_try_claim(struct gn_batch_word *w, __u64 *claimed)
{
	__u64 old = *(volatile __u64 *)&w->state;
	__u64 at = (old >> 32) & GN_BATCH_FIELD;
	if ((old & GN_BATCH_FLUSHING) || at > GN_BATCH_BYTES - GN_BATCH_SLOT) {
		*claimed = GN_BATCH_FIELD;
		return false;
	}
	*claimed = at;
	return __sync_val_compare_and_swap(&w->state, old, old + ((__u64)GN_BATCH_SLOT << 32)) == old;
}

/* Claims a slot of this CPU's batch for a record of `size` bytes (a
 * constant, at most GN_BATCH_SLOT) and fills the record header; NULL when
 * the gate is closed or the batch is full or being flushed (the caller then
 * reserves the record on the ring, GN_CLAIM). The timestamp is taken after the claim, as gn_reserve does,
 * so that records stamped after a flush are in a later batch. */
static __always_inline void *gn_batch_claim(struct gn_batch_word **wp, __u32 size, __u16 kind)
{
	if (gn_gate_closed())
		return NULL;
	struct gn_batch *b = gn_this_batch();
	if (!b)
		return NULL;
	struct gn_batch_word *w = gn_this_batch_word();
	__u64 claimed = 0;
	bool ok = gn_batch_try_claim(w, &claimed);
	if (!ok && claimed != GN_BATCH_FIELD)
		ok = gn_batch_try_claim(w, &claimed);
	/* Keeps the bound check on the register used for the address. */
	asm volatile("" : "+r"(claimed));
	if (!ok || size > GN_BATCH_SLOT || claimed > GN_BATCH_BYTES - GN_BATCH_SLOT)
		return NULL; /* the caller writes it to the ring directly */
	struct gn_header *hdr = (struct gn_header *)(b->buf + claimed);
	hdr->ts = bpf_ktime_get_boot_ns();
	hdr->kind = kind;
	hdr->flags = gn_context_flags();
	hdr->tid = (__u32)bpf_get_current_pid_tgid();
	*wp = w;
	return hdr;
}

/* Commits a claimed record; the commit that completes a full batch writes
 * it. */
static __always_inline void gn_batch_commit(struct gn_batch_word *w)
{
	__u64 now = __sync_add_and_fetch(&w->state, (__u64)GN_BATCH_SLOT | (1ull << 16));
	if (((now >> 32) & GN_BATCH_FIELD) == (now & GN_BATCH_FIELD) && (now & GN_BATCH_FIELD) >= GN_BATCH_BYTES)
		gn_batch_flush(w, now, bpf_get_smp_processor_id());
}

/* The record either way: batched when gn_batching, else, or when the batch
 * is full or being flushed, reserved on the ring (gn_reserve); GN_COMMIT
 * then commits or submits it (`batch` is NULL for a ring record).
 * gn_batching is a load-time constant: without it the verifier walks only
 * the ring path. */
#define GN_CLAIM(type, kind, batchp, wakep)                                          \
	({                                                                           \
		type *gn_rec_ = NULL;                                                \
		if (gn_batching)                                                     \
			gn_rec_ = (type *)gn_batch_claim((batchp), sizeof(type), (kind)); \
		if (!gn_rec_) {                                                      \
			*(batchp) = NULL;                                            \
			gn_rec_ = GN_RESERVE(type, (kind), (wakep));                 \
		}                                                                    \
		gn_rec_;                                                             \
	})
#define GN_COMMIT(rec, batch, wake)                                                  \
	do {                                                                         \
		if (gn_batching && (batch))                                          \
			gn_batch_commit(batch);                                      \
		else                                                                 \
			gn_submit((rec), (wake));                                    \
	} while (0)

/* Run by user space (BPF_PROG_TEST_RUN with BPF_F_TEST_RUN_ON_CPU) before
 * each drain on each CPU whose gn_batch_words state is not 0, and at the end
 * on every CPU: writes what this CPU's batch holds, or an empty batch, whose
 * timestamp tells user space that nothing stamped before it is still in the
 * batch. Not behind the gate: the
 * last flush comes after it closed. Returns 1 when it flushed, 0 when a
 * record was half-written or a flush under way (try again later). */
#define GN_BATCH_FLUSH_PROGRAM(name)                                                    \
	SEC("raw_tp")                                                                   \
	int name(void *ctx)                                                             \
	{                                                                               \
		struct gn_batch_word *w = gn_this_batch_word();                         \
		__u64 state = *(volatile __u64 *)&w->state;                             \
		__u32 cpu = bpf_get_smp_processor_id();                                 \
		if ((state & GN_BATCH_FLUSHING) ||                                      \
		    ((state >> 32) & GN_BATCH_FIELD) != (state & GN_BATCH_FIELD) ||     \
		    !gn_batch_flush(w, state, cpu)) {                                   \
			__sync_fetch_and_add(&gn_batch_flush_busy[cpu & (GN_MAX_CPUS - 1)], 1); \
			return 0;                                                       \
		}                                                                       \
		return 1;                                                               \
	}

#endif /* GPUNOISE_BATCH_BPF_H */
