// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kwork collector: IPI callbacks, work items and hrtimer callbacks on the
 * recorded CPUs, and the senders of function-call IPIs aimed at them.
 *
 * Cheap by construction: receivers are filtered to the recorded CPUs before
 * anything else; each CPU writes whole spans into its own region of an
 * mmap'able array (bpf/kwork.h) and its own head, so there is no ring, no
 * wakeup and no shared cache line; entry times wait in per-CPU slots
 * (csd and hrtimer callbacks end on the CPU they began on) or, for work
 * items, whose kworker may be preempted or move, in a hash by work pointer.
 * Reschedule IPIs (no callback, no csd) and wake-list IPIs
 * (sched_ttwu_pending) are the sched collector's wakeups and are left out.
 *
 * Classic tracepoints only: their formats (void * fields) are stable across
 * kernels where the raw tp_btf arguments are not. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "kwork.h"
#include "cpu_filter.bpf.h"
#include "gate.bpf.h"
#include "doorbell.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define GN_KW_MASK_WORDS 16 /* 1024 CPUs */
#define GN_KW_SLOTS 4       /* nesting depth per CPU (a hard hrtimer inside a soft one) */

/* Set before load: the CPUs whose receivers are recorded (all when false). */
GN_CPU_FILTER(gn_kw_filter_cpus, gn_kw_cpu_mask, GN_KW_MASK_WORDS, gn_kw_cpu_allowed)

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, GN_KW_LOG); /* user space sets ncpus * GN_KW_LOG */
	__type(key, __u32);
	__type(value, struct gn_kwork);
} gn_kw_log SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* user space sets ncpus */
	__type(key, __u32);
	__type(value, struct gn_kwork_head);
} gn_kw_heads SEC(".maps");

/* The recording's gate (bpf/gate.bpf.h) is shared through the ring
 * transport's fd. Shut, nothing is recorded, opened or counted: attaching
 * and detaching tracepoints patches kernel text, and every patch sends
 * text_poke's do_sync_core IPI to each CPU (perf's remote_function too),
 * whose callbacks ran with csd_function_exit's site half-patched. Those
 * entries never saw their exit: 37 on a 2-CPU VM at every start, each
 * holding a slot, and evicted slots counted as unpaired callbacks, more at
 * the end as entries detach before exits. The recording's window is the
 * gate's anyway. */

/* The irq collector's per-CPU interrupt state (bpf/common.bpf.h), shared
 * through the ring transport's fd; this object's own copy (all zero) when
 * there is none. */
struct gn_cpu_context {
	__u32 hardirq;
	__u32 softirq;
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gn_cpu_context);
} gn_cpu_ctx SEC(".maps");

static __always_inline __u8 gn_kw_context(void)
{
	__u32 zero = 0;
	struct gn_cpu_context *c = bpf_map_lookup_elem(&gn_cpu_ctx, &zero);
	if (!c)
		return 0;
	return (c->hardirq ? GN_KW_IN_HARDIRQ : 0) | (c->softirq ? GN_KW_IN_SOFTIRQ : 0);
}

struct gn_kw_slot {
	__u64 key; /* csd or hrtimer pointer; 0: free */
	__u64 begin;
	__u64 func;
};
struct gn_kw_slots {
	struct gn_kw_slot s[GN_KW_SLOTS];
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gn_kw_slots);
} gn_kw_open SEC(".maps");

struct gn_kw_work {
	__u64 begin;
	__u64 func;
};
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64); /* work_struct pointer */
	__type(value, struct gn_kw_work);
} gn_kw_works SEC(".maps");

static __always_inline struct gn_kwork_head *gn_kw_head(__u32 cpu)
{
	return bpf_map_lookup_elem(&gn_kw_heads, &cpu);
}

static __always_inline void gn_kw_unpaired(void)
{
	if (gn_gate_closed())
		return;
	struct gn_kwork_head *h = gn_kw_head(bpf_get_smp_processor_id());
	if (h)
		__sync_fetch_and_add(&h->unpaired, 1);
}

static __always_inline void gn_kw_emit(__u8 kind, __u64 begin, __u64 end, __u64 func, __u64 callsite,
				       __u64 targets, __u64 csd)
{
	if (gn_gate_closed())
		return;
	__u32 cpu = bpf_get_smp_processor_id();
	struct gn_kwork_head *h = gn_kw_head(cpu);
	if (!h)
		return;
	/* Atomic although the region is this CPU's: a hard irq's program can
	 * interrupt a task-context one between its read and its write. */
	__u64 n = __sync_fetch_and_add(&h->next, 1);
	__u32 index = cpu * GN_KW_LOG + (__u32)(n & (GN_KW_LOG - 1));
	gn_doorbell_check(n, GN_KW_LOG, &h->read, cpu);
	struct gn_kwork *e = bpf_map_lookup_elem(&gn_kw_log, &index);
	if (!e)
		return;
	e->seq = 0; /* being written */
	e->begin = begin;
	e->end = end;
	e->func = func;
	e->callsite = callsite;
	e->targets = targets;
	e->csd = csd;
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	e->tid = (__u32)pid_tgid;
	/* The process too: a thread that sent an IPI and exited before the
	 * drain can no longer be looked up in /proc. */
	e->tgid = (__u32)(pid_tgid >> 32);
	e->pad = 0;
	e->kind = kind;
	e->flags = kind == GN_KW_IPI_SEND ? gn_kw_context() : 0;
	e->cpu = cpu;
	/* The reader checks seq before and after copying (x86 keeps stores in
	 * order; BPF has no fences). */
	e->seq = n + 1;
}

static __always_inline void gn_kw_enter(__u64 key, __u64 func)
{
	if (gn_gate_closed())
		return;
	__u32 zero = 0;
	struct gn_kw_slots *slots = bpf_map_lookup_elem(&gn_kw_open, &zero);
	if (!slots)
		return;
	/* A free slot, else the oldest: an exit the kernel skipped (it does not
	 * run a tracing program inside another on the same CPU) would otherwise
	 * hold its slot for good. The one given up is counted. */
	int pick = 0;
	for (int i = 0; i < GN_KW_SLOTS; i++) {
		if (slots->s[i].key == 0) {
			pick = i;
			goto fill;
		}
		if (slots->s[i].begin < slots->s[pick].begin)
			pick = i;
	}
	gn_kw_unpaired();
fill:
	if (pick < 0 || pick >= GN_KW_SLOTS)
		return;
	slots->s[pick].key = key;
	slots->s[pick].begin = bpf_ktime_get_boot_ns();
	slots->s[pick].func = func;
}

static __always_inline void gn_kw_leave(__u8 kind, __u64 key)
{
	__u32 zero = 0;
	struct gn_kw_slots *slots = bpf_map_lookup_elem(&gn_kw_open, &zero);
	if (!slots)
		return;
	/* The latest entry with this key is the innermost: an older one is an
	 * entry whose exit the kernel skipped. */
	int pick = -1;
	for (int i = 0; i < GN_KW_SLOTS; i++) {
		if (slots->s[i].key != key)
			continue;
		if (pick < 0 || slots->s[i].begin > slots->s[pick & (GN_KW_SLOTS - 1)].begin)
			pick = i;
	}
	if (pick < 0) {
		gn_kw_unpaired();
		return;
	}
	struct gn_kw_slot *slot = &slots->s[pick & (GN_KW_SLOTS - 1)];
	__u64 begin = slot->begin, func = slot->func;
	slot->key = 0;
	/* For a csd callback the key is its csd (1: none, see gn_kw_csd_key). */
	gn_kw_emit(kind, begin, bpf_ktime_get_boot_ns(), func, 0, 0, kind == GN_KW_CSD && key != 1 ? key : 0);
}

/* Remote wakeups through the wake list (kernel/sched/core.c
 * ttwu_queue_wakelist, TTWU_QUEUE): the waker queues sched_ttwu_pending for
 * the wakee's CPU, which an IPI runs there. They are the sched collector's
 * wakeups (sched_waking names waker, wakee and target CPU; the irq
 * collector has the call_function_single vector that ran the callback), like
 * the reschedule IPIs left out above, and under a packet flood across CPUs
 * they are one send and one callback per packet: 25k a second each here,
 * which cost the recorder 100 of the node group's 145 ms of CPU per 4 s
 * of the W2 UDP flood (docs/performance.md). Their address comes from
 * kallsyms at load (libbpf, a typeless ksym); 0 on a kernel without it. */
extern const void sched_ttwu_pending __ksym __weak;

static __always_inline bool gn_kw_is_wakeup(__u64 func)
{
	__u64 ttwu = (__u64)&sched_ttwu_pending;
	return ttwu && func == ttwu;
}

/* Senders: a callback queued for another CPU's IPI (kernel/smp.c
 * __smp_call_single_queue and smp_call_function_many_cond, once per target
 * CPU), recorded when that CPU is. This rather than ipi:ipi_send_cpumask:
 * the IPI tracepoints name the generic handler
 * (generic_smp_call_function_interrupt), not the function, and one IPI
 * serves every csd queued before it; csd_queue_cpu names the function and
 * the csd that the receiver's csd_function_entry names again. */
SEC("tracepoint/csd/csd_queue_cpu")
int gn_kw_queue(struct trace_event_raw_csd_queue_cpu *ctx)
{
	__u32 cpu = ctx->cpu;
	if (!gn_kw_cpu_allowed(cpu) || gn_kw_is_wakeup((__u64)ctx->func))
		return 0;
	__u64 now = bpf_ktime_get_boot_ns();
	__u64 targets = 1ull << (cpu < 63 ? cpu : 63);
	gn_kw_emit(GN_KW_IPI_SEND, now, now, (__u64)ctx->func, (__u64)ctx->callsite, targets, (__u64)ctx->csd);
	return 0;
}

/* A callback the sender runs on itself has no csd (csd_do_func(func, info,
 * NULL), kernel/smp.c): key 1 then (0 marks a free slot). A select between
 * the two fields would compile to a variable offset into ctx, which the
 * verifier refuses. */
static __always_inline __u64 gn_kw_csd_key(struct trace_event_raw_csd_function *ctx)
{
	__u64 key = (__u64)ctx->csd;
	return key ? key : 1;
}

SEC("tracepoint/csd/csd_function_entry")
int gn_kw_csd_in(struct trace_event_raw_csd_function *ctx)
{
	if (gn_kw_cpu_allowed(bpf_get_smp_processor_id()) && !gn_kw_is_wakeup((__u64)ctx->func))
		gn_kw_enter(gn_kw_csd_key(ctx), (__u64)ctx->func);
	return 0;
}

SEC("tracepoint/csd/csd_function_exit")
int gn_kw_csd_out(struct trace_event_raw_csd_function *ctx)
{
	if (gn_kw_cpu_allowed(bpf_get_smp_processor_id()) && !gn_kw_is_wakeup((__u64)ctx->func))
		gn_kw_leave(GN_KW_CSD, gn_kw_csd_key(ctx));
	return 0;
}

SEC("tracepoint/timer/hrtimer_expire_entry")
int gn_kw_hrt_in(struct trace_event_raw_hrtimer_expire_entry *ctx)
{
	if (gn_kw_cpu_allowed(bpf_get_smp_processor_id()))
		gn_kw_enter((__u64)ctx->hrtimer, (__u64)ctx->function);
	return 0;
}

SEC("tracepoint/timer/hrtimer_expire_exit")
int gn_kw_hrt_out(struct trace_event_raw_hrtimer_class *ctx)
{
	if (gn_kw_cpu_allowed(bpf_get_smp_processor_id()))
		gn_kw_leave(GN_KW_HRTIMER, (__u64)ctx->hrtimer);
	return 0;
}

SEC("tracepoint/workqueue/workqueue_execute_start")
int gn_kw_work_in(struct trace_event_raw_workqueue_execute_start *ctx)
{
	if (!gn_kw_cpu_allowed(bpf_get_smp_processor_id()))
		return 0;
	if (gn_gate_closed())
		return 0;
	__u64 key = (__u64)ctx->work;
	struct gn_kw_work w = {bpf_ktime_get_boot_ns(), (__u64)ctx->function};
	if (bpf_map_update_elem(&gn_kw_works, &key, &w, BPF_ANY) != 0)
		gn_kw_unpaired();
	return 0;
}

SEC("tracepoint/workqueue/workqueue_execute_end")
int gn_kw_work_out(struct trace_event_raw_workqueue_execute_end *ctx)
{
	__u64 key = (__u64)ctx->work;
	struct gn_kw_work *w = bpf_map_lookup_elem(&gn_kw_works, &key);
	if (!w)
		return 0; /* began before attach or on a CPU not recorded */
	struct gn_kw_work copy = *w;
	bpf_map_delete_elem(&gn_kw_works, &key);
	gn_kw_emit(GN_KW_WORK, copy.begin, bpf_ktime_get_boot_ns(), copy.func, 0, 0, 0);
	return 0;
}
