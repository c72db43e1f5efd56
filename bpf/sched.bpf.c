// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sched collector: context switches, wakeups, migrations and the task
 * lifecycle (fork/exec/exit/rename), so every tid in the trace has a name
 * and a process.
 *
 * Each event has a tp_btf program (typed arguments, no tracefs needed) and a
 * classic tracepoint twin; user space autoloads one of the two per event. */
#include "common.bpf.h"
#include "core_fixes.bpf.h"
#include "sched.h"

/* Switches and wakeups, the records a scheduling storm is made of, are
 * batched per CPU when user space asks (bpf/batch.bpf.h); the rest go to the
 * ring directly. */
#define GN_BATCH_SLOT 56 /* struct gn_sched_switch; wakeups (48 B) use 56 too */
#define GN_BATCH_STREAM GN_BATCH_STREAM_SCHED
#include "batch.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define GN_CLONE_THREAD 0x00010000
/* include/linux/sched.h */
#define GN_TASK_RUNNING 0x0000
#define GN_TASK_UNINTERRUPTIBLE 0x0002
#define GN_TASK_NOLOAD 0x0400
#define GN_TASK_IDLE (GN_TASK_UNINTERRUPTIBLE | GN_TASK_NOLOAD)
#define GN_TASK_RTLOCK_WAIT 0x1000
#define GN_TASK_REPORT 0x7f
#define GN_TASK_REPORT_IDLE (GN_TASK_REPORT + 1)
#define GN_TASK_REPORT_MAX (GN_TASK_REPORT_IDLE << 1)

/* Task filters, all optional. A task is selected when no filter is set, or
 * when its process is in gn_pids, or when it lives in the cgroup-v2 subtree
 * gn_cgroup_id (at depth gn_cgroup_level). */
const volatile bool gn_filter_pids = false;
const volatile bool gn_follow_forks = true;
const volatile __u64 gn_cgroup_id = 0;
const volatile __s32 gn_cgroup_level = 0;
/* Linux 5.18 ("sched/tracing: Don't re-read p->state when emitting
 * sched_switch event") added prev_state as the 4th argument. User space reads
 * the tracepoint's prototype from BTF and sets this; clang 14 cannot express
 * the check as a CO-RE type match. */
const volatile bool gn_switch_has_prev_state = true;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tgid */
	__type(value, __u8);
} gn_pids SEC(".maps");

/* The threads of the selected tasks, by tid, for the classic-tracepoint
 * twins: those see a task's pid, not its task_struct, so the only task whose
 * process and cgroup they can check is the current one. User space seeds the
 * set after attaching (every thread of the selected processes and cgroups);
 * the programs add each thread a selected task creates and each selected
 * task they find current, and remove a thread when it exits. The tp_btf fork
 * and exit programs keep it too, for kernels where some events have only a
 * classic twin. Without a task filter user space sizes it to one entry. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tid */
	__type(value, __u8);
} gn_tids SEC(".maps");

/* Selected threads the classic twins could not remember (gn_tids was full),
 * per CPU: their later wakeups and switch-ins may be missed. Reported with
 * the map (map.sched.gn_tids.full). */
__u64 gn_tids_full[GN_MAX_CPUS] = {};

static __always_inline bool gn_filtering(void)
{
	return gn_filter_pids || gn_cgroup_id;
}

static __always_inline void gn_remember_tid(__u32 tid)
{
	__u8 one = 1;
	if (bpf_map_update_elem(&gn_tids, &tid, &one, BPF_ANY) != 0) {
		__u32 cpu = bpf_get_smp_processor_id();
		__sync_fetch_and_add(&gn_tids_full[cpu & (GN_MAX_CPUS - 1)], 1);
	}
}

/* Classic twins only: a task other than the current one, by tid. */
static __always_inline bool gn_id_selected(__u32 tid)
{
	return bpf_map_lookup_elem(&gn_tids, &tid) != NULL;
}

static __always_inline bool gn_task_selected(struct task_struct *task)
{
	if (!gn_filtering())
		return true;
	if (gn_filter_pids) {
		__u32 tgid = BPF_CORE_READ(task, tgid);
		if (bpf_map_lookup_elem(&gn_pids, &tgid))
			return true;
	}
	if (gn_cgroup_id && gn_task_cgroup_ancestor_id(task, gn_cgroup_level) == gn_cgroup_id)
		return true;
	return false;
}

/* Classic twins: the current task is checked by its task_struct. A selected
 * current task is remembered by tid (it may have entered the cgroup after the
 * seeding) unless it is on its way out. */
static __always_inline bool gn_current_selected_remember(bool remember)
{
	if (!gn_filtering())
		return true;
	if (!gn_task_selected((struct task_struct *)bpf_get_current_task()))
		return false;
	if (remember) {
		__u32 tid = (__u32)bpf_get_current_pid_tgid();
		if (!bpf_map_lookup_elem(&gn_tids, &tid))
			gn_remember_tid(tid);
	}
	return true;
}

static __always_inline bool gn_current_selected(void)
{
	return gn_current_selected_remember(true);
}

/* The encoding the sched_switch tracepoint itself reports
 * (__trace_sched_switch_state in include/trace/events/sched.h): one bit per
 * state index, TASK_REPORT_MAX for preemption. */
static __always_inline __s32 gn_report_state(bool preempt, unsigned int state,
					     unsigned int exit_state)
{
	if (preempt)
		return GN_TASK_REPORT_MAX;
	unsigned int bits = (state | exit_state) & GN_TASK_REPORT;
	if (state == GN_TASK_IDLE)
		bits = GN_TASK_REPORT_IDLE;
	if (state == GN_TASK_RTLOCK_WAIT)
		bits = GN_TASK_UNINTERRUPTIBLE;
	if (!bits)
		return 0;
	/* fls(bits) - 1, bits <= 0xff */
	int idx = 0;
#pragma unroll
	for (int i = 0; i < 8; i++)
		if (bits >> i)
			idx = i;
	return 1 << idx;
}

/* A task's comm into a record. Switches and wakeups copy one per event: for
 * tp_btf the source is a typed task_struct field, read with two plain loads
 * (the verifier allows loads within a char array, and a fault reads zero),
 * where a bpf_probe_read_kernel call costs more than the copy. The classic
 * twins' comm lies in their context at an offset CO-RE may move, and keeps
 * the helper. */
static __always_inline void gn_copy_comm(bool btf, char dst[GN_TASK_COMM_LEN], const char *src)
{
	_Static_assert(GN_TASK_COMM_LEN == 16, "two 8-byte loads");
	if (btf) {
		__u64 *out = (__u64 *)dst;
		out[0] = *(const __u64 *)src;
		out[1] = *(const __u64 *)(src + 8);
	} else {
		bpf_probe_read_kernel(dst, GN_TASK_COMM_LEN, src);
	}
}

static __always_inline void gn_emit_switch(bool btf, __u32 prev_tgid, __s32 prev_state, __u32 next_tid,
					   __u32 next_tgid, __s32 next_prio, const char *next_comm)
{
	__u64 wake = 0;
	struct gn_batch_word *batch = NULL;
	struct gn_sched_switch *rec = GN_CLAIM(struct gn_sched_switch, GN_REC_SCHED_SWITCH, &batch, &wake);
	if (!rec)
		return;
	rec->prev_tgid = prev_tgid;
	rec->prev_state = prev_state;
	rec->next_tid = next_tid;
	rec->next_tgid = next_tgid;
	rec->next_prio = next_prio;
	rec->pad = 0;
	gn_copy_comm(btf, rec->next_comm, next_comm);
	GN_COMMIT(rec, batch, wake);
}

GN_BATCH_FLUSH_PROGRAM(gn_sched_flush)

SEC("tp_btf/sched_switch")
int BPF_PROG(gn_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	if (!gn_cpu_allowed(bpf_get_smp_processor_id()))
		return 0;
	if (gn_filtering() && !gn_task_selected(prev) && !gn_task_selected(next))
		return 0;
	unsigned int state;
	if (gn_switch_has_prev_state)
		state = (unsigned int)ctx[3];
	else
		state = gn_task_state(prev);
	/* tp_btf hands typed task pointers: their fields are plain (CO-RE
	 * relocated) loads, where BPF_CORE_READ makes a helper call each. */
	gn_emit_switch(true, prev->tgid, gn_report_state(preempt, state, prev->exit_state),
		       next->pid, next->tgid, next->prio, next->comm);
	return 0;
}

SEC("tracepoint/sched/sched_switch")
int gn_tp_sched_switch(struct trace_event_raw_sched_switch *ctx)
{
	if (!gn_cpu_allowed(bpf_get_smp_processor_id()))
		return 0;
	if (gn_filtering()) {
		/* A dead or dying prev is not remembered again after its exit. */
		bool dying = ctx->prev_state & (0x10 | 0x20); /* X, Z */
		if (!gn_current_selected_remember(!dying) && !gn_id_selected(ctx->next_pid))
			return 0;
	}
	/* next's tgid is unknown here; user space fills it from its thread table. */
	gn_emit_switch(false, bpf_get_current_pid_tgid() >> 32, ctx->prev_state, ctx->next_pid, 0,
		       ctx->next_prio, ctx->next_comm);
	return 0;
}

static __always_inline void gn_emit_wake(bool btf, __u16 kind, __u32 tid, __u32 tgid, __s32 prio,
					 __s32 target_cpu, const char *comm)
{
	__u64 wake = 0;
	struct gn_batch_word *batch = NULL;
	struct gn_sched_wake *rec = GN_CLAIM(struct gn_sched_wake, kind, &batch, &wake);
	if (!rec)
		return;
	rec->tid = tid;
	rec->tgid = tgid;
	rec->prio = prio;
	rec->target_cpu = target_cpu;
	gn_copy_comm(btf, rec->comm, comm);
	GN_COMMIT(rec, batch, wake);
}

static __always_inline void gn_wake_btf(__u16 kind, struct task_struct *p)
{
	if (!gn_cpu_allowed(bpf_get_smp_processor_id()) || !gn_task_selected(p))
		return;
	gn_emit_wake(true, kind, p->pid, p->tgid, p->prio, gn_task_cpu(p), p->comm);
}

static __always_inline void gn_wake_tp(__u16 kind, struct trace_event_raw_sched_wakeup_template *ctx)
{
	if (!gn_cpu_allowed(bpf_get_smp_processor_id()))
		return;
	if (gn_filtering() && !gn_id_selected(ctx->pid))
		return;
	gn_emit_wake(false, kind, ctx->pid, 0, ctx->prio, ctx->target_cpu, ctx->comm);
}

SEC("tp_btf/sched_waking")
int BPF_PROG(gn_sched_waking, struct task_struct *p)
{
	gn_wake_btf(GN_REC_SCHED_WAKING, p);
	return 0;
}

SEC("tracepoint/sched/sched_waking")
int gn_tp_sched_waking(struct trace_event_raw_sched_wakeup_template *ctx)
{
	gn_wake_tp(GN_REC_SCHED_WAKING, ctx);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(gn_sched_wakeup_new, struct task_struct *p)
{
	gn_wake_btf(GN_REC_SCHED_WAKEUP_NEW, p);
	return 0;
}

SEC("tracepoint/sched/sched_wakeup_new")
int gn_tp_sched_wakeup_new(struct trace_event_raw_sched_wakeup_template *ctx)
{
	gn_wake_tp(GN_REC_SCHED_WAKEUP_NEW, ctx);
	return 0;
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(gn_sched_migrate, struct task_struct *p, int dest_cpu)
{
	if (!gn_cpu_allowed(bpf_get_smp_processor_id()) || !gn_task_selected(p))
		return 0;
	__u64 wake;
	struct gn_sched_migrate *rec = GN_RESERVE(struct gn_sched_migrate, GN_REC_SCHED_MIGRATE, &wake);
	if (!rec)
		return 0;
	rec->tid = BPF_CORE_READ(p, pid);
	rec->tgid = BPF_CORE_READ(p, tgid);
	rec->prio = BPF_CORE_READ(p, prio);
	rec->orig_cpu = gn_task_cpu(p);
	rec->dest_cpu = dest_cpu;
	rec->pad = 0;
	bpf_probe_read_kernel(rec->comm, sizeof(rec->comm), p->comm);
	gn_submit(rec, wake);
	return 0;
}

/* Before Linux 6.x these events carried comm inline instead of as a
 * __data_loc string. */
struct trace_event_raw_sched_migrate_task___inline_comm {
	char comm[16];
} __attribute__((preserve_access_index));

SEC("tracepoint/sched/sched_migrate_task")
int gn_tp_sched_migrate(struct trace_event_raw_sched_migrate_task *ctx)
{
	if (!gn_cpu_allowed(bpf_get_smp_processor_id()))
		return 0;
	if (gn_filtering() && !gn_id_selected(ctx->pid))
		return 0;
	__u64 wake;
	struct gn_sched_migrate *rec = GN_RESERVE(struct gn_sched_migrate, GN_REC_SCHED_MIGRATE, &wake);
	if (!rec)
		return 0;
	rec->tid = ctx->pid;
	rec->tgid = 0;
	rec->prio = ctx->prio;
	rec->orig_cpu = ctx->orig_cpu;
	rec->dest_cpu = ctx->dest_cpu;
	rec->pad = 0;
	/* Both branches carry CO-RE relocations; the one for the field this
	 * kernel lacks is dead code the verifier never walks. */
	if (bpf_core_field_exists(ctx->__data_loc_comm)) {
		__u32 loc = BPF_CORE_READ(ctx, __data_loc_comm);
		bpf_probe_read_kernel_str(rec->comm, sizeof(rec->comm), (char *)ctx + (loc & 0xffff));
	} else {
		struct trace_event_raw_sched_migrate_task___inline_comm *old = (void *)ctx;
		bpf_probe_read_kernel(rec->comm, sizeof(rec->comm), old->comm);
	}
	gn_submit(rec, wake);
	return 0;
}

/* struct pid's numbers[level] for a variable level: the flexible array's
 * offset and element size come from CO-RE, the index is plain arithmetic on
 * the pointer value (a probe-read scalar, not a BTF pointer). */
static __always_inline struct upid *gn_upid_at(struct pid *pid, __u32 level)
{
	return (struct upid *)((char *)pid + bpf_core_field_offset(struct pid, numbers) +
			       (__u64)level * bpf_core_type_size(struct upid));
}

/* The child's ids in its pid namespaces, innermost first, when it is in one
 * other than the host's. At task_newtask, copy_process has set thread_pid
 * (init_task_pid) and group_leader. */
static __always_inline void gn_fill_pidns(struct gn_process_fork *rec, struct task_struct *child)
{
	rec->ns_level = 0;
	rec->ns_count = 0;
	struct pid *tpid = BPF_CORE_READ(child, thread_pid);
	struct pid *gpid = BPF_CORE_READ(child, group_leader, thread_pid);
	if (!tpid || !gpid)
		return;
	__u32 level = BPF_CORE_READ(tpid, level);
	rec->ns_level = level;
	/* A bounded loop (Linux >= 5.3's verifier): the early exit keeps clang
	 * from unrolling it. */
	for (int i = 0; i < GN_PIDNS_LEVELS; i++) {
		if ((__u32)i >= level) /* level 0 is the host's: the record's own ids */
			break;
		__u32 lvl = level - i;
		struct upid *t = gn_upid_at(tpid, lvl);
		struct upid *g = gn_upid_at(gpid, lvl);
		rec->ns[i].inum = BPF_CORE_READ(t, ns, ns.inum);
		rec->ns[i].level = lvl;
		rec->ns[i].tid = BPF_CORE_READ(t, nr);
		rec->ns[i].tgid = BPF_CORE_READ(g, nr);
		rec->ns_count = i + 1;
	}
}

static __always_inline struct gn_process_fork *gn_reserve_fork(__u32 parent_tgid, __u32 child_tid,
								__u32 child_tgid, bool is_thread,
								const char *parent_comm,
								const char *child_comm, __u64 *wake)
{
	struct gn_process_fork *rec = GN_RESERVE(struct gn_process_fork, GN_REC_PROCESS_FORK, wake);
	if (!rec)
		return NULL;
	rec->parent_tgid = parent_tgid;
	rec->child_tid = child_tid;
	rec->child_tgid = child_tgid;
	rec->is_thread = is_thread;
	bpf_probe_read_kernel(rec->parent_comm, sizeof(rec->parent_comm), parent_comm);
	bpf_probe_read_kernel(rec->child_comm, sizeof(rec->child_comm), child_comm);
	__builtin_memset(rec->ns, 0, sizeof(rec->ns));
	return rec;
}

/* A filtered process's children are traced too (a launcher's workers), as
 * `perf record --inherit` does. */
static __always_inline void gn_follow_child(__u32 child_tgid)
{
	if (gn_filter_pids && gn_follow_forks) {
		__u8 one = 1;
		bpf_map_update_elem(&gn_pids, &child_tgid, &one, BPF_ANY);
	}
}

/* task_newtask, not sched_process_fork: it carries the clone flags (thread or
 * process), and it is the classic twin's event too, so exactly one of the two
 * programs runs. With one on sched_process_fork and the other on
 * task_newtask, both attached and every new task was recorded twice; the
 * trace processor then made two threads of it, one left runnable for ever.
 * It fires in the parent, after the child's ids are set (copy_process). */
SEC("tp_btf/task_newtask")
int BPF_PROG(gn_task_newtask, struct task_struct *child, unsigned long clone_flags)
{
	struct task_struct *parent = bpf_get_current_task_btf();
	if (!gn_task_selected(parent))
		return 0;
	bool is_thread = clone_flags & GN_CLONE_THREAD;
	__u32 parent_tgid = parent->tgid;
	__u32 child_tid = child->pid;
	__u32 child_tgid = is_thread ? parent_tgid : child_tid;
	if (!is_thread)
		gn_follow_child(child_tgid);
	/* Classic twins of other events (where BTF lacks them) select by tid. */
	if (gn_filtering() && (is_thread || gn_follow_forks || gn_cgroup_id))
		gn_remember_tid(child_tid);
	if (!gn_cpu_allowed(bpf_get_smp_processor_id()))
		return 0;
	__u64 wake;
	struct gn_process_fork *rec = gn_reserve_fork(parent_tgid, child_tid, child_tgid, is_thread,
						      parent->comm, child->comm, &wake);
	if (!rec)
		return 0;
	gn_fill_pidns(rec, child);
	gn_submit(rec, wake);
	return 0;
}

SEC("tracepoint/task/task_newtask")
int gn_tp_task_newtask(struct trace_event_raw_task_newtask *ctx)
{
	if (!gn_current_selected())
		return 0;
	__u64 id = bpf_get_current_pid_tgid();
	__u32 parent_tgid = id >> 32;
	bool is_thread = ctx->clone_flags & GN_CLONE_THREAD;
	__u32 child_tgid = is_thread ? parent_tgid : (__u32)ctx->pid;
	if (!is_thread)
		gn_follow_child(child_tgid);
	/* A thread of a selected process is selected; a child process is when
	 * forks are followed, or by its cgroup, which it inherits. */
	if (gn_filtering() && (is_thread || gn_follow_forks || gn_cgroup_id))
		gn_remember_tid(ctx->pid);
	if (!gn_cpu_allowed(bpf_get_smp_processor_id()))
		return 0;
	char parent_comm[GN_TASK_COMM_LEN];
	bpf_get_current_comm(parent_comm, sizeof(parent_comm));
	__u64 wake;
	struct gn_process_fork *rec = gn_reserve_fork(parent_tgid, ctx->pid, child_tgid, is_thread,
						      parent_comm, ctx->comm, &wake);
	if (!rec)
		return 0;
	/* Only the child's host pid is in this event: its namespaces stay
	 * unknown (the recorder falls back to /proc for it). */
	rec->ns_level = GN_PIDNS_UNKNOWN;
	rec->ns_count = 0;
	gn_submit(rec, wake);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(gn_sched_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	if (!gn_cpu_allowed(bpf_get_smp_processor_id()) || !gn_task_selected(p))
		return 0;
	__u64 wake;
	struct gn_process_exec *rec = GN_RESERVE(struct gn_process_exec, GN_REC_PROCESS_EXEC, &wake);
	if (!rec)
		return 0;
	rec->tgid = BPF_CORE_READ(p, tgid);
	rec->old_tid = old_pid;
	bpf_probe_read_kernel(rec->comm, sizeof(rec->comm), p->comm);
	const char *filename = BPF_CORE_READ(bprm, filename);
	bpf_probe_read_kernel_str(rec->filename, sizeof(rec->filename), filename);
	gn_submit(rec, wake);
	return 0;
}

SEC("tracepoint/sched/sched_process_exec")
int gn_tp_sched_exec(struct trace_event_raw_sched_process_exec *ctx)
{
	if (!gn_cpu_allowed(bpf_get_smp_processor_id()) || !gn_current_selected())
		return 0;
	__u64 wake;
	struct gn_process_exec *rec = GN_RESERVE(struct gn_process_exec, GN_REC_PROCESS_EXEC, &wake);
	if (!rec)
		return 0;
	rec->tgid = bpf_get_current_pid_tgid() >> 32;
	rec->old_tid = ctx->old_pid;
	bpf_get_current_comm(rec->comm, sizeof(rec->comm));
	__u32 loc = ctx->__data_loc_filename;
	bpf_probe_read_kernel_str(rec->filename, sizeof(rec->filename), (char *)ctx + (loc & 0xffff));
	gn_submit(rec, wake);
	return 0;
}

static __always_inline void gn_emit_exit(__u32 tgid, __s32 prio)
{
	__u64 wake;
	struct gn_process_exit *rec = GN_RESERVE(struct gn_process_exit, GN_REC_PROCESS_EXIT, &wake);
	if (!rec)
		return;
	rec->tgid = tgid;
	rec->prio = prio;
	bpf_get_current_comm(rec->comm, sizeof(rec->comm));
	gn_submit(rec, wake);
}

/* sched_process_exit fires in the exiting task's own context. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(gn_sched_exit, struct task_struct *p)
{
	if (gn_filtering()) {
		__u32 tid = p->pid;
		bpf_map_delete_elem(&gn_tids, &tid);
	}
	if (!gn_cpu_allowed(bpf_get_smp_processor_id()) || !gn_task_selected(p))
		return 0;
	gn_emit_exit(BPF_CORE_READ(p, tgid), BPF_CORE_READ(p, prio));
	return 0;
}

SEC("tracepoint/sched/sched_process_exit")
int gn_tp_sched_exit(struct trace_event_raw_sched_process_template *ctx)
{
	if (gn_filtering()) {
		__u32 tid = (__u32)bpf_get_current_pid_tgid();
		bpf_map_delete_elem(&gn_tids, &tid);
	}
	if (!gn_cpu_allowed(bpf_get_smp_processor_id()) || !gn_current_selected_remember(false))
		return 0;
	gn_emit_exit(bpf_get_current_pid_tgid() >> 32, ctx->prio);
	return 0;
}

static __always_inline void gn_emit_rename(__u32 tid, __u32 tgid, const char *oldcomm,
					   const char *newcomm, bool new_is_str)
{
	__u64 wake;
	struct gn_task_rename *rec = GN_RESERVE(struct gn_task_rename, GN_REC_TASK_RENAME, &wake);
	if (!rec)
		return;
	rec->tid = tid;
	rec->tgid = tgid;
	bpf_probe_read_kernel(rec->oldcomm, sizeof(rec->oldcomm), oldcomm);
	if (new_is_str)
		bpf_probe_read_kernel_str(rec->newcomm, sizeof(rec->newcomm), newcomm);
	else
		bpf_probe_read_kernel(rec->newcomm, sizeof(rec->newcomm), newcomm);
	gn_submit(rec, wake);
}

SEC("tp_btf/task_rename")
int BPF_PROG(gn_task_rename, struct task_struct *task, const char *comm)
{
	if (!gn_cpu_allowed(bpf_get_smp_processor_id()) || !gn_task_selected(task))
		return 0;
	gn_emit_rename(BPF_CORE_READ(task, pid), BPF_CORE_READ(task, tgid), task->comm, comm, true);
	return 0;
}

SEC("tracepoint/task/task_rename")
int gn_tp_task_rename(struct trace_event_raw_task_rename *ctx)
{
	if (!gn_cpu_allowed(bpf_get_smp_processor_id()))
		return 0;
	if (gn_filtering() && !gn_current_selected() && !gn_id_selected(ctx->pid))
		return 0;
	gn_emit_rename(ctx->pid, 0, ctx->oldcomm, ctx->newcomm, false);
	return 0;
}
