// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* runqlat collector (the monitor's always-on scheduler aggregates): how long
 * threads wait in a run queue between becoming runnable (woken, or preempted
 * while runnable) and running, as log2-microsecond histograms per CPU for
 * all threads and for focus threads, and for focus threads their context
 * switches, involuntary preemptions by class of the task that took the CPU,
 * on-CPU time and run-queue wait by cause, and who had the CPU while they
 * waited: each wait is charged, when it ends, to the CPU's last runs
 * (tasks by tid, less the interrupts inside their runs, which the irqtime
 * collector's clocks measure), as the report attributes a wait. No ring
 * records: only per-CPU counters user space reads each interval (DESIGN.md
 * decision 5).
 *
 * Enqueue times live in task-local storage for the tp_btf programs (no
 * hash to fill up, freed with the task; Linux 5.11+) and in a hash keyed by
 * tid for the classic twins, which see tids only. bcc's runqlat uses a
 * plain hash; an LRU hash was measured here at ~750 ns per sched_switch
 * against ~100 ns for task storage.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "bits.bpf.h"
#include "core_fixes.bpf.h"
#include "focus.bpf.h"
#include "irq_cpu.bpf.h"
#include "irqtime.h"
#include "runqlat.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define GN_TASK_RUNNING 0

/* Linux 5.18 added prev_state as sched_switch's 4th tp_btf argument; user
 * space reads the prototype from BTF (as for the sched collector). */
const volatile bool gn_switch_has_prev_state = true;

struct gn_rq_start {
	__u64 ts;
	__u32 reason; /* enum gn_rq_reason */
	__u32 focus;  /* known to be a focus thread when enqueued (classic twin) */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct gn_rq_start);
} gn_rq_task SEC(".maps");

/* Classic twins only. A task always runs after being enqueued, which
 * deletes its entry, so entries do not pile up; one that cannot be added
 * (map full) is counted in gn_rq_full. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct gn_rq_start);
} gn_rq_start SEC(".maps");

__u64 gn_rq_full[GN_MAX_CPUS] = {};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, GN_RQ_NR_SCOPES);
	__type(key, __u32);
	__type(value, struct gn_rq_hist);
} gn_rq_hist SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gn_focus_sched);
} gn_focus_sched SEC(".maps");

/* This CPU's current run and the runs before it. Per CPU and only touched
 * in sched_switch, which does not nest. */
struct gn_rq_cpu {
	__u32 focus_tid;   /* the focus thread running here, to charge its on-CPU time */
	__u32 head;        /* runs[head % GN_RQ_HISTORY] is the latest that ended */
	__u64 focus_since;
	__u64 since;       /* the current run's start, and the interrupt clocks then */
	__u64 hard0;
	__u64 soft0;
	struct gn_rq_run runs[GN_RQ_HISTORY];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gn_rq_cpu);
} gn_rq_cpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct gn_rq_culprit_key);
	__type(value, struct gn_rq_culprit);
} gn_rq_culprit SEC(".maps");

/* Culprit updates that found gn_rq_culprit full, per CPU. */
__u64 gn_rq_culprit_full[GN_MAX_CPUS] = {};

static __always_inline void gn_mark(struct gn_rq_start *start, __u32 reason, bool focus, __u64 now)
{
	start->ts = now;
	start->reason = reason;
	start->focus = focus;
}

/* Classic twins: enqueue by tid. */
static __always_inline void gn_enqueue_tid(__u32 tid, __u32 reason, bool focus, __u64 now)
{
	if (!tid)
		return;
	struct gn_rq_start start = {};
	gn_mark(&start, reason, focus, now);
	if (bpf_map_update_elem(&gn_rq_start, &tid, &start, BPF_ANY) != 0) {
		__u32 cpu = bpf_get_smp_processor_id();
		__sync_fetch_and_add(&gn_rq_full[cpu & (GN_MAX_CPUS - 1)], 1);
	}
}

static __always_inline void gn_add_hist(__u32 scope, __u64 delta_ns)
{
	struct gn_rq_hist *h = bpf_map_lookup_elem(&gn_rq_hist, &scope);
	if (!h)
		return;
	__u32 slot = gn_log2_u64(delta_ns / 1000);
	if (slot >= GN_RQ_SLOTS)
		slot = GN_RQ_SLOTS - 1;
	/* This CPU's copy, and sched_switch does not nest: plain adds. */
	h->slots[slot] += 1;
	h->count += 1;
	h->sum_ns += delta_ns;
}

static __always_inline struct gn_focus_sched *gn_focus_stats(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&gn_focus_sched, &zero);
}

/* What sched_switch does with focus threads and on-CPU time, for both
 * forms. `prev_focus`/`next_focus`: whether each side is a focus thread;
 * `next_class`: enum gn_task_class of next. */
static __always_inline void gn_switch_focus(struct gn_rq_cpu *oncpu, __u32 prev_tid,
					    bool prev_runnable, bool prev_focus, __u32 next_tid,
					    bool next_focus, __u32 next_class, __u64 now)
{
	if (prev_focus) {
		struct gn_focus_sched *fs = gn_focus_stats();
		if (fs) {
			fs->switches += 1;
			if (prev_runnable) {
				fs->preempted += 1;
				fs->preempted_by[next_class & 3] += 1;
			}
			if (oncpu && oncpu->focus_tid == prev_tid && oncpu->focus_since &&
			    now > oncpu->focus_since)
				fs->oncpu_ns += now - oncpu->focus_since;
		}
	}
	if (oncpu) {
		oncpu->focus_tid = next_focus ? next_tid : 0;
		oncpu->focus_since = next_focus ? now : 0;
	}
}

/* prev's run ends now: it becomes the latest remembered run. Its interrupt
 * time is what the CPU's clocks moved meanwhile. */
static __always_inline void gn_end_run(struct gn_rq_cpu *c, __u32 prev_tid, __u32 prev_tgid,
				       const char *prev_comm /* NULL: current's */, __u64 now)
{
	__u32 zero = 0;
	struct gn_irq_cpu *irq = bpf_map_lookup_elem(&gn_irq_cpu, &zero);
	__u64 hard = irq ? irq->hard_total_ns : 0, soft = irq ? irq->soft_total_ns : 0;
	if (c->since) {
		c->head += 1;
		struct gn_rq_run *r = &c->runs[c->head & (GN_RQ_HISTORY - 1)];
		r->tid = prev_tid;
		r->tgid = prev_tgid;
		r->start = c->since;
		r->end = now;
		r->hard_ns = hard - c->hard0;
		r->soft_ns = soft - c->soft0;
		/* tp_btf: plain loads from the BTF pointer, cheaper than the
		 * helper call on every switch. The classic twins cannot load
		 * from an offset ctx pointer; prev is current there. */
		if (prev_comm)
			__builtin_memcpy(r->comm, prev_comm, sizeof(r->comm));
		else
			bpf_get_current_comm(r->comm, sizeof(r->comm));
	}
	c->since = now;
	c->hard0 = hard;
	c->soft0 = soft;
}

/* Runs are remembered only while a focus set exists: without one no wait
 * is ever charged, so a switch skips the interrupt clocks and the copy.
 * The current run is forgotten then, so the first run after the set
 * appears does not reach back over the time without it. */
static __always_inline void gn_track_runs(struct gn_rq_cpu *c, __u32 prev_tid, __u32 prev_tgid,
					  const char *prev_comm, __u64 now)
{
	if (!c)
		return;
	if (!gn_focus_enabled) {
		c->since = 0;
		return;
	}
	gn_end_run(c, prev_tid, prev_tgid, prev_comm, now);
}

/* `part` of `whole` applied to `v` (v <= whole in practice), without
 * overflowing for spans of up to about 4 s each. */
static __always_inline __u64 gn_scaled(__u64 v, __u64 part, __u64 whole)
{
	if (!whole || part >= whole)
		return v;
	if (v < (1ULL << 32) && part < (1ULL << 32))
		return v * part / whole;
	return v / whole * part;
}

static __always_inline void gn_charge_task(const struct gn_rq_run *r, __u64 ns, __u64 wait_end)
{
	struct gn_rq_culprit_key key = {.tid = r->tid, .cpu = bpf_get_smp_processor_id()};
	struct gn_rq_culprit *v = bpf_map_lookup_elem(&gn_rq_culprit, &key);
	if (!v) {
		struct gn_rq_culprit fresh = {.tgid = r->tgid};
		__builtin_memcpy(fresh.comm, r->comm, sizeof(fresh.comm));
		bpf_map_update_elem(&gn_rq_culprit, &key, &fresh, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&gn_rq_culprit, &key);
		if (!v) {
			gn_rq_culprit_full[key.cpu & (GN_MAX_CPUS - 1)] += 1;
			return;
		}
	}
	v->wait_ns += ns;
	if (v->last != wait_end) {
		v->last = wait_end;
		v->waits += 1;
	}
}

/* Focus thread `waiter` waited for this CPU over [ts, now): each remembered
 * run in that span is charged, its interrupts to the interrupts, the rest
 * to its task (not to the idle task, nor to the waiter itself, which then
 * ran on another CPU). What lies before the oldest run is unknown. */
static __always_inline void gn_charge_wait(struct gn_rq_cpu *c, struct gn_focus_sched *fs,
					   __u32 waiter, __u64 ts, __u64 now)
{
	__u64 covered = now; /* the span from here to now is charged */
	for (int i = 0; i < GN_RQ_HISTORY; i++) {
		const struct gn_rq_run *r = &c->runs[(c->head - i) & (GN_RQ_HISTORY - 1)];
		if (!r->end || r->end <= ts || r->end > covered || r->start > r->end)
			break;
		/* Runs are back to back; a gap (a switch not seen) is unknown. */
		fs->wait_unknown_ns += covered - r->end;
		__u64 from = r->start > ts ? r->start : ts;
		__u64 len = r->end - r->start, ns = r->end - from;
		__u64 hard = gn_scaled(r->hard_ns, ns, len), soft = gn_scaled(r->soft_ns, ns, len);
		if (hard > ns)
			hard = ns;
		if (soft > ns - hard)
			soft = ns - hard;
		fs->wait_hardirq_ns += hard;
		fs->wait_softirq_ns += soft;
		if (r->tid && r->tid != waiter && ns > hard + soft)
			gn_charge_task(r, ns - hard - soft, now);
		covered = from;
		if (covered <= ts)
			break;
	}
	if (covered > ts)
		fs->wait_unknown_ns += covered - ts;
}

/* next was waiting since `start` (its enqueue record): histogram it. */
static __always_inline void gn_dequeue(struct gn_rq_cpu *c, __u32 next_tid, __u64 ts,
				       __u32 reason, bool focus, __u64 now)
{
	if (!ts || now < ts)
		return;
	__u64 delta = now - ts;
	gn_add_hist(GN_RQ_ALL, delta);
	if (!focus)
		return;
	gn_add_hist(GN_RQ_FOCUS, delta);
	struct gn_focus_sched *fs = gn_focus_stats();
	if (fs) {
		fs->waits += 1;
		if (reason == GN_RQ_PREEMPTED)
			fs->wait_preempted_ns += delta;
		else
			fs->wait_woken_ns += delta;
		if (c)
			gn_charge_wait(c, fs, next_tid, ts, now);
	}
}

/* tp_btf only: `t` is a BTF pointer, read directly. */
static __always_inline __u32 gn_task_class(struct task_struct *t, bool focus)
{
	if (t->pid == 0)
		return GN_CLASS_IDLE;
	if (focus)
		return GN_CLASS_FOCUS;
	if (t->flags & GN_PF_KTHREAD)
		return GN_CLASS_KERNEL;
	return GN_CLASS_OTHER;
}

static __always_inline void gn_enqueue_task(struct task_struct *p, __u32 reason, bool focus,
					   __u64 now)
{
	if (!p->pid)
		return;
	struct gn_rq_start *start =
		bpf_task_storage_get(&gn_rq_task, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (start)
		gn_mark(start, reason, focus, now);
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(gn_rq_wakeup, struct task_struct *p)
{
	gn_enqueue_task(p, GN_RQ_WOKEN, gn_id_focus(p->tgid), bpf_ktime_get_boot_ns());
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(gn_rq_wakeup_new, struct task_struct *p)
{
	gn_enqueue_task(p, GN_RQ_WOKEN, gn_id_focus(p->tgid), bpf_ktime_get_boot_ns());
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(gn_rq_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = bpf_ktime_get_boot_ns();
	unsigned int state;
	if (gn_switch_has_prev_state)
		state = (unsigned int)ctx[3];
	else
		state = gn_task_state(prev);
	bool prev_runnable = (preempt || state == GN_TASK_RUNNING) && prev->pid != 0;
	bool prev_focus = gn_id_focus(prev->tgid);
	bool next_focus = gn_id_focus(next->tgid);
	__u32 zero = 0;
	struct gn_rq_cpu *c = bpf_map_lookup_elem(&gn_rq_cpu, &zero);
	gn_switch_focus(c, prev->pid, prev_runnable, prev_focus, next->pid, next_focus,
			gn_task_class(next, next_focus), now);
	gn_track_runs(c, prev->pid, prev->tgid, prev->comm, now);
	if (prev_runnable)
		gn_enqueue_task(prev, GN_RQ_PREEMPTED, prev_focus, now);
	if (!next->pid)
		return 0;
	struct gn_rq_start *start = bpf_task_storage_get(&gn_rq_task, next, 0, 0);
	if (!start || !start->ts)
		return 0;
	gn_dequeue(c, next->pid, start->ts, start->reason, next_focus || start->focus, now);
	start->ts = 0;
	return 0;
}

/* Classic twins: tasks other than current are known by tid only, so focus
 * is looked up by tid (user space keeps focus threads' tids in the map). */
SEC("tracepoint/sched/sched_wakeup")
int gn_tp_rq_wakeup(struct trace_event_raw_sched_wakeup_template *ctx)
{
	gn_enqueue_tid(ctx->pid, GN_RQ_WOKEN, gn_id_focus(ctx->pid), bpf_ktime_get_boot_ns());
	return 0;
}

SEC("tracepoint/sched/sched_wakeup_new")
int gn_tp_rq_wknew(struct trace_event_raw_sched_wakeup_template *ctx)
{
	gn_enqueue_tid(ctx->pid, GN_RQ_WOKEN, gn_id_focus(ctx->pid), bpf_ktime_get_boot_ns());
	return 0;
}

SEC("tracepoint/sched/sched_switch")
int gn_tp_rq_switch(struct trace_event_raw_sched_switch *ctx)
{
	__u64 now = bpf_ktime_get_boot_ns();
	/* prev_state's encoding differs between kernels, but "runnable" is 0
	 * (or TASK_REPORT_MAX for preemption) in every one of them. */
	long state = ctx->prev_state;
	__u32 prev_tid = ctx->prev_pid, next_tid = ctx->next_pid;
	bool prev_runnable = (state == GN_TASK_RUNNING || (state & ~0xffL) != 0) && prev_tid != 0;
	bool prev_focus = gn_current_focus() || gn_id_focus(prev_tid);
	bool next_focus = gn_id_focus(next_tid);
	__u32 next_class = next_tid == 0 ? GN_CLASS_IDLE : next_focus ? GN_CLASS_FOCUS : GN_CLASS_OTHER;
	__u32 zero = 0;
	struct gn_rq_cpu *c = bpf_map_lookup_elem(&gn_rq_cpu, &zero);
	gn_switch_focus(c, prev_tid, prev_runnable, prev_focus, next_tid, next_focus, next_class, now);
	gn_track_runs(c, prev_tid, bpf_get_current_pid_tgid() >> 32, NULL, now);
	if (prev_runnable)
		gn_enqueue_tid(prev_tid, GN_RQ_PREEMPTED, prev_focus, now);
	if (!next_tid)
		return 0;
	struct gn_rq_start *start = bpf_map_lookup_elem(&gn_rq_start, &next_tid);
	if (!start)
		return 0;
	__u64 ts = start->ts;
	__u32 reason = start->reason;
	bool focus = next_focus || start->focus;
	bpf_map_delete_elem(&gn_rq_start, &next_tid);
	gn_dequeue(c, next_tid, ts, reason, focus, now);
	return 0;
}
