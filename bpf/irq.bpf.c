// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* irq collector: hard-irq handlers (with the action's name, which is how NIC
 * queues are recognised later), softirq entry/exit per vector (each entry
 * carrying how long its vector waited since it was raised), and the x86 system vectors that
 * irq_handler_entry never sees (local timer, IPIs, irq_work, ...).
 *
 * Each event has a tp_btf program and a classic tracepoint twin; user space
 * autoloads one of the two. Interrupt context is never filtered by task: an
 * irq that lands on a training CPU matters whoever it interrupted. */
#include "common.bpf.h"
#include "irq.h"

/* Every record here is a storm's (a NET_RX flood is softirq and irq entries
 * and exits): all are batched per CPU when user space asks
 * (bpf/batch.bpf.h). All three layouts are 24 bytes. */
#define GN_BATCH_SLOT 24 /* struct gn_irq, gn_softirq and gn_vector */
#define GN_BATCH_STREAM GN_BATCH_STREAM_IRQ
#include "batch.bpf.h"

GN_BATCH_FLUSH_PROGRAM(gn_irq_flush)

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* irq number -> name of the first action seen for it. Filled once per IRQ
 * here; user space reads it when it meets a number it cannot name. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __s32);
	__type(value, char[GN_IRQ_NAME_LEN]);
} gn_irq_names SEC(".maps");

/* gn_cpu_ctx: entering programs mark the context before their own record,
 * leaving ones clear it after theirs, so the pair's records carry it. */
static __always_inline void gn_hardirq_mark(bool in)
{
	struct gn_cpu_context *c = gn_this_cpu_context();
	if (c)
		c->hardirq = in;
}

static __always_inline void gn_emit_irq(__u16 kind, __s32 irq, __s32 ret)
{
	__u64 wake = 0;
	struct gn_batch_word *batch = NULL;
	struct gn_irq *rec = GN_CLAIM(struct gn_irq, kind, &batch, &wake);
	if (!rec)
		return;
	rec->irq = irq;
	rec->ret = ret;
	GN_COMMIT(rec, batch, wake);
}

static __always_inline void gn_remember_name(__s32 irq, const char *name)
{
	if (bpf_map_lookup_elem(&gn_irq_names, &irq))
		return;
	char buf[GN_IRQ_NAME_LEN] = {};
	bpf_probe_read_kernel_str(buf, sizeof(buf), name);
	bpf_map_update_elem(&gn_irq_names, &irq, buf, BPF_NOEXIST);
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(gn_irq_entry, int irq, struct irqaction *action)
{
	if (!gn_cpu_allowed(bpf_get_smp_processor_id()))
		return 0;
	gn_hardirq_mark(true);
	gn_remember_name(irq, BPF_CORE_READ(action, name));
	gn_emit_irq(GN_REC_IRQ_ENTRY, irq, 0);
	return 0;
}

SEC("tracepoint/irq/irq_handler_entry")
int gn_tp_irq_entry(struct trace_event_raw_irq_handler_entry *ctx)
{
	if (!gn_cpu_allowed(bpf_get_smp_processor_id()))
		return 0;
	__u32 loc = ctx->__data_loc_name;
	gn_hardirq_mark(true);
	gn_remember_name(ctx->irq, (char *)ctx + (loc & 0xffff));
	gn_emit_irq(GN_REC_IRQ_ENTRY, ctx->irq, 0);
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(gn_irq_exit, int irq, struct irqaction *action, int ret)
{
	if (gn_cpu_allowed(bpf_get_smp_processor_id())) {
		gn_emit_irq(GN_REC_IRQ_EXIT, irq, ret);
		gn_hardirq_mark(false);
	}
	return 0;
}

SEC("tracepoint/irq/irq_handler_exit")
int gn_tp_irq_exit(struct trace_event_raw_irq_handler_exit *ctx)
{
	if (gn_cpu_allowed(bpf_get_smp_processor_id())) {
		gn_emit_irq(GN_REC_IRQ_EXIT, ctx->irq, ctx->ret);
		gn_hardirq_mark(false);
	}
	return 0;
}

/* Raises and entries per vector on this CPU (struct gn_softirq_cpu). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gn_softirq_cpu);
} gn_softirq_cpu SEC(".maps");

static __always_inline struct gn_softirq_cpu *gn_this_cpu_softirqs(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&gn_softirq_cpu, &zero);
}

/* NET_RX storms are sampled. In a NET_RX flood every softirq is a clock
 * read and a record at entry and exit, and that cost lands on the CPU that
 * is drowning (docs/performance.md, "NET_RX storms sampled"). So when user space
 * asks (gn_netrx_sample_every > 0), a CPU past gn_netrx_storm_entries
 * NET_RX entries within one jiffy times only every gn_netrx_sample_every-th
 * of the rest: the others read no clock and write nothing, and are counted
 * per CPU (gn_cpu_context.netrx_untimed), and the next timed entry carries
 * how many went untimed before it (struct gn_softirq.untimed_before). The
 * count stays exact; their time is estimated by the report from the timed
 * ones. A jiffy, not the clock: bpf_jiffies64 is a memory read, and the
 * storm test then costs no clock read. Set before load; 0: every softirq
 * timed. */
const volatile __u32 gn_netrx_sample_every = 0;
const volatile __u32 gn_netrx_storm_entries = 8;

/* Whether this NET_RX entry goes untimed (counts it in the storm). */
static __always_inline bool gn_netrx_entry_untimed(struct gn_cpu_context *c)
{
	__u64 tick = bpf_jiffies64();
	if (tick != c->storm_tick) {
		c->storm_tick = tick;
		c->storm_entries = 0;
	}
	if (++c->storm_entries <= gn_netrx_storm_entries)
		return false;
	if (++c->sample_seq >= gn_netrx_sample_every) {
		c->sample_seq = 0;
		return false;
	}
	return true;
}

/* Whether the next NET_RX entry here will go untimed, as far as a raise can
 * tell (a new jiffy in between makes it timed: its wait is then 0,
 * unknown, never too long). */
static __always_inline bool gn_netrx_next_untimed(const struct gn_cpu_context *c)
{
	return c->storm_entries >= gn_netrx_storm_entries && c->sample_seq + 1 < gn_netrx_sample_every &&
	       c->storm_tick == bpf_jiffies64();
}

/* A raise writes no record: it notes its time when the vector has no
 * unanswered raise, and the entry that answers it carries the wait. A raise
 * always sets the raising CPU's own pending bit, so the entry that serves it
 * runs on this CPU. */
static __always_inline void gn_note_softirq_raise(__u32 vec)
{
	/* Behind the gate like a record: an entry's wait never reaches back
	 * before the recording. */
	if (!gn_cpu_allowed(bpf_get_smp_processor_id()) || gn_gate_closed())
		return;
	if (gn_netrx_sample_every && vec == GN_SOFTIRQ_NET_RX) {
		struct gn_cpu_context *c = gn_this_cpu_context();
		if (c && gn_netrx_next_untimed(c))
			return;
	}
	struct gn_softirq_cpu *r = gn_this_cpu_softirqs();
	if (!r)
		return;
	__u64 *at = &r->raised_at[vec & (GN_SOFTIRQ_SLOTS - 1)];
	if (*at == 0)
		*at = bpf_ktime_get_boot_ns();
}

/* Softirq entries wait for their exit. Under a NET_RX flood most softirqs
 * hold no other record of this CPU (a datagram's receive is counted, not
 * recorded), and a ring reservation costs more than the rest of a program
 * (docs/performance.md). So an entry only notes itself in gn_cpu_ctx, and
 * its exit writes the pair as one record (struct gn_softirq_slice). Any
 * other record made on the CPU in between writes the entry out first
 * (gn_reserve_on), so the ring still holds the entry ahead of what is
 * nested in it; and one still open when the recording ends is written by
 * user space's last flush (gn_softirq_flush). Not when this collector
 * batches (record --batching): its entries and exits then go into the batch
 * like its other records. Set before load. */
const volatile bool gn_softirq_defer = false;

static __always_inline void gn_compiler_barrier(void)
{
	asm volatile("" ::: "memory");
}

/* Writes out this CPU's open entry, if any, on its own ring. */
static __always_inline void gn_flush_open_softirq(struct gn_cpu_context *c)
{
	if (!*(volatile __u64 *)&c->softirq_open_ts)
		return;
	__u32 cpu = bpf_get_smp_processor_id();
	void *ring = bpf_map_lookup_elem(&gn_rings, &cpu);
	if (ring)
		gn_write_open_softirq(ring, c);
	else if (__sync_lock_test_and_set(&c->softirq_open_ts, 0))
		gn_count_lost(GN_REC_SOFTIRQ_ENTRY);
}

/* The entry's part: publish, then read the clock. A program that interrupts
 * in between finds GN_SOFTIRQ_OPENING, writes the entry with its own time
 * (the softirq had begun by then) and takes it; the compare-and-swap then
 * finds it gone. */
static __always_inline void gn_open_softirq(struct gn_cpu_context *c, __u32 vec, __u64 raised, __u16 untimed)
{
	/* An entry still open here lost its exit (a program run the kernel
	 * skipped): written as it was before entries waited. */
	gn_flush_open_softirq(c);
	c->softirq_open_vec = vec;
	c->softirq_open_untimed = untimed;
	c->softirq_open_raised = raised;
	gn_compiler_barrier();
	*(volatile __u64 *)&c->softirq_open_ts = GN_SOFTIRQ_OPENING;
	gn_compiler_barrier();
	__u64 ts = bpf_ktime_get_boot_ns();
	__sync_val_compare_and_swap(&c->softirq_open_ts, GN_SOFTIRQ_OPENING, ts);
}

/* The exit's part when its entry is still open: one record for both.
 * Returns false when no entry was open (nothing written). */
static __always_inline bool gn_close_softirq(struct gn_cpu_context *c, __u32 vec)
{
	if (!*(volatile __u64 *)&c->softirq_open_ts)
		return false;
	__u32 cpu = bpf_get_smp_processor_id();
	void *ring = bpf_map_lookup_elem(&gn_rings, &cpu);
	if (!ring) {
		if (__sync_lock_test_and_set(&c->softirq_open_ts, 0))
			gn_count_lost(GN_REC_SOFTIRQ_ENTRY);
		gn_count_lost(GN_REC_SOFTIRQ_EXIT);
		return true;
	}
	__u64 wake = gn_wake_flags(ring, sizeof(struct gn_softirq_slice));
	__u64 opened;
	struct gn_softirq_slice *rec = gn_reserve_taking_open_softirq(ring, sizeof(*rec), c, &opened);
	if (!rec) {
		gn_count_lost(GN_REC_SOFTIRQ_EXIT);
		return true;
	}
	rec->hdr.ts = bpf_ktime_get_boot_ns();
	rec->hdr.kind = GN_REC_SOFTIRQ_SLICE;
	rec->hdr.flags = gn_flags_of(c);
	rec->hdr.tid = (__u32)bpf_get_current_pid_tgid();
	rec->vec = vec;
	/* 0: a program that interrupted this one wrote the entry out. */
	rec->entry_ts = opened == GN_SOFTIRQ_OPENING ? rec->hdr.ts : opened;
	rec->untimed_before = opened ? c->softirq_open_untimed : 0;
	rec->raise_wait_ns = opened ? gn_raise_wait(rec->entry_ts, c->softirq_open_raised) : 0;
	bpf_ringbuf_submit(rec, wake);
	return true;
}

/* The untimed NET_RX softirqs a timed entry speaks for (saturated). */
static __always_inline __u16 gn_take_untimed(struct gn_cpu_context *c)
{
	__u32 n = c->untimed_pending;
	c->untimed_pending = 0;
	return n > 0xffff ? 0xffff : (__u16)n;
}

static __always_inline void gn_emit_softirq(__u16 kind, __u32 vec)
{
	/* Every entry is counted first, whatever follows: the count is this
	 * program's runs, for the audit against the kernel's own. */
	struct gn_softirq_cpu *r = NULL;
	if (kind == GN_REC_SOFTIRQ_ENTRY) {
		r = gn_this_cpu_softirqs();
		if (r)
			r->entries[vec & (GN_SOFTIRQ_SLOTS - 1)]++;
	}
	if (!gn_cpu_allowed(bpf_get_smp_processor_id()))
		return;
	struct gn_cpu_context *c = gn_this_cpu_context();
	if (kind == GN_REC_SOFTIRQ_EXIT && c && c->netrx_skipping) {
		/* Softirqs do not nest on a CPU: this exit is the untimed
		 * entry's. */
		c->netrx_skipping = 0;
		c->softirq = 0;
		return;
	}
	__u64 raised = 0;
	if (kind == GN_REC_SOFTIRQ_ENTRY) {
		if (c)
			c->softirq = 1;
		/* Taken before the record's timestamp: a raise from an irq that
		 * lands after this point waits for the next round, which is
		 * when the kernel serves it (pending bits were cleared before
		 * the handlers ran). Taken by an untimed entry too: its raise
		 * is not the next timed entry's. */
		if (r)
			raised = __sync_lock_test_and_set(&r->raised_at[vec & (GN_SOFTIRQ_SLOTS - 1)], 0);
		if (gn_netrx_sample_every && vec == GN_SOFTIRQ_NET_RX && c && !gn_gate_closed() &&
		    gn_netrx_entry_untimed(c)) {
			c->netrx_skipping = 1;
			c->untimed_pending++;
			c->netrx_untimed++;
			return;
		}
		/* Left set only by an untimed softirq whose exit program did
		 * not run: it must not swallow this one's exit. */
		if (c)
			c->netrx_skipping = 0;
	}
	if (gn_softirq_defer) {
		/* Behind a closed gate an open entry stays open: user space's
		 * last flush writes it (it began inside the recording). */
		if (c && !gn_gate_closed()) {
			if (kind == GN_REC_SOFTIRQ_ENTRY) {
				gn_open_softirq(c, vec, raised, gn_take_untimed(c));
				return;
			}
			if (gn_close_softirq(c, vec)) {
				c->softirq = 0;
				return;
			}
		}
	}
	__u64 wake = 0;
	struct gn_batch_word *batch = NULL;
	struct gn_softirq *rec = GN_CLAIM(struct gn_softirq, kind, &batch, &wake);
	if (rec) {
		rec->vec = vec;
		rec->untimed_before = kind == GN_REC_SOFTIRQ_ENTRY && c ? gn_take_untimed(c) : 0;
		rec->raise_wait_ns = gn_raise_wait(rec->hdr.ts, raised);
		GN_COMMIT(rec, batch, wake);
	}
	if (kind == GN_REC_SOFTIRQ_EXIT && c)
		c->softirq = 0;
}

/* Run by user space on each CPU whose softirq entry is still open when the
 * recording ends (BPF_PROG_TEST_RUN with BPF_F_TEST_RUN_ON_CPU, after the
 * programs are detached): writes it, behind the closed gate, since the
 * softirq began inside the recording. */
SEC("raw_tp")
int gn_softirq_flush(void *ctx)
{
	struct gn_cpu_context *c = gn_this_cpu_context();
	if (c)
		gn_flush_open_softirq(c);
	return 1;
}

#define GN_SOFTIRQ_PROGS(event, kind)                                   \
	SEC("tp_btf/" #event)                                           \
	int BPF_PROG(gn_##event, unsigned int vec)                      \
	{                                                               \
		gn_emit_softirq(kind, vec);                             \
		return 0;                                               \
	}                                                               \
	SEC("tracepoint/irq/" #event)                                   \
	int gn_tp_##event(struct trace_event_raw_softirq *ctx)          \
	{                                                               \
		gn_emit_softirq(kind, ctx->vec);                        \
		return 0;                                               \
	}

GN_SOFTIRQ_PROGS(softirq_entry, GN_REC_SOFTIRQ_ENTRY)
GN_SOFTIRQ_PROGS(softirq_exit, GN_REC_SOFTIRQ_EXIT)

SEC("tp_btf/softirq_raise")
int BPF_PROG(gn_softirq_raise, unsigned int vec)
{
	gn_note_softirq_raise(vec);
	return 0;
}
SEC("tracepoint/irq/softirq_raise")
int gn_tp_softirq_raise(struct trace_event_raw_softirq *ctx)
{
	gn_note_softirq_raise(ctx->vec);
	return 0;
}

static __always_inline void gn_emit_vector(__u16 kind, __u32 vkind, __s32 vector)
{
	if (!gn_cpu_allowed(bpf_get_smp_processor_id()))
		return;
	if (kind == GN_REC_VECTOR_ENTRY)
		gn_hardirq_mark(true);
	__u64 wake = 0;
	struct gn_batch_word *batch = NULL;
	struct gn_vector *rec = GN_CLAIM(struct gn_vector, kind, &batch, &wake);
	if (rec) {
		rec->kind = vkind;
		rec->vector = vector;
		GN_COMMIT(rec, batch, wake);
	}
	if (kind == GN_REC_VECTOR_EXIT)
		gn_hardirq_mark(false);
}

/* Program names are kept short: the kernel keeps 15 characters. */
#define GN_VECTOR_PROGS(event, short_name, vkind)                               \
	SEC("tp_btf/" #event "_entry")                                          \
	int BPF_PROG(gn_v_##short_name##_in, int vector)                        \
	{                                                                       \
		gn_emit_vector(GN_REC_VECTOR_ENTRY, vkind, vector);             \
		return 0;                                                       \
	}                                                                       \
	SEC("tp_btf/" #event "_exit")                                           \
	int BPF_PROG(gn_v_##short_name##_out, int vector)                       \
	{                                                                       \
		gn_emit_vector(GN_REC_VECTOR_EXIT, vkind, vector);              \
		return 0;                                                       \
	}                                                                       \
	SEC("tracepoint/irq_vectors/" #event "_entry")                          \
	int gn_tv_##short_name##_in(struct trace_event_raw_x86_irq_vector *ctx) \
	{                                                                       \
		gn_emit_vector(GN_REC_VECTOR_ENTRY, vkind, ctx->vector);        \
		return 0;                                                       \
	}                                                                       \
	SEC("tracepoint/irq_vectors/" #event "_exit")                           \
	int gn_tv_##short_name##_out(struct trace_event_raw_x86_irq_vector *ctx)\
	{                                                                       \
		gn_emit_vector(GN_REC_VECTOR_EXIT, vkind, ctx->vector);         \
		return 0;                                                       \
	}

#if defined(__TARGET_ARCH_x86)
GN_X86_VECTORS(GN_VECTOR_PROGS)
#endif
