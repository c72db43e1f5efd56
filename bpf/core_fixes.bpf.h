/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Shadow types for kernel fields that moved or changed type. */
#ifndef GPUNOISE_CORE_FIXES_BPF_H
#define GPUNOISE_CORE_FIXES_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>

/* Linux 5.14 ("sched: Change task_struct::state") renamed task_struct::state to __state. */
struct task_struct___pre_5_14 {
	long int state;
} __attribute__((preserve_access_index));

static __always_inline unsigned int gn_task_state(struct task_struct *task)
{
	if (bpf_core_field_exists(task->__state))
		return BPF_CORE_READ(task, __state);
	return BPF_CORE_READ((struct task_struct___pre_5_14 *)task, state);
}

/* cgroup::ancestors[] (pointers) replaced ancestor_ids[] in Linux 6.1
 * ("cgroup: Replace cgroup->ancestor_ids[] with ->ancestors[]"). */
struct cgroup___pre_6_1 {
	int level;
	u64 ancestor_ids[];
} __attribute__((preserve_access_index));

/* The id of `task`'s cgroup-v2 ancestor at `level`, or 0. */
static __always_inline __u64 gn_task_cgroup_ancestor_id(struct task_struct *task, int level)
{
	struct cgroup *cgrp = BPF_CORE_READ(task, cgroups, dfl_cgrp);
	if (!cgrp)
		return 0;
	int cur = BPF_CORE_READ(cgrp, level);
	if (level < 0 || level > cur)
		return 0;
	if (bpf_core_field_exists(cgrp->ancestors)) {
		struct cgroup *anc = NULL;
		bpf_core_read(&anc, sizeof(anc), &cgrp->ancestors[level]);
		if (!anc)
			return 0;
		return BPF_CORE_READ(anc, kn, id);
	}
	__u64 id = 0;
	struct cgroup___pre_6_1 *old = (void *)cgrp;
	bpf_core_read(&id, sizeof(id), &old->ancestor_ids[level]);
	return id;
}

/* Linux 5.16 moved the CPU number from task_struct::cpu into thread_info
 * (THREAD_INFO_IN_TASK architectures). */
struct task_struct___pre_5_16 {
	unsigned int cpu;
} __attribute__((preserve_access_index));

/* `task` must be a typed pointer (a tp_btf argument): the field is read with
 * a plain load, not a helper call, on the hottest wakeup path. */
static __always_inline int gn_task_cpu(struct task_struct *task)
{
	if (bpf_core_field_exists(task->thread_info.cpu))
		return task->thread_info.cpu;
	return ((struct task_struct___pre_5_16 *)task)->cpu;
}

#endif /* GPUNOISE_CORE_FIXES_BPF_H */
