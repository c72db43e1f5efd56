// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* napi collector: every NAPI poll, counted per NAPI instance (device, queue,
 * IRQ) and per CPU in a per-CPU map: polls, packets processed, and polls that
 * used the whole budget. A poll that uses its whole budget leaves work behind,
 * so net_rx_action polls again, and after 2 ms or netdev_budget packets hands
 * the rest to ksoftirqd: a run of full-budget polls is the signature of an RX
 * storm (net/core/dev.c: net_rx_action, napi_poll).
 *
 * With `--events net-packets` each poll is also a ring record (filterable by
 * device name). dql_stall_detected (TX byte queue limits saw a stall; Linux
 * 6.10+) lives in the napi tracepoint category and is always recorded: it is
 * rare and each one matters. */
#include "agg_cache.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	/* Allocated as keys appear: preallocated, every key's value for
	 * every possible CPU is over 100 MiB a map on a 256-CPU node. */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct gn_napi_key);
	__type(value, struct gn_napi_val);
} gn_napi_stats SEC(".maps");

GN_AGG_CACHE(gn_napi_cache, gn_napi_cache_slot);

static __always_inline void gn_do_napi_poll(bool btf, struct napi_struct *napi, int work, int budget)
{
	if (!gn_cpu_allowed(bpf_get_smp_processor_id()))
		return;
	struct net_device *dev = GN_LOAD(btf, napi, dev);
	struct gn_napi_key key = {};
	key.dev = gn_dev_id(btf, dev);
	key.napi_id = GN_LOAD(btf, napi, napi_id);
	/* napi_struct::index and ::irq arrived with the per-NAPI config and
	 * netif_napi_set_irq (Linux 6.9-6.13); older kernels leave them -1. */
	key.queue = bpf_core_field_exists(napi->index) ? GN_LOAD(btf, napi, index) : -1;
	key.irq = bpf_core_field_exists(napi->irq) ? GN_LOAD(btf, napi, irq) : -1;

	static const struct gn_napi_val zero = {};
	bool created = false;
	struct gn_napi_val *val = gn_agg_cached(&gn_napi_cache, &gn_napi_stats, &key, GN_WORDS(key), &zero,
						GN_WORDS(zero), gn_napi_key_mix(&key), &created);
	if (val) {
		/* Per-CPU slot, and napi_poll does not nest on a CPU: plain adds. */
		val->polls += 1;
		val->work += work > 0 ? work : 0;
		if (work >= budget && budget > 0)
			val->full_budget += 1;
		if (created)
			gn_remember_dev_name(&key.dev, dev);
	}

	char name[GN_NET_NAME_LEN] = {};
	if (!gn_dev_selected(dev, name))
		return;
	__u64 wake;
	struct gn_napi_poll_rec *rec = GN_RESERVE(struct gn_napi_poll_rec, GN_REC_NAPI_POLL, &wake);
	if (!rec)
		return;
	rec->dev = key.dev;
	rec->napi_id = key.napi_id;
	rec->queue = key.queue;
	rec->work = work;
	rec->budget = budget;
	__builtin_memcpy(rec->name, name, sizeof(rec->name));
	gn_submit(rec, wake);
}

SEC("tp_btf/napi_poll")
int BPF_PROG(gn_napi_poll, struct napi_struct *napi, int work, int budget)
{
	gn_do_napi_poll(true, napi, work, budget);
	return 0;
}

SEC("tracepoint/napi/napi_poll")
int gn_tp_napi_poll(struct trace_event_raw_napi_poll *ctx)
{
	gn_do_napi_poll(false, ctx->napi, ctx->work, ctx->budget);
	return 0;
}

/* `hist` is read with bpf_probe_read_kernel in both forms: the classic
 * context may not be dereferenced through a derived pointer. */
static __always_inline void gn_emit_dql_stall(__u16 thrs, __u32 len, __u64 last_reap,
					      __u64 hist_head, __u64 now, const void *hist)
{
	if (!gn_cpu_allowed(bpf_get_smp_processor_id()))
		return;
	__u64 wake;
	struct gn_dql_stall_rec *rec = GN_RESERVE(struct gn_dql_stall_rec, GN_REC_DQL_STALL, &wake);
	if (!rec)
		return;
	rec->thrs = thrs;
	rec->len = len;
	rec->last_reap = last_reap;
	rec->hist_head = hist_head;
	rec->now = now;
	bpf_probe_read_kernel(rec->hist, sizeof(rec->hist), hist);
	gn_submit(rec, wake);
}

SEC("tp_btf/dql_stall_detected")
int BPF_PROG(gn_dql_stall, unsigned short thrs, unsigned int len, unsigned long last_reap,
	     unsigned long hist_head, unsigned long now, unsigned long *hist)
{
	gn_emit_dql_stall(thrs, len, last_reap, hist_head, now, hist);
	return 0;
}

SEC("tracepoint/napi/dql_stall_detected")
int gn_tp_dql_stall(struct trace_event_raw_dql_stall_detected *ctx)
{
	gn_emit_dql_stall(ctx->thrs, ctx->len, ctx->last_reap, ctx->hist_head, ctx->now, ctx->hist);
	return 0;
}
