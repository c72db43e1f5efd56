// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The tests' independent count: on the same tracepoints as the recorder, it
 * counts the context switches and wakings of one process, per CPU, and each
 * of its threads' switch-ins. It shares nothing with bpf/ but, optionally,
 * the recording's gate (so that a recording that ends by itself, on a full
 * disk, is compared over its own window). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define ORACLE_MAX_CPUS 1024

const volatile __u32 target_tgid = 0;
const volatile bool use_gate = false;

__u64 switches[ORACLE_MAX_CPUS] = {};
__u64 wakings[ORACLE_MAX_CPUS] = {};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u64);
} switch_ins SEC(".maps");

/* Tasks of other processes switched in right after one of the process's
 * threads (the switch out of a selected thread names its successor). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} successors SEC(".maps");

/* Reused from the recorder when use_gate is set: non-zero while closed. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} gate SEC(".maps");

static __always_inline bool counting(void)
{
	if (!use_gate)
		return true;
	__u32 zero = 0;
	__u32 *closed = bpf_map_lookup_elem(&gate, &zero);
	return !(closed && *closed);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(oracle_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	if (prev->tgid != target_tgid && next->tgid != target_tgid)
		return 0;
	if (!counting())
		return 0;
	__u32 cpu = bpf_get_smp_processor_id();
	__sync_fetch_and_add(&switches[cpu & (ORACLE_MAX_CPUS - 1)], 1);
	__u32 tid = next->pid;
	void *per_tid = next->tgid == target_tgid ? (void *)&switch_ins : (void *)&successors;
	__u64 one = 1, *n = bpf_map_lookup_elem(per_tid, &tid);
	if (n)
		__sync_fetch_and_add(n, 1);
	else
		bpf_map_update_elem(per_tid, &tid, &one, BPF_NOEXIST);
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(oracle_waking, struct task_struct *p)
{
	if (p->tgid != target_tgid || !counting())
		return 0;
	__u32 cpu = bpf_get_smp_processor_id();
	__sync_fetch_and_add(&wakings[cpu & (ORACLE_MAX_CPUS - 1)], 1);
	return 0;
}
