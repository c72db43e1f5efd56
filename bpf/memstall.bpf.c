// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* memstall collector: how long tasks stall in memory reclaim and compaction.
 * A begin tracepoint stores its time by (tid, kind); the end tracepoint
 * writes the whole stall into the .bss log at the next index (user space
 * follows the index, bpf/memstall.h). Reclaim runs in the allocating task's
 * own context, so a stall is the time that task could not go on.
 *
 * Each event has a tp_btf program and a classic tracepoint twin; user space
 * autoloads one of the two. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "memstall.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

__u64 gn_ms_next = 0;           /* stalls written so far */
__u64 gn_ms_begin_full = 0;     /* begins the hash had no room for */
struct gn_memstall gn_ms_log[GN_MS_LOG] = {};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);   /* tid << 2 | kind */
	__type(value, __u64); /* begin */
} gn_ms_begin SEC(".maps");

static __always_inline __u64 gn_ms_key(__u32 kind)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	return ((__u64)tid << 2) | kind;
}

static __always_inline void gn_ms_in(__u32 kind)
{
	__u64 key = gn_ms_key(kind);
	__u64 now = bpf_ktime_get_boot_ns();
	if (bpf_map_update_elem(&gn_ms_begin, &key, &now, BPF_ANY) != 0)
		__sync_fetch_and_add(&gn_ms_begin_full, 1);
}

static __always_inline void gn_ms_log_stall(__u32 kind, __u64 begin, __u64 end, __u64 value)
{
	__u64 index = __sync_fetch_and_add(&gn_ms_next, 1);
	struct gn_memstall *e = &gn_ms_log[index & (GN_MS_LOG - 1)];
	e->seq = 0; /* being written */
	e->begin = begin;
	e->end = end;
	e->value = value;
	e->tid = (__u32)bpf_get_current_pid_tgid();
	e->kind = kind;
	e->cpu = bpf_get_smp_processor_id();
	/* No fences in BPF: the reader checks seq before and after copying the
	 * entry, which is enough on x86 (stores are not reordered). */
	e->seq = index + 1;
}

static __always_inline void gn_ms_out(__u32 kind, __u64 value)
{
	__u64 key = gn_ms_key(kind);
	__u64 *begin = bpf_map_lookup_elem(&gn_ms_begin, &key);
	if (!begin)
		return; /* attached mid-stall */
	__u64 b = *begin;
	bpf_map_delete_elem(&gn_ms_begin, &key);
	gn_ms_log_stall(kind, b, bpf_ktime_get_boot_ns(), value);
}

SEC("tp_btf/mm_vmscan_direct_reclaim_begin")
int BPF_PROG(gn_ms_direct_in, int order, gfp_t gfp)
{
	gn_ms_in(GN_MS_DIRECT_RECLAIM);
	return 0;
}

SEC("tp_btf/mm_vmscan_direct_reclaim_end")
int BPF_PROG(gn_ms_direct_out, unsigned long nr_reclaimed)
{
	gn_ms_out(GN_MS_DIRECT_RECLAIM, nr_reclaimed);
	return 0;
}

SEC("tp_btf/mm_vmscan_memcg_reclaim_begin")
int BPF_PROG(gn_ms_memcg_in, int order, gfp_t gfp)
{
	gn_ms_in(GN_MS_MEMCG_RECLAIM);
	return 0;
}

SEC("tp_btf/mm_vmscan_memcg_reclaim_end")
int BPF_PROG(gn_ms_memcg_out, unsigned long nr_reclaimed)
{
	gn_ms_out(GN_MS_MEMCG_RECLAIM, nr_reclaimed);
	return 0;
}

SEC("tp_btf/mm_compaction_begin")
int BPF_PROG(gn_ms_compact_in)
{
	gn_ms_in(GN_MS_COMPACTION);
	return 0;
}

SEC("tp_btf/mm_compaction_end")
int BPF_PROG(gn_ms_compact_out, void *cc, unsigned long zone_start, unsigned long zone_end, bool sync, int status)
{
	gn_ms_out(GN_MS_COMPACTION, (__u64)(__s64)status);
	return 0;
}

/* Fires when a throttled reclaimer goes on: the stall is the delay it reports. */
static __always_inline void gn_ms_throttled(int usec_delayed, int reason)
{
	__u64 now = bpf_ktime_get_boot_ns();
	__u64 d = usec_delayed > 0 ? (__u64)usec_delayed * 1000 : 0;
	gn_ms_log_stall(GN_MS_THROTTLED, now > d ? now - d : now, now, (__u64)reason);
}

SEC("tp_btf/mm_vmscan_throttled")
int BPF_PROG(gn_ms_throttle, int nid, int usec_timeout, int usec_delayed, int reason)
{
	gn_ms_throttled(usec_delayed, reason);
	return 0;
}

SEC("tracepoint/vmscan/mm_vmscan_direct_reclaim_begin")
int gn_tms_direct_in(void *ctx)
{
	gn_ms_in(GN_MS_DIRECT_RECLAIM);
	return 0;
}

SEC("tracepoint/vmscan/mm_vmscan_direct_reclaim_end")
int gn_tms_direct_out(struct trace_event_raw_mm_vmscan_direct_reclaim_end_template *ctx)
{
	gn_ms_out(GN_MS_DIRECT_RECLAIM, ctx->nr_reclaimed);
	return 0;
}

SEC("tracepoint/vmscan/mm_vmscan_memcg_reclaim_begin")
int gn_tms_memcg_in(void *ctx)
{
	gn_ms_in(GN_MS_MEMCG_RECLAIM);
	return 0;
}

SEC("tracepoint/vmscan/mm_vmscan_memcg_reclaim_end")
int gn_tms_memcg_out(struct trace_event_raw_mm_vmscan_direct_reclaim_end_template *ctx)
{
	gn_ms_out(GN_MS_MEMCG_RECLAIM, ctx->nr_reclaimed);
	return 0;
}

SEC("tracepoint/compaction/mm_compaction_begin")
int gn_tms_compact_in(void *ctx)
{
	gn_ms_in(GN_MS_COMPACTION);
	return 0;
}

SEC("tracepoint/compaction/mm_compaction_end")
int gn_tms_compact_out(struct trace_event_raw_mm_compaction_end *ctx)
{
	gn_ms_out(GN_MS_COMPACTION, (__u64)(__s64)ctx->status);
	return 0;
}

/* balance_dirty_pages() fires this just before it sleeps `pause` ms
 * (mm/page-writeback.c): the stall is that sleep, as the kernel planned it.
 * Classic only: the raw arguments differ between kernels, the format's
 * pause field (ms) does not. */
SEC("tracepoint/writeback/balance_dirty_pages")
int gn_tms_dirty(struct trace_event_raw_balance_dirty_pages *ctx)
{
	long pause = ctx->pause;
	if (pause <= 0)
		return 0;
	__u64 now = bpf_ktime_get_boot_ns();
	gn_ms_log_stall(GN_MS_DIRTY_THROTTLE, now, now + (__u64)pause * 1000000, (__u64)ctx->dirtied);
	return 0;
}

SEC("tracepoint/vmscan/mm_vmscan_throttled")
int gn_tms_throttle(struct trace_event_raw_mm_vmscan_throttled *ctx)
{
	gn_ms_throttled(ctx->usec_delayed, ctx->reason);
	return 0;
}
