/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Kernel side of the focus set (bpf/focus.h). One hash holds the tgids of
 * the focus processes and the tids of their threads: tp_btf programs look
 * tasks up by tgid, classic tracepoints (which give only a tid for tasks
 * other than current) by tid. User space refreshes both. */
#ifndef GPUNOISE_FOCUS_BPF_H
#define GPUNOISE_FOCUS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "focus.h"

#define GN_PF_KTHREAD 0x00200000 /* include/linux/sched.h */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GN_FOCUS_MAX);
	__type(key, __u32);
	__type(value, __u8);
} gn_focus SEC(".maps");

/* Written by user space through the mmap'ed .bss when the focus set becomes
 * empty or not: with no focus, programs skip the lookups. */
volatile __u32 gn_focus_enabled = 0;

static __always_inline bool gn_id_focus(__u32 id)
{
	return gn_focus_enabled && id && bpf_map_lookup_elem(&gn_focus, &id);
}

static __always_inline bool gn_current_focus(void)
{
	return gn_id_focus(bpf_get_current_pid_tgid() >> 32);
}

/* The class of the current task; `tgid` of current. */
static __always_inline __u32 gn_current_class(void)
{
	__u64 id = bpf_get_current_pid_tgid();
	if ((__u32)id == 0)
		return GN_CLASS_IDLE;
	if (gn_id_focus(id >> 32))
		return GN_CLASS_FOCUS;
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	if (BPF_CORE_READ(task, flags) & GN_PF_KTHREAD)
		return GN_CLASS_KERNEL;
	return GN_CLASS_OTHER;
}

#endif /* GPUNOISE_FOCUS_BPF_H */
