/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* sched collector records (bpf/sched.bpf.c <-> userspace/collect). */
#ifndef GPUNOISE_BPF_SCHED_H
#define GPUNOISE_BPF_SCHED_H

#include "record.h"

/* header.tid is prev's tid. prev_state is already in the encoding the
 * sched_switch tracepoint reports (__trace_sched_switch_state), which is
 * what Perfetto's compact sched expects. */
struct gn_sched_switch {
	struct gn_header hdr;
	__u32 prev_tgid;
	__s32 prev_state;
	__u32 next_tid;
	__u32 next_tgid;
	__s32 next_prio;
	__u32 pad;
	char next_comm[GN_TASK_COMM_LEN];
};

/* Used for sched_waking and sched_wakeup_new. */
struct gn_sched_wake {
	struct gn_header hdr;
	__u32 tid;
	__u32 tgid;
	__s32 prio;
	__s32 target_cpu;
	char comm[GN_TASK_COMM_LEN];
};

struct gn_sched_migrate {
	struct gn_header hdr;
	__u32 tid;
	__u32 tgid;
	__s32 prio;
	__s32 orig_cpu;
	__s32 dest_cpu;
	__u32 pad;
	char comm[GN_TASK_COMM_LEN];
};

/* The child's ids in one pid namespace (struct upid in struct pid's
 * numbers[level]): what getpid()/gettid() return to code in that namespace,
 * and the namespace's inode (/proc/PID/ns/pid). */
struct gn_pidns_ids {
	__u32 inum;
	__u32 level;
	__u32 tid;
	__u32 tgid;
};

/* Levels recorded per fork, innermost first: a container in a container is
 * level 2; deeper ones keep their innermost four. */
#define GN_PIDNS_LEVELS 4
/* ns_level when the program could not read the child's namespaces (the
 * classic twin sees only its host pid). */
#define GN_PIDNS_UNKNOWN 0xffffffffu

/* fork: hdr.tid is the parent thread. is_thread tells clone(CLONE_THREAD)
 * from a new process; Perfetto needs it to bind the new tid to a process.
 * For a child in a pid namespace other than the host's (ns_level > 0), ns[]
 * maps its host ids to the ids code inside sees, so GPU fragments written
 * there (namespace-local ids) land on the host thread. */
struct gn_process_fork {
	struct gn_header hdr;
	__u32 parent_tgid;
	__u32 child_tid;
	__u32 child_tgid;
	__u32 is_thread;
	char parent_comm[GN_TASK_COMM_LEN];
	char child_comm[GN_TASK_COMM_LEN];
	__u32 ns_level;
	__u32 ns_count; /* entries of ns[] filled */
	struct gn_pidns_ids ns[GN_PIDNS_LEVELS];
};

#define GN_EXEC_FILENAME_LEN 128
struct gn_process_exec {
	struct gn_header hdr;
	__u32 tgid;
	__u32 old_tid;
	char comm[GN_TASK_COMM_LEN];
	char filename[GN_EXEC_FILENAME_LEN];
};

struct gn_process_exit {
	struct gn_header hdr;
	__u32 tgid;
	__s32 prio;
	char comm[GN_TASK_COMM_LEN];
};

struct gn_task_rename {
	struct gn_header hdr;
	__u32 tid;
	__u32 tgid;
	char oldcomm[GN_TASK_COMM_LEN];
	char newcomm[GN_TASK_COMM_LEN];
};

#endif /* GPUNOISE_BPF_SCHED_H */
