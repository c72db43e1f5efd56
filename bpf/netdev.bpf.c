// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* netdev collector: packets and bytes through each device, per queue,
 * direction and CPU (per-CPU map), plus the rare events that mean a NIC or
 * its driver is in trouble.
 *
 *   net:netif_receive_skb     RX: every skb entering the stack (after GRO)
 *   net:net_dev_queue         TX by default: every skb handed to a device,
 *                             before software segmentation (one program per
 *                             GSO skb, its segments counted from gso_segs)
 *   net:net_dev_start_xmit    TX with net-packets: every skb handed to a
 *                             driver, after segmentation
 *   net:net_dev_xmit          the driver's return code (only with net-packets,
 *                             or where net_dev_start_xmit is missing)
 *   net:net_dev_xmit_timeout  the TX watchdog fired (always recorded)
 *   tcp:tcp_retransmit_skb    a TCP retransmission (always recorded)
 *   net:napi_gro_receive_*    GRO per skb (only with --events net-packets)
 *
 * Where TX is counted decides what it costs. A stack that segments in
 * software (a device without TSO: the bench's veth) hands the driver one skb
 * per MTU segment: under W2 TCP net_dev_start_xmit ran 21 times as often as
 * net_dev_queue (4.18M against 194k in 5 s), at ~50 ns a run. By default TX
 * is therefore counted at net_dev_queue, after the TX queue is picked (so
 * the queue is known) and after qdisc_pkt_len_init stored the skb's length
 * on the wire (each segment with its headers). What that count includes
 * that the device's own does not: packets a qdisc then drops (the drops
 * collector counts them, reason QDISC_DROP) and those the driver frees;
 * what it misses: skbs that skip the device layer's queueing (AF_PACKET
 * with PACKET_QDISC_BYPASS, pktgen).
 *
 * With net-packets TX is counted where the skb is handed to the driver, one
 * program per packet: a driver that drops a packet frees it and returns
 * NETDEV_TX_OK anyway, and NETDEV_TX_BUSY is a hard error outside a driver
 * bug (Documentation/networking/driver.rst), so net_dev_xmit's return code
 * adds next to nothing to a count, for a second program on every packet
 * (78-84 ns each under W2 TCP here, docs/performance.md). It runs for its
 * records and corrects the count for a requeue or an error.
 *
 * net_dev_xmit fires after the driver took the skb, which it may already have
 * freed (or handed to another CPU), so the skb is not read there: its queue
 * and segment count come from net_dev_start_xmit on the same CPU, kept on a
 * small per-CPU stack because stacked devices (vlan, bond) nest the pair. */
#include "agg_cache.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define GN_NETDEV_TX_OK 0x00
#define GN_NETDEV_TX_BUSY 0x10 /* the driver asks for a requeue: not sent, not lost */

/* Linux 6.12 ("tcp: add a new err field in tcp_retransmit_skb") added err as
 * the 3rd tp_btf argument; user space reads the prototype from BTF. */
const volatile bool gn_retransmit_has_err = true;
/* Where TX is counted (GN_TX_AT_*, bpf/net.h; user space knows before load
 * which of the tracepoints the kernel has). */
const volatile __u32 gn_tx_counted_at = GN_TX_AT_START;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	/* Allocated as keys appear: preallocated, every key's value for
	 * every possible CPU is over 100 MiB a map on a 256-CPU node. */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct gn_dev_key);
	__type(value, struct gn_dev_val);
} gn_dev_stats SEC(".maps");

GN_AGG_CACHE(gn_dev_cache, gn_dev_cache_slot);

struct gn_xmit_slot {
	__u64 skb;
	struct gn_net_dev dev;
	__s32 queue;
	__u32 segs;
};

struct gn_xmit_stack {
	__u32 depth;
	__u32 gro_open; /* napi_gro_receive_entry records not yet closed by an exit */
	struct gn_xmit_slot slot[GN_XMIT_STACK_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gn_xmit_stack);
} gn_xmit_scratch SEC(".maps");

static __always_inline struct gn_xmit_stack *gn_scratch(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&gn_xmit_scratch, &zero);
}

/* Returns true when this key was new, so the caller records the name. */
static __always_inline bool gn_count(const struct gn_dev_key *key, __u64 packets, __u64 bytes,
				     __u64 errors)
{
	static const struct gn_dev_val zero = {};
	bool created = false;
	struct gn_dev_val *val = gn_agg_cached(&gn_dev_cache, &gn_dev_stats, key, GN_WORDS(*key), &zero,
					       GN_WORDS(zero), gn_dev_key_mix(key), &created);
	if (!val)
		return false;
	/* This CPU's slot; these tracepoints run with bottom halves off and do
	 * not nest for one skb, so plain adds are enough. */
	val->packets += packets;
	val->bytes += bytes;
	val->errors += errors;
	return created;
}

/* Takes back what net_dev_start_xmit counted as handed over, on the same CPU
 * (the pair runs with bottom halves off), so this CPU's slot exists and
 * never goes below zero. */
static __always_inline void gn_uncount(const struct gn_dev_key *key, __u64 packets, __u64 bytes,
				       __u64 errors)
{
	struct gn_dev_val *val =
		gn_agg_cached_find(&gn_dev_cache, &gn_dev_stats, key, GN_WORDS(*key), gn_dev_key_mix(key));
	if (!val)
		return;
	val->packets -= packets;
	val->bytes -= bytes;
	val->errors += errors;
}

static __always_inline void gn_remember_name_str(const struct gn_net_dev *id, const char *name)
{
	if (!id->ifindex || !name)
		return;
	struct gn_net_name n = {};
	bpf_probe_read_kernel_str(n.name, sizeof(n.name), name);
	bpf_map_update_elem(&gn_net_names, id, &n, BPF_NOEXIST);
}

static __always_inline void gn_emit_pkt(__u16 kind, const struct gn_net_dev *id, const char *name,
					__u64 skb, __u32 len, __s32 rc, __s32 queue, __u32 segs)
{
	__u64 wake;
	struct gn_net_pkt_rec *rec = GN_RESERVE(struct gn_net_pkt_rec, kind, &wake);
	if (!rec)
		return;
	rec->dev = *id;
	rec->skbaddr = skb;
	rec->len = len;
	rec->rc = rc;
	rec->queue = queue;
	rec->segs = segs;
	__builtin_memcpy(rec->name, name, GN_NET_NAME_LEN);
	gn_submit(rec, wake);
}

/* ---- RX ------------------------------------------------------------------ */

static __always_inline void gn_receive(bool btf, struct sk_buff *skb)
{
	if (!gn_cpu_allowed(bpf_get_smp_processor_id()))
		return;
	struct net_device *dev = GN_LOAD(btf, skb, dev);
	struct gn_dev_key key = {};
	key.dev = gn_dev_id(btf, dev);
	key.dir = GN_NET_RX;
	/* skb_record_rx_queue stores queue + 1; 0 means "not recorded". */
	__u16 mapping = GN_LOAD(btf, skb, queue_mapping);
	key.queue = mapping ? (__s32)mapping - 1 : -1;
	__u32 len = GN_LOAD(btf, skb, len);
	__u32 segs = gn_skb_segs(btf, skb);
	/* eth_type_trans already pulled the link-layer header; device
	 * statistics count it, so add it back (once per skb). */
	__u64 bytes = len;
	__u16 mac = GN_LOAD(btf, skb, mac_header);
	if (mac != (__u16)~0U) {
		unsigned char *data = GN_LOAD(btf, skb, data);
		unsigned char *head = GN_LOAD(btf, skb, head);
		__s64 pulled = (__s64)(data - head) - mac;
		if (pulled > 0 && pulled < 256)
			bytes += pulled;
	}
	if (gn_count(&key, segs, bytes, 0))
		gn_remember_dev_name(&key.dev, dev);

	char name[GN_NET_NAME_LEN] = {};
	if (gn_dev_selected(dev, name))
		gn_emit_pkt(GN_REC_NET_RECEIVE, &key.dev, name, (__u64)skb, len, 0, key.queue, segs);
}

SEC("tp_btf/netif_receive_skb")
int BPF_PROG(gn_rx, struct sk_buff *skb)
{
	gn_receive(true, skb);
	return 0;
}

SEC("tracepoint/net/netif_receive_skb")
int gn_tp_rx(struct trace_event_raw_net_dev_template *ctx)
{
	gn_receive(false, ctx->skbaddr);
	return 0;
}

/* ---- TX ------------------------------------------------------------------ */

/* The skb's bytes on the wire: a GSO skb carries its headers once, its
 * segments each carry them. __dev_queue_xmit computed that just before the
 * tracepoint (qdisc_pkt_len_init, into the first word of skb->cb, which is
 * what qdiscs count); read only for GSO skbs, and trusted only within what
 * the segments' headers can add. */
static __always_inline __u64 gn_wire_bytes(bool btf, struct sk_buff *skb, __u32 len, __u32 segs)
{
	if (segs <= 1)
		return len;
	__u32 pkt_len = 0;
	if (btf)
		pkt_len = *(__u32 *)&skb->cb[0];
	else
		bpf_probe_read_kernel(&pkt_len, sizeof(pkt_len), &skb->cb[0]);
	if (pkt_len < len || pkt_len - len > (segs - 1) * 256)
		return len;
	return pkt_len;
}

static __always_inline void gn_do_queue(bool btf, struct sk_buff *skb)
{
	if (!gn_cpu_allowed(bpf_get_smp_processor_id()))
		return;
	struct net_device *dev = GN_LOAD(btf, skb, dev);
	struct gn_dev_key key = {};
	key.dev = gn_dev_id(btf, dev);
	/* netdev_core_pick_tx ran just before the tracepoint. */
	key.queue = GN_LOAD(btf, skb, queue_mapping);
	__u32 segs = gn_skb_segs(btf, skb);
	__u32 len = GN_LOAD(btf, skb, len);
	if (gn_tx_counted_at == GN_TX_AT_QUEUE) {
		key.dir = GN_NET_TX;
		if (gn_count(&key, segs, gn_wire_bytes(btf, skb, len, segs), 0))
			gn_remember_dev_name(&key.dev, dev);
		return;
	}
	key.dir = GN_NET_QUEUED;
	if (gn_count(&key, segs, len, 0))
		gn_remember_dev_name(&key.dev, dev);
}

SEC("tp_btf/net_dev_queue")
int BPF_PROG(gn_queue, struct sk_buff *skb)
{
	gn_do_queue(true, skb);
	return 0;
}

SEC("tracepoint/net/net_dev_queue")
int gn_tp_queue(struct trace_event_raw_net_dev_template *ctx)
{
	gn_do_queue(false, ctx->skbaddr);
	return 0;
}

static __always_inline void gn_push_xmit(__u64 skb, struct gn_net_dev dev, __s32 queue, __u32 segs)
{
	struct gn_xmit_stack *st = gn_scratch();
	if (!st)
		return;
	__u32 depth = st->depth;
	if (depth >= GN_XMIT_STACK_DEPTH)
		depth = GN_XMIT_STACK_DEPTH - 1; /* deeper than expected: reuse the top */
	struct gn_xmit_slot *slot = &st->slot[depth & (GN_XMIT_STACK_DEPTH - 1)];
	slot->skb = skb;
	slot->dev = dev;
	slot->queue = queue;
	slot->segs = segs;
	st->depth = depth + 1;
}

static __always_inline void gn_do_start_xmit(__u64 skb, struct net_device *dev, struct gn_net_dev id,
					   __s32 queue, __u32 segs, __u32 len)
{
	if (gn_tx_counted_at == GN_TX_AT_START) {
		struct gn_dev_key key = {};
		key.dev = id;
		key.queue = queue;
		key.dir = GN_NET_TX;
		if (gn_count(&key, segs, len, 0))
			gn_remember_dev_name(&key.dev, dev);
	}
	/* net_dev_xmit runs only for records, and needs the queue then. */
	if (gn_net_packets)
		gn_push_xmit(skb, id, queue, segs);
}

SEC("tp_btf/net_dev_start_xmit")
int BPF_PROG(gn_start_xmit, const struct sk_buff *skb, const struct net_device *dev)
{
	if (!gn_cpu_allowed(bpf_get_smp_processor_id()))
		return 0;
	struct sk_buff *s = (struct sk_buff *)skb;
	struct net_device *d = (struct net_device *)dev;
	gn_do_start_xmit((__u64)skb, d, gn_dev_id(true, d), s->queue_mapping, gn_skb_segs(true, s), s->len);
	return 0;
}

SEC("tracepoint/net/net_dev_start_xmit")
int gn_tp_startxmit(struct trace_event_raw_net_dev_start_xmit *ctx)
{
	if (!gn_cpu_allowed(bpf_get_smp_processor_id()))
		return 0;
	struct sk_buff *skb = (struct sk_buff *)ctx->skbaddr;
	struct net_device *dev = BPF_CORE_READ(skb, dev);
	__u32 segs = ctx->gso_segs ? ctx->gso_segs : 1;
	gn_do_start_xmit((__u64)skb, dev, gn_dev_id(false, dev), ctx->queue_mapping, segs, ctx->len);
	return 0;
}

/* `dev` is null in the classic twin (its entry has only the name); the
 * identity then comes from the start_xmit slot. */
static __always_inline void gn_do_xmit(__u64 skb, int rc, struct net_device *dev, __u32 len,
				    const char *tp_name)
{
	if (!gn_cpu_allowed(bpf_get_smp_processor_id()))
		return;
	struct gn_dev_key key = {};
	key.dir = GN_NET_TX;
	key.queue = -1;
	__u32 segs = 1;
	bool matched = false;
	struct gn_xmit_stack *st = gn_scratch();
	if (st) {
		__u32 depth = st->depth;
		if (depth > 0 && depth <= GN_XMIT_STACK_DEPTH) {
			struct gn_xmit_slot *slot = &st->slot[(depth - 1) & (GN_XMIT_STACK_DEPTH - 1)];
			if (slot->skb == skb) {
				key.dev = slot->dev;
				key.queue = slot->queue;
				segs = slot->segs;
				matched = true;
				st->depth = depth - 1;
			}
		}
		if (!matched)
			st->depth = 0; /* a start_xmit was missed: start over */
	}
	if (!matched)
		key.dev = gn_dev_id(true, dev);
	if (gn_tx_counted_at == GN_TX_AT_START) {
		/* A requeue is handed over again; an error was not sent. An
		 * unmatched skb (its start was missed) was counted or not: left
		 * as it is. */
		if (matched && rc == GN_NETDEV_TX_BUSY)
			gn_uncount(&key, segs, len, 0);
		else if (matched && rc != GN_NETDEV_TX_OK)
			gn_uncount(&key, segs, len, segs);
	} else if (gn_tx_counted_at == GN_TX_AT_XMIT && rc != GN_NETDEV_TX_BUSY) {
		bool created =
			rc == GN_NETDEV_TX_OK ? gn_count(&key, segs, len, 0) : gn_count(&key, 0, 0, segs);
		if (created) {
			if (dev)
				gn_remember_dev_name(&key.dev, dev);
			else
				gn_remember_name_str(&key.dev, tp_name);
		}
	}
	if (rc == GN_NETDEV_TX_BUSY)
		return;

	char name[GN_NET_NAME_LEN] = {};
	bool selected;
	if (dev)
		selected = gn_dev_selected(dev, name);
	else if (gn_net_packets) {
		bpf_probe_read_kernel_str(name, sizeof(name), tp_name);
		selected = gn_dev_name_selected(name);
	} else
		selected = false;
	if (selected)
		gn_emit_pkt(GN_REC_NET_XMIT, &key.dev, name, skb, len, rc, key.queue, segs);
}

SEC("tp_btf/net_dev_xmit")
int BPF_PROG(gn_xmit, struct sk_buff *skb, int rc, struct net_device *dev, unsigned int len)
{
	gn_do_xmit((__u64)skb, rc, dev, len, NULL);
	return 0;
}

SEC("tracepoint/net/net_dev_xmit")
int gn_tp_xmit(struct trace_event_raw_net_dev_xmit *ctx)
{
	__u32 loc = ctx->__data_loc_name;
	gn_do_xmit((__u64)ctx->skbaddr, ctx->rc, NULL, ctx->len, (char *)ctx + (loc & 0xffff));
	return 0;
}

/* ---- TX watchdog ------------------------------------------------------- */

static __always_inline void gn_do_xmit_timeout(bool btf, struct net_device *dev, int queue,
					    const char *tp_name, const char *tp_driver)
{
	struct gn_dev_key key = {};
	key.dev = gn_dev_id(btf, dev);
	key.queue = queue;
	key.dir = GN_NET_TX_TIMEOUT;
	if (gn_count(&key, 1, 0, 0)) {
		if (dev)
			gn_remember_dev_name(&key.dev, dev);
		else
			gn_remember_name_str(&key.dev, tp_name);
	}

	__u64 wake;
	struct gn_xmit_timeout_rec *rec =
		GN_RESERVE(struct gn_xmit_timeout_rec, GN_REC_NET_XMIT_TIMEOUT, &wake);
	if (!rec)
		return;
	rec->dev = key.dev;
	rec->queue = queue;
	rec->pad = 0;
	__builtin_memset(rec->name, 0, sizeof(rec->name));
	__builtin_memset(rec->driver, 0, sizeof(rec->driver));
	if (dev) {
		bpf_probe_read_kernel_str(rec->name, sizeof(rec->name), dev->name);
		/* netdev_drivername(): the parent device's driver */
		const char *drv = BPF_CORE_READ(dev, dev.parent, driver, name);
		if (drv)
			bpf_probe_read_kernel_str(rec->driver, sizeof(rec->driver), drv);
	} else {
		bpf_probe_read_kernel_str(rec->name, sizeof(rec->name), tp_name);
		bpf_probe_read_kernel_str(rec->driver, sizeof(rec->driver), tp_driver);
	}
	gn_submit(rec, wake);
}

SEC("tp_btf/net_dev_xmit_timeout")
int BPF_PROG(gn_xmit_timeout, struct net_device *dev, int queue_index)
{
	gn_do_xmit_timeout(true, dev, queue_index, NULL, NULL);
	return 0;
}

SEC("tracepoint/net/net_dev_xmit_timeout")
int gn_tp_xmit_tmo(struct trace_event_raw_net_dev_xmit_timeout *ctx)
{
	__u32 name = ctx->__data_loc_name, driver = ctx->__data_loc_driver;
	gn_do_xmit_timeout(false, NULL, ctx->queue_index, (char *)ctx + (name & 0xffff),
			(char *)ctx + (driver & 0xffff));
	return 0;
}

/* ---- TCP retransmissions ---------------------------------------------------- */

static __always_inline struct gn_tcp_retransmit_rec *gn_reserve_retransmit(__u64 *wake)
{
	if (!gn_cpu_allowed(bpf_get_smp_processor_id()))
		return NULL;
	struct gn_tcp_retransmit_rec *rec =
		GN_RESERVE(struct gn_tcp_retransmit_rec, GN_REC_TCP_RETRANSMIT, wake);
	if (rec) {
		__builtin_memset(rec->saddr, 0, sizeof(rec->saddr));
		__builtin_memset(rec->daddr, 0, sizeof(rec->daddr));
		rec->pad = 0;
		rec->err = 0;
	}
	return rec;
}

SEC("tp_btf/tcp_retransmit_skb")
int BPF_PROG(gn_retransmit, const struct sock *sk, const struct sk_buff *skb)
{
	__u64 wake;
	struct gn_tcp_retransmit_rec *rec = gn_reserve_retransmit(&wake);
	if (!rec)
		return 0;
	const struct sock_common *c = &sk->__sk_common;
	rec->skbaddr = (__u64)skb;
	rec->skaddr = (__u64)sk;
	rec->state = c->skc_state;
	rec->family = c->skc_family;
	rec->sport = c->skc_num;
	rec->dport = __builtin_bswap16(c->skc_dport);
	if (gn_retransmit_has_err)
		rec->err = (int)ctx[2];
	if (rec->family == 2 /* AF_INET */) {
		__u32 s = c->skc_rcv_saddr, d = c->skc_daddr;
		__builtin_memcpy(rec->saddr, &s, 4);
		__builtin_memcpy(rec->daddr, &d, 4);
	} else {
		bpf_probe_read_kernel(rec->saddr, 16, &c->skc_v6_rcv_saddr);
		bpf_probe_read_kernel(rec->daddr, 16, &c->skc_v6_daddr);
	}
	gn_submit(rec, wake);
	return 0;
}

SEC("tracepoint/tcp/tcp_retransmit_skb")
int gn_tp_retrans(struct trace_event_raw_tcp_retransmit_skb *ctx)
{
	__u64 wake;
	struct gn_tcp_retransmit_rec *rec = gn_reserve_retransmit(&wake);
	if (!rec)
		return 0;
	rec->skbaddr = (__u64)ctx->skbaddr;
	rec->skaddr = (__u64)ctx->skaddr;
	rec->state = ctx->state;
	rec->family = ctx->family;
	rec->sport = ctx->sport;
	rec->dport = ctx->dport;
	/* The address arrays sit at offsets a context load may not use
	 * (unaligned), so they are copied with bpf_probe_read_kernel. */
	if (rec->family == 2 /* AF_INET */) {
		bpf_probe_read_kernel(rec->saddr, 4, ctx->saddr);
		bpf_probe_read_kernel(rec->daddr, 4, ctx->daddr);
	} else {
		bpf_probe_read_kernel(rec->saddr, 16, ctx->saddr_v6);
		bpf_probe_read_kernel(rec->daddr, 16, ctx->daddr_v6);
	}
	if (bpf_core_field_exists(ctx->err))
		rec->err = BPF_CORE_READ(ctx, err);
	gn_submit(rec, wake);
	return 0;
}

/* ---- GRO (per-packet only) ---------------------------------------------------- */

static __always_inline void gn_gro_entry(bool btf, struct sk_buff *skb)
{
	if (!gn_cpu_allowed(bpf_get_smp_processor_id()))
		return;
	struct net_device *dev = GN_LOAD(btf, skb, dev);
	char name[GN_NET_NAME_LEN] = {};
	if (!gn_dev_selected(dev, name))
		return;
	struct gn_xmit_stack *st = gn_scratch();
	if (!st)
		return;
	__u64 wake;
	struct gn_gro_entry_rec *rec = GN_RESERVE(struct gn_gro_entry_rec, GN_REC_GRO_ENTRY, &wake);
	if (!rec)
		return;
	rec->dev = gn_dev_id(btf, dev);
	rec->skbaddr = (__u64)skb;
	rec->napi_id = bpf_core_field_exists(skb->napi_id) ? GN_LOAD(btf, skb, napi_id) : 0;
	rec->len = GN_LOAD(btf, skb, len);
	rec->data_len = GN_LOAD(btf, skb, data_len);
	rec->queue_mapping = GN_LOAD(btf, skb, queue_mapping);
	rec->pad = 0;
	__builtin_memcpy(rec->name, name, GN_NET_NAME_LEN);
	gn_submit(rec, wake);
	st->gro_open += 1;
}

/* Only exits whose entry was recorded, so --net-dev keeps slices balanced. */
static __always_inline void gn_gro_exit(int ret)
{
	struct gn_xmit_stack *st = gn_scratch();
	if (!st || st->gro_open == 0)
		return;
	st->gro_open -= 1;
	__u64 wake;
	struct gn_gro_exit_rec *rec = GN_RESERVE(struct gn_gro_exit_rec, GN_REC_GRO_EXIT, &wake);
	if (!rec)
		return;
	rec->ret = ret;
	rec->pad = 0;
	gn_submit(rec, wake);
}

SEC("tp_btf/napi_gro_receive_entry")
int BPF_PROG(gn_gro_in, const struct sk_buff *skb)
{
	gn_gro_entry(true, (struct sk_buff *)skb);
	return 0;
}

SEC("tracepoint/net/napi_gro_receive_entry")
int gn_tp_gro_in(struct trace_event_raw_net_dev_rx_verbose_template *ctx)
{
	gn_gro_entry(false, (struct sk_buff *)ctx->skbaddr);
	return 0;
}

SEC("tp_btf/napi_gro_receive_exit")
int BPF_PROG(gn_gro_out, int ret)
{
	gn_gro_exit(ret);
	return 0;
}

SEC("tracepoint/net/napi_gro_receive_exit")
int gn_tp_gro_out(struct trace_event_raw_net_dev_rx_exit_template *ctx)
{
	gn_gro_exit(ctx->ret);
	return 0;
}
