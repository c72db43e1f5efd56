/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Per-CPU batching of storm-heavy records (issue 18): records are appended
 * to this CPU's batch, and the batch goes to the CPU's ring with one
 * bpf_ringbuf_output when it is full, or when user space flushes it (before
 * each drain if it holds records, and at the end; GN_BATCH_FLUSH_PROGRAM).
 * One reservation per batch instead of one per record.
 *
 * Nesting-safe without atomics. Only programs on its own CPU touch a CPU's
 * batch (programs run with migration off, and the flush program runs on the
 * CPU it flushes), and they do not run side by side there: they nest (a hard
 * irq's inside a softirq's, inside a task's). A CPU sees its own stores in
 * program order, also from an interrupt. So a writer marks the batch busy
 * with a plain store before it reads where its record goes, and clears the
 * mark after its commit: a program that interrupts it finds the mark and
 * writes to the ring directly; one that came before the mark was set ran to
 * its end before the writer read the batch state. A locked compare-and-swap
 * and a locked add per record, what the claim/commit protocol before this
 * one cost, are gone.
 *
 * A record that finds the batch busy (interrupted writer or flush) goes to
 * the ring directly, like an unbatched record: it lands ahead of older
 * batched records, but the batch's last flush is older than it, so user
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
#define GN_BATCH_FIELD 0xffffull

/* Orders the plain accesses around the busy mark for the compiler; the
 * CPU keeps its own program order towards its interrupts. */
#define gn_batch_barrier() asm volatile("" ::: "memory")

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

/* Each CPU's batch state, busy mark and sequence (struct gn_batch_word),
 * indexed by CPU. In .bss, which libbpf maps into user space: before each
 * drain the recorder reads them and flushes only the CPUs whose batch holds
 * records or is busy (collect/batch_flush.h); an IPI per idle CPU and drain
 * saved. One cache line per CPU, so that CPUs do not write each other's
 * lines. */
struct gn_batch_word gn_batch_words[GN_MAX_CPUS] __attribute__((aligned(64))) = {};

/* Flushes the user-space flush program found impossible because the batch
 * was busy (a record half-written, or a flush under way), per CPU (it
 * retries at the next drain). */
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

/* Takes the batch for this program, or returns false when a program this
 * one interrupted holds it. The mark is stored before anything of the batch
 * is read: a program that interrupts after the store backs off, and one
 * that interrupted before it has finished, its commit in the state. */
static __always_inline bool gn_batch_take(struct gn_batch_word *w)
{
	if (*(volatile __u32 *)&w->busy)
		return false;
	*(volatile __u32 *)&w->busy = 1;
	gn_batch_barrier();
	return true;
}

static __always_inline void gn_batch_release(struct gn_batch_word *w)
{
	gn_batch_barrier();
	*(volatile __u32 *)&w->busy = 0;
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

/* Writes this CPU's batch, whose state is `state`, and empties it. The
 * caller holds the batch (gn_batch_take). */
static __always_inline void gn_batch_flush(struct gn_batch_word *w, __u64 state, __u32 ring_index)
{
	struct gn_batch *b = gn_this_batch();
	if (!b) {
		__sync_lock_test_and_set(&w->state, 0);
		return;
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
	/* seq before the state, which user space reads first (with acquire),
	 * and the exchange is a full barrier towards other CPUs: a reader that
	 * sees the state empty reads this seq or a later one. */
	*(volatile __u64 *)&w->seq = seq + count;
	__sync_lock_test_and_set(&w->state, 0);
}

/* Takes a slot of this CPU's batch for a record of `size` bytes (a
 * constant, at most GN_BATCH_SLOT) and fills the record header; NULL when
 * the gate is closed, or when the batch is busy or full (the caller then
 * reserves the record on the ring, GN_CLAIM). The timestamp is taken after
 * the batch is taken, so that no flush comes between it and the commit:
 * records stamped after a flush are in a later batch. */
static __always_inline void *gn_batch_claim(struct gn_batch_word **wp, __u32 size, __u16 kind)
{
	if (gn_gate_closed())
		return NULL;
	struct gn_batch *b = gn_this_batch();
	if (!b)
		return NULL;
	struct gn_cpu_context *c = gn_this_cpu_context();
	gn_open_softirq_first(c, NULL);
	struct gn_batch_word *w = gn_this_batch_word();
	if (!gn_batch_take(w))
		return NULL; /* the caller writes it to the ring directly */
	__u64 at = *(volatile __u64 *)&w->state & GN_BATCH_FIELD;
	/* Keeps the bound check on the register used for the address. */
	asm volatile("" : "+r"(at));
	if (size > GN_BATCH_SLOT || at > GN_BATCH_BYTES - GN_BATCH_SLOT) {
		gn_batch_release(w);
		return NULL;
	}
	struct gn_header *hdr = (struct gn_header *)(b->buf + at);
	hdr->ts = bpf_ktime_get_boot_ns();
	hdr->kind = kind;
	hdr->flags = gn_flags_of(c);
	hdr->tid = (__u32)bpf_get_current_pid_tgid();
	*wp = w;
	return hdr;
}

/* Commits a record taken with gn_batch_claim and gives the batch back; the
 * commit that fills the batch writes it first. */
static __always_inline void gn_batch_commit(struct gn_batch_word *w)
{
	gn_batch_barrier();
	__u64 now = *(volatile __u64 *)&w->state + (GN_BATCH_SLOT | (1ull << 16));
	if ((now & GN_BATCH_FIELD) >= GN_BATCH_BYTES)
		gn_batch_flush(w, now, bpf_get_smp_processor_id());
	else
		*(volatile __u64 *)&w->state = now;
	gn_batch_release(w);
}

/* The record either way: batched when gn_batching, else, or when the batch
 * is busy or full, reserved on the ring (gn_reserve); GN_COMMIT then commits
 * or submits it (`batch` is NULL for a ring record). gn_batching is a
 * load-time constant: without it the verifier walks only the ring path. */
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
 * each drain on each CPU whose batch holds records or is busy, and at the
 * end on every CPU: writes what this CPU's batch holds, or an empty batch,
 * whose timestamp tells user space that nothing stamped before it is still
 * in the batch. Not behind the gate: the last flush comes after it closed.
 * Returns 1 when it flushed, 0 when the batch was busy (a record
 * half-written, or a flush under way in the program this run interrupted):
 * try again later. */
#define GN_BATCH_FLUSH_PROGRAM(name)                                                    \
	SEC("raw_tp")                                                                   \
	int name(void *ctx)                                                             \
	{                                                                               \
		struct gn_batch_word *w = gn_this_batch_word();                         \
		__u32 cpu = bpf_get_smp_processor_id();                                 \
		if (!gn_batch_take(w)) {                                                \
			__sync_fetch_and_add(&gn_batch_flush_busy[cpu & (GN_MAX_CPUS - 1)], 1); \
			return 0;                                                       \
		}                                                                       \
		gn_batch_flush(w, *(volatile __u64 *)&w->state, cpu);                   \
		gn_batch_release(w);                                                    \
		return 1;                                                               \
	}

#endif /* GPUNOISE_BATCH_BPF_H */
