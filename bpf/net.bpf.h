/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Kernel-side helpers the network collectors share: device identity, the
 * per-packet switch and device filter, per-CPU aggregate updates and the
 * device-name map. */
#ifndef GPUNOISE_NET_BPF_H
#define GPUNOISE_NET_BPF_H

#include "common.bpf.h"
#include "net.h"
#include "net_packets.bpf.h"

/* Aggregate updates that found their map full, per CPU: the aggregates
 * undercount by this much (reported per map, not as lost events). */
__u64 gn_agg_full[GN_MAX_CPUS] = {};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, struct gn_net_dev);
	__type(value, struct gn_net_name);
} gn_net_names SEC(".maps");

/* tp_btf programs load through BTF-typed pointers directly (the verifier
 * turns a fault into zero, and libbpf relocates the offsets); the classic
 * twins must go through bpf_probe_read_kernel. `btf` is a literal at every
 * call site, so clang keeps only one of the two forms. */
#define GN_LOAD(btf, ptr, field) ((btf) ? (ptr)->field : BPF_CORE_READ(ptr, field))

static __always_inline struct gn_net_dev gn_dev_id(bool btf, struct net_device *dev)
{
	struct gn_net_dev id = {};
	if (!dev)
		return id;
	id.ifindex = GN_LOAD(btf, dev, ifindex);
	struct net *net = GN_LOAD(btf, dev, nd_net.net);
	if (net)
		id.netns = GN_LOAD(btf, net, ns.inum);
	return id;
}

static __always_inline void gn_count_agg_full(void)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__sync_fetch_and_add(&gn_agg_full[cpu & (GN_MAX_CPUS - 1)], 1);
}

/* This CPU's value for `key`, created zeroed when missing. `*created` tells
 * the caller to remember the device's name (once per key, not per packet). */
static __always_inline void *gn_agg_slot(void *map, const void *key, const void *zero,
					 bool *created)
{
	void *val = bpf_map_lookup_elem(map, key);
	if (val)
		return val;
	bpf_map_update_elem(map, key, zero, BPF_NOEXIST);
	val = bpf_map_lookup_elem(map, key);
	if (!val)
		gn_count_agg_full();
	else
		*created = true;
	return val;
}

static __always_inline void gn_remember_dev_name(const struct gn_net_dev *id,
						 struct net_device *dev)
{
	if (!dev || !id->ifindex)
		return;
	struct gn_net_name name = {};
	bpf_probe_read_kernel_str(name.name, sizeof(name.name), dev->name);
	bpf_map_update_elem(&gn_net_names, id, &name, BPF_NOEXIST);
}

/* Reads `dev`'s name into `out` and says whether records for it are wanted. */
static __always_inline bool gn_dev_selected(struct net_device *dev, char out[GN_NET_NAME_LEN])
{
	if (!gn_net_packets)
		return false;
	if (dev)
		bpf_probe_read_kernel_str(out, GN_NET_NAME_LEN, dev->name);
	return gn_dev_name_selected(out);
}

/* Linux 6.2+: turns a kernel address into a read-only BTF pointer, whose
 * loads are plain loads (a fault reads zero) instead of a helper call. */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

/* Packets in an skb: GRO-merged and GSO skbs carry several (gso_segs). The
 * shared info sits past the data (skb->head + skb->end), where no BTF field
 * leads: tp_btf programs cast the address, a plain load on every packet
 * (W2 UDP and TCP run this twice a packet); the classic twins, and kernels
 * without the kfunc, read it through bpf_probe_read_kernel. */
static __always_inline __u32 gn_skb_segs(bool btf, struct sk_buff *skb)
{
	unsigned char *head = GN_LOAD(btf, skb, head);
	__u32 end = GN_LOAD(btf, skb, end);
	struct skb_shared_info *shinfo = (void *)(head + end);
	__u16 segs = 0;
	if (btf && bpf_rdonly_cast) {
		struct skb_shared_info *ro =
			bpf_rdonly_cast(shinfo, bpf_core_type_id_kernel(struct skb_shared_info));
		segs = ro->gso_segs;
	} else {
		bpf_probe_read_kernel(&segs, sizeof(segs), &shinfo->gso_segs);
	}
	return segs ? segs : 1;
}

#endif /* GPUNOISE_NET_BPF_H */
