// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cpustate collector: idle periods and frequency changes of the recorded
 * CPUs, and NUMA balancing moves and page migrations (bpf/cpustate.h).
 *
 * power:cpu_idle fires twice per idle period on every CPU (hundreds to
 * thousands of times a second on an idle node), so that path is kept
 * short: the CPU filter first, the entry's time and state in a per-CPU
 * slot, and at the exit one 32-byte entry in this CPU's own region of an
 * mmap'able array (no ring, no wakeup, no shared cache line). cpu_idle
 * reports the CPU it runs on (kernel/sched/idle.c, drivers/cpuidle), so
 * an idle period begins and ends on one CPU.
 *
 * cpu_idle has a tp_btf program and a classic twin (the raw arguments,
 * state and cpu_id, are the same on every kernel that has the event); the
 * rest are classic only, their formats being the stable interface. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "cpustate.h"
#include "cpu_filter.bpf.h"
#include "doorbell.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define GN_CS_MASK_WORDS 16 /* 1024 CPUs */
#define GN_CS_PWR_EVENT_EXIT 0xffffffffu /* include/trace/events/power.h: (u32)-1 */

/* Set before load: the CPUs recorded (all when false). */
GN_CPU_FILTER(gn_cs_filter_cpus, gn_cs_cpu_mask, GN_CS_MASK_WORDS, gn_cs_cpu_allowed)

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, GN_CS_LOG); /* user space sets ncpus * GN_CS_LOG */
	__type(key, __u32);
	__type(value, struct gn_cpustate);
} gn_cs_log SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* user space sets ncpus */
	__type(key, __u32);
	__type(value, struct gn_cpustate_head);
} gn_cs_heads SEC(".maps");

struct gn_cs_open {
	__u64 begin; /* 0: not idle (as far as we saw) */
	__u32 state;
	__u32 pad;
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gn_cs_open);
} gn_cs_idle_open SEC(".maps");

__u64 gn_nb_next = 0; /* NUMA balancing events written so far */
struct gn_numa gn_nb_log[GN_NB_LOG] = {};

static __always_inline void gn_cs_emit(__u32 here, __u16 kind, __u64 begin, __u64 end, __u32 value, __u32 cpu)
{
	struct gn_cpustate_head *h = bpf_map_lookup_elem(&gn_cs_heads, &here);
	if (!h)
		return;
	/* Atomic although the region is this CPU's: an interrupt's program
	 * (cpu_frequency from a notifier) can run between a read and a write. */
	__u64 n = __sync_fetch_and_add(&h->next, 1);
	__u32 index = here * GN_CS_LOG + (__u32)(n & (GN_CS_LOG - 1));
	gn_doorbell_check(n, GN_CS_LOG, &h->read, here);
	struct gn_cpustate *e = bpf_map_lookup_elem(&gn_cs_log, &index);
	if (!e)
		return;
	e->seq = 0; /* being written */
	e->begin = begin;
	e->end = end;
	e->value = value;
	e->kind = kind;
	e->cpu = (__u16)cpu;
	/* The reader checks seq before and after copying (x86 keeps stores in
	 * order; BPF has no fences). */
	e->seq = n + 1;
}

static __always_inline void gn_cs_idle(__u32 state)
{
	__u32 cpu = bpf_get_smp_processor_id();
	if (!gn_cs_cpu_allowed(cpu))
		return;
	__u32 zero = 0;
	struct gn_cs_open *o = bpf_map_lookup_elem(&gn_cs_idle_open, &zero);
	if (!o)
		return;
	__u64 now = bpf_ktime_get_boot_ns();
	if (state != GN_CS_PWR_EVENT_EXIT) {
		o->begin = now;
		o->state = state;
		return;
	}
	if (!o->begin) {
		/* Attached while this CPU was idle, or an entry the kernel skipped. */
		struct gn_cpustate_head *h = bpf_map_lookup_elem(&gn_cs_heads, &cpu);
		if (h)
			__sync_fetch_and_add(&h->unpaired, 1);
		return;
	}
	__u64 begin = o->begin;
	o->begin = 0;
	gn_cs_emit(cpu, GN_CS_IDLE, begin, now, o->state, cpu);
}

SEC("tp_btf/cpu_idle")
int BPF_PROG(gn_cs_idle_btf, unsigned int state, unsigned int cpu_id)
{
	gn_cs_idle(state);
	return 0;
}

SEC("tracepoint/power/cpu_idle")
int gn_cs_idle_tp(struct trace_event_raw_cpu *ctx)
{
	gn_cs_idle(ctx->state);
	return 0;
}

/* cpufreq_notify_transition() and the fast-switch path trace every CPU of
 * a policy from one CPU: the entry names the CPU whose frequency changed,
 * in the region of the CPU that wrote it. */
SEC("tracepoint/power/cpu_frequency")
int gn_cs_freq(struct trace_event_raw_cpu *ctx)
{
	__u32 cpu = ctx->cpu_id;
	if (!gn_cs_cpu_allowed(cpu))
		return 0;
	__u64 now = bpf_ktime_get_boot_ns();
	gn_cs_emit(bpf_get_smp_processor_id(), GN_CS_FREQUENCY, now, now, ctx->state, cpu);
	return 0;
}

static __always_inline struct gn_numa *gn_nb_claim(__u64 *index)
{
	*index = __sync_fetch_and_add(&gn_nb_next, 1);
	struct gn_numa *e = &gn_nb_log[*index & (GN_NB_LOG - 1)];
	e->seq = 0; /* being written */
	e->ts = bpf_ktime_get_boot_ns();
	e->cpu = bpf_get_smp_processor_id();
	e->succeeded = 0;
	e->failed = 0;
	e->other_tid = 0;
	e->reason = -1;
	return e;
}

/* The two NUMA events' records as their tracefs formats lay them out
 * (include/trace/events/sched.h): the fields have not changed since the
 * events came (3.13), but the kernel's names for the record types have
 * (sched_move_task_template before trace_event_raw_sched_move_numa,
 * trace_event_raw_sched_swap_numa before the sched_numa_pair_template
 * class), and a CO-RE access to a type the running kernel does not have
 * would refuse the whole object, idle periods included. So plain structs,
 * no relocations. */
struct gn_nb_move_args {
	__u64 common; /* common_type, flags, preempt_count, pid */
	__s32 pid, tgid, ngid;
	__s32 src_cpu, src_nid, dst_cpu, dst_nid;
};
struct gn_nb_swap_args {
	__u64 common;
	__s32 src_pid, src_tgid, src_ngid, src_cpu, src_nid;
	__s32 dst_pid, dst_tgid, dst_ngid, dst_cpu, dst_nid;
};

/* NUMA balancing (kernel/sched/fair.c task_numa_migrate): every move, on
 * every CPU; the report keeps those of focus threads. */
SEC("tracepoint/sched/sched_move_numa")
int gn_nb_move(struct gn_nb_move_args *ctx)
{
	__u64 index;
	struct gn_numa *e = gn_nb_claim(&index);
	e->tid = ctx->pid;
	e->src_cpu = ctx->src_cpu;
	e->dst_cpu = ctx->dst_cpu;
	e->src_nid = ctx->src_nid;
	e->dst_nid = ctx->dst_nid;
	e->kind = GN_NB_MOVE;
	e->seq = index + 1;
	return 0;
}

SEC("tracepoint/sched/sched_swap_numa")
int gn_nb_swap(struct gn_nb_swap_args *ctx)
{
	__u64 index;
	struct gn_numa *e = gn_nb_claim(&index);
	e->tid = ctx->src_pid;
	e->other_tid = ctx->dst_pid;
	e->src_cpu = ctx->src_cpu;
	e->dst_cpu = ctx->dst_cpu;
	e->src_nid = ctx->src_nid;
	e->dst_nid = ctx->dst_nid;
	e->kind = GN_NB_SWAP;
	e->seq = index + 1;
	return 0;
}

/* migrate_pages() ends with this in the context of whoever migrates: for
 * NUMA balancing (reason MR_NUMA_MISPLACED) the task whose hinting fault
 * found its page on the wrong node (mm/migrate.c migrate_misplaced_folio).
 * CO-RE here: fields were added before mode and reason over time (thp_split,
 * large_folio_split), while the type's name stayed. */
SEC("tracepoint/migrate/mm_migrate_pages")
int gn_nb_migrate(struct trace_event_raw_mm_migrate_pages *ctx)
{
	/* NUMA balancing's only: compaction migrates pages by the thousand (one
	 * echo 1 > /proc/sys/vm/compact_memory here: 445 events, 3681 pages),
	 * and its stalls are the memstall collector's. */
	if (ctx->reason != bpf_core_enum_value(enum migrate_reason, MR_NUMA_MISPLACED))
		return 0;
	__u64 index;
	struct gn_numa *e = gn_nb_claim(&index);
	e->tid = (__u32)bpf_get_current_pid_tgid();
	e->succeeded = ctx->succeeded;
	e->failed = ctx->failed;
	e->reason = ctx->reason;
	e->src_cpu = e->dst_cpu = -1;
	e->src_nid = e->dst_nid = -1;
	e->kind = GN_NB_MIGRATE;
	e->seq = index + 1;
	return 0;
}
