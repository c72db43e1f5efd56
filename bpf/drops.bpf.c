// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* drops collector: skb:kfree_skb, the kernel freeing a packet it did not
 * deliver, counted per device, drop reason and code location in a per-CPU
 * map. Reason numbers are those of the running kernel's enum
 * skb_drop_reason; user space names them from the kernel's BTF, because the
 * enum grows and is renumbered between releases.
 *
 * The device is skb->dev. A packet dropped where it no longer has one (after
 * the socket layer reused the field) is counted under its socket's network
 * namespace with ifindex 0. With `--events net-packets` each drop is also a
 * ring record. */
#include "agg_cache.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define GN_SKB_CONSUMED 1 /* SKB_CONSUMED: a normal free, not a drop */

/* tp_btf arity (user space reads the prototype from BTF): Linux 5.17 added
 * the reason ("net: skb: introduce kfree_skb_reason()"), 6.11 the receiving
 * socket ("net: add rx_sk to trace_kfree_skb"). */
const volatile bool gn_kfree_has_reason = true;
const volatile bool gn_kfree_has_rx_sk = true;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	/* Allocated as keys appear: preallocated, every key's value for
	 * every possible CPU is over 100 MiB a map on a 256-CPU node. */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct gn_drop_key);
	__type(value, struct gn_drop_val);
} gn_drop_stats SEC(".maps");

GN_AGG_CACHE(gn_drop_cache, gn_drop_cache_slot);

/* Rare path (no device), and rx_sk arrives as a plain number from ctx[], so
 * it is always read through bpf_probe_read_kernel. */
static __always_inline __u32 gn_sock_netns(struct sock *sk)
{
	if (!sk)
		return 0;
	return BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum);
}

static __always_inline void gn_drop(bool btf, struct sk_buff *skb, __u64 location, __u32 reason,
				    struct sock *rx_sk, __u16 protocol)
{
	if (reason == GN_SKB_CONSUMED)
		return;
	if (!gn_cpu_allowed(bpf_get_smp_processor_id()))
		return;
	struct net_device *dev = GN_LOAD(btf, skb, dev);
	struct gn_drop_key key = {};
	key.dev = gn_dev_id(btf, dev);
	if (!key.dev.ifindex) {
		key.dev.ifindex = 0;
		struct sock *sk = rx_sk ? rx_sk : BPF_CORE_READ(skb, sk);
		key.dev.netns = gn_sock_netns(sk);
		dev = NULL;
	}
	key.reason = reason;
	key.location = location;
	__u32 len = GN_LOAD(btf, skb, len);

	static const struct gn_drop_val zero = {};
	bool created = false;
	struct gn_drop_val *val = gn_agg_cached(&gn_drop_cache, &gn_drop_stats, &key, GN_WORDS(key), &zero,
						GN_WORDS(zero), gn_drop_key_mix(&key), &created);
	if (val) {
		/* Per-CPU slot. kfree_skb can nest (a hard irq freeing an skb
		 * while a softirq frees another): the rare lost increment is
		 * preferred to an atomic on every drop. */
		val->packets += 1;
		val->bytes += len;
		if (created)
			gn_remember_dev_name(&key.dev, dev);
	}

	char name[GN_NET_NAME_LEN] = {};
	if (!gn_dev_selected(dev, name))
		return;
	__u64 wake;
	struct gn_skb_drop_rec *rec = GN_RESERVE(struct gn_skb_drop_rec, GN_REC_SKB_DROP, &wake);
	if (!rec)
		return;
	rec->dev = key.dev;
	rec->skbaddr = (__u64)skb;
	rec->location = location;
	rec->reason = reason;
	rec->protocol = protocol;
	rec->pad = 0;
	__builtin_memcpy(rec->name, name, GN_NET_NAME_LEN);
	gn_submit(rec, wake);
}

SEC("tp_btf/kfree_skb")
int BPF_PROG(gn_kfree_skb, struct sk_buff *skb, void *location)
{
	/* The reason and socket are read from ctx only where the prototype has
	 * them, so the verifier never sees an out-of-range argument. */
	__u32 reason = gn_kfree_has_reason ? (__u32)ctx[2] : 0;
	struct sock *rx_sk = gn_kfree_has_rx_sk ? (struct sock *)ctx[3] : NULL;
	__u16 protocol = __builtin_bswap16(skb->protocol);
	gn_drop(true, skb, (__u64)location, reason, rx_sk, protocol);
	return 0;
}

SEC("tracepoint/skb/kfree_skb")
int gn_tp_kfree_skb(struct trace_event_raw_kfree_skb *ctx)
{
	__u32 reason = bpf_core_field_exists(ctx->reason) ? BPF_CORE_READ(ctx, reason) : 0;
	struct sock *rx_sk = bpf_core_field_exists(ctx->rx_sk) ? BPF_CORE_READ(ctx, rx_sk) : NULL;
	gn_drop(false, ctx->skbaddr, (__u64)ctx->location, reason, rx_sk, ctx->protocol);
	return 0;
}
