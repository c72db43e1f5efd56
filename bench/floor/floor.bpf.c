/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The floor of bench/run.py: the least a BPF tracer can do on the
 * tracepoints `gpunoise record` uses by default. Whatever gpunoise costs
 * above it is the recorder's own share (issue 18).
 *
 * One program per attach type, attached to every tracepoint: raw_tp has the
 * same entry path as tp_btf (__bpf_trace_run), and it attaches by name, so
 * one program serves all events. The classic program goes through perf's
 * tracepoint glue like gpunoise's classic twins.
 *
 * Two variants, chosen before load: count (one per-CPU increment), and store
 * (also reads the boot-time clock and writes a record-sized value per CPU,
 * which is the work every record needs before any transport). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile bool floor_store = false;

/* As large as gpunoise's sched_switch record (bpf/sched.h). */
struct floor_record {
	__u64 ts;
	__u64 words[5];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} floor_count SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct floor_record);
} floor_last SEC(".maps");

static __always_inline int floor_hit(void)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&floor_count, &zero);
	if (n)
		*n += 1; /* per-CPU: a nested program on this CPU finishes first */
	if (floor_store) {
		struct floor_record *r = bpf_map_lookup_elem(&floor_last, &zero);
		if (r) {
			r->ts = bpf_ktime_get_boot_ns();
			r->words[0] = bpf_get_current_pid_tgid();
			r->words[1] = bpf_get_smp_processor_id();
			r->words[2] = n ? *n : 0;
		}
	}
	return 0;
}

SEC("raw_tp")
int floor_raw(void *ctx)
{
	return floor_hit();
}

SEC("tracepoint")
int floor_classic(void *ctx)
{
	return floor_hit();
}
