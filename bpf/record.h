/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Record layouts shared by the eBPF collectors and user space.
 *
 * Both compilers must see the same bytes, so this header holds only
 * fixed-width fields, constants and enums: never kernel types. The C++ side
 * pins sizes and offsets with static_asserts (userspace/collect/records.h). */
#ifndef GPUNOISE_BPF_RECORD_H
#define GPUNOISE_BPF_RECORD_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define GN_MAX_CPUS 1024
#define GN_TASK_COMM_LEN 16

/* Every ring-buffer record starts with this header. `tid` is the task that
 * was current when the event fired (ftrace's common_pid). */
struct gn_header {
	__u64 ts; /* CLOCK_BOOTTIME ns, bpf_ktime_get_boot_ns() */
	__u16 kind; /* enum gn_record_kind */
	__u16 flags; /* ftrace's common_flags bits (TRACE_FLAG_*): the context it fired in */
	__u32 tid;
};

/* The header.flags bits user space reads (include/linux/trace_events.h). */
enum gn_header_flags {
	GN_FLAG_HARDIRQ = 0x08,
	GN_FLAG_SOFTIRQ = 0x10,
	GN_FLAG_NMI = 0x40,
	GN_FLAG_BH_OFF = 0x80,
};

enum gn_record_kind {
	GN_REC_INVALID = 0,
	/* sched collector */
	GN_REC_SCHED_SWITCH = 1,
	GN_REC_SCHED_WAKING = 2,
	GN_REC_SCHED_WAKEUP_NEW = 3,
	GN_REC_SCHED_MIGRATE = 4,
	GN_REC_PROCESS_FORK = 5,
	GN_REC_PROCESS_EXEC = 6,
	GN_REC_PROCESS_EXIT = 7,
	GN_REC_TASK_RENAME = 8,
	/* irq collector */
	GN_REC_IRQ_ENTRY = 32,
	GN_REC_IRQ_EXIT = 33,
	GN_REC_SOFTIRQ_ENTRY = 34,
	GN_REC_SOFTIRQ_EXIT = 35,
	/* 36 was softirq_raise: raises are folded into entries (gn_softirq.raise_wait_ns) */
	GN_REC_VECTOR_ENTRY = 37,
	GN_REC_VECTOR_EXIT = 38,
	/* A softirq's entry and exit in one record (struct gn_softirq_slice) */
	GN_REC_SOFTIRQ_SLICE = 39,
	/* network collectors start at 64 (bpf/net.h) */
	/* A batch of records from one CPU (struct gn_batch_hdr, bpf/batch.bpf.h) */
	GN_REC_BATCH = 250,
	GN_REC_KIND_MAX = 256,
};

/* gn_lost_kinds' key GN_REC_INVALID holds the sum over all kinds (no record
 * has that kind): the one value a drain needs. */
#define GN_LOST_TOTAL_KEY GN_REC_INVALID

/* A batch: records written on one CPU, one per slot of `slot` bytes (a
 * record no bigger than its slot, at its start), after this header, in the
 * order they were claimed (which a nested program can make differ from time
 * order; user space sorts). hdr.ts is the instant of the flush: every record
 * in the batch was stamped before it, and every record a later batch of this
 * CPU and stream holds was stamped after it. Sequence numbers count the
 * stream's batched records on this CPU from the object's load, lost batches
 * included: end_seq of one batch is first_seq of the next unless a batch was
 * lost (its records are counted in gn_lost_kinds). A batch with no records
 * is a flush of an empty batch: it only moves hdr.ts on. */
struct gn_batch_hdr {
	struct gn_header hdr; /* kind GN_REC_BATCH, tid 0 */
	__u16 count; /* records after the header */
	__u16 slot; /* bytes per record */
	__u16 cpu; /* the CPU the records were written on */
	__u16 stream; /* whose batch: enum gn_batch_stream */
	__u64 first_seq;
	__u64 end_seq; /* first_seq + count */
};

/* A CPU's batch state (bpf/batch.bpf.h), one cache line per CPU in the
 * batching object's .bss (gn_batch_words), which user space reads through
 * the skeleton's mapping. state: bits 0-15 bytes committed, 16-31 records
 * committed; 0 when the batch is empty. busy: not 0 while a program of this
 * CPU writes a record into the batch or flushes it (written before it reads
 * the state, cleared after its commit). seq: the stream's sequence number of
 * the next batched record (first_seq of the batch being filled), written
 * only by a flush, before it clears the state. */
struct gn_batch_word {
	__u64 state;
	__u64 seq;
	__u32 busy;
	__u32 pad0;
	__u64 pad[5];
};

/* Each batching object keeps its own per-CPU batch, so a CPU has one batch
 * stream per object, each with its own flush times. */
enum gn_batch_stream {
	GN_BATCH_STREAM_SCHED = 0,
	GN_BATCH_STREAM_IRQ = 1,
	GN_BATCH_STREAMS = 2,
};

/* Each CPU's interrupt state (gn_cpu_ctx, bpf/common.bpf.h), shared by every
 * collector object; user space creates the map, so its size lives here.
 * hardirq and softirq are flags the irq collector's entry and exit programs
 * set and clear. softirq_open_ts is a softirq entry not written yet
 * (bpf/irq.bpf.c: "Softirq entries wait for their exit"): 0 none,
 * GN_SOFTIRQ_OPENING while its entry program is between publishing it and
 * reading the clock, else its time. */
struct gn_cpu_context {
	__u32 hardirq; /* in a handler or system vector */
	__u32 softirq; /* serving a softirq */
	__u64 softirq_open_ts;
	__u64 softirq_open_raised; /* the entry's earliest unanswered raise, 0: none */
	__u16 softirq_open_vec;
	__u16 softirq_open_untimed; /* the entry's untimed_before (struct gn_softirq) */
	/* NET_RX storm sampling (bpf/irq.bpf.c, "NET_RX storms are sampled"). */
	__u32 netrx_skipping; /* serving a NET_RX softirq that goes untimed */
	__u64 storm_tick;     /* the jiffy storm_entries counts in */
	__u32 storm_entries;  /* NET_RX entries on this CPU in that jiffy */
	__u32 sample_seq;     /* storm entries since the last timed one */
	__u64 netrx_untimed;  /* NET_RX softirqs left untimed on this CPU, ever */
	__u32 untimed_pending;/* of those, since the last timed NET_RX entry */
	__u32 pad;
};
#define GN_SOFTIRQ_OPENING 1ull

/* Ring-buffer transport: one BPF_MAP_TYPE_RINGBUF per CPU inside an
 * ARRAY_OF_MAPS indexed by CPU, created by user space and shared by every
 * collector object. Producers submit without waking the consumer until the
 * ring is this many parts full (1/GN_WAKEUP_FRACTION). */
#define GN_WAKEUP_FRACTION 4

#endif /* GPUNOISE_BPF_RECORD_H */
