/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Network collectors' layouts (bpf/napi.bpf.c, netdev.bpf.c, drops.bpf.c,
 * nic.bpf.c <-> userspace/collect): per-packet ring records (kinds 64 and
 * up, only with `--events net-packets`, or always for the rare events) and
 * the keys and values of the per-CPU aggregate maps user space reads at
 * every drain.
 *
 * Fixed-width fields only; the C++ side pins sizes and offsets
 * (userspace/collect/records.h). */
#ifndef GPUNOISE_BPF_NET_H
#define GPUNOISE_BPF_NET_H

#include "record.h"

#define GN_NET_NAME_LEN 16 /* IFNAMSIZ */
/* Up to this many --net-dev names filter the per-packet records. */
#define GN_NET_DEV_FILTER_MAX 4
/* A per-CPU stack of skbs between net_dev_start_xmit and net_dev_xmit;
 * deeper than stacked devices (vlan on bond on NIC) ever nest. */
#define GN_XMIT_STACK_DEPTH 4
/* NIC-driver tracepoints the nic collector attaches to, at most. */
#define GN_NIC_MAX_EVENTS 512

enum gn_net_record_kind {
	GN_REC_NAPI_POLL = 64,        /* napi:napi_poll (per poll) */
	GN_REC_NET_RECEIVE = 65,      /* net:netif_receive_skb (per skb) */
	GN_REC_NET_XMIT = 66,         /* net:net_dev_xmit (per skb) */
	GN_REC_NET_XMIT_TIMEOUT = 67, /* net:net_dev_xmit_timeout (always) */
	GN_REC_DQL_STALL = 68,        /* napi:dql_stall_detected (always) */
	GN_REC_TCP_RETRANSMIT = 69,   /* tcp:tcp_retransmit_skb (always) */
	GN_REC_GRO_ENTRY = 70,        /* net:napi_gro_receive_entry (per skb) */
	GN_REC_GRO_EXIT = 71,         /* net:napi_gro_receive_exit (per skb) */
	GN_REC_SKB_DROP = 72,         /* skb:kfree_skb (per drop) */
	GN_REC_NIC_EVENT = 73,        /* a NIC-driver tracepoint (per event) */
	GN_REC_NET_FIRST = GN_REC_NAPI_POLL,
	GN_REC_NET_LAST = GN_REC_NIC_EVENT,
};

/* A network device: ifindex is unique only inside its network namespace, so
 * the namespace's inode number is part of the identity. ifindex 0 means "no
 * device" (a drop of an skb that had none). */
struct gn_net_dev {
	__u32 netns;
	__u32 ifindex;
};

/* ---- per-packet records ------------------------------------------------ */

struct gn_napi_poll_rec {
	struct gn_header hdr;
	struct gn_net_dev dev;
	__u32 napi_id;
	__s32 queue; /* napi_struct::index, -1 when the driver does not set it */
	__s32 work;
	__s32 budget;
	char name[GN_NET_NAME_LEN];
};

/* netif_receive_skb and net_dev_xmit. */
struct gn_net_pkt_rec {
	struct gn_header hdr;
	struct gn_net_dev dev;
	__u64 skbaddr;
	__u32 len;   /* skb->len as the tracepoint reports it */
	__s32 rc;    /* net_dev_xmit: driver's return code */
	__s32 queue; /* RX queue recorded by the driver / TX queue; -1 unknown */
	__u32 segs;  /* packets in this skb (GRO/GSO segments), at least 1 */
	char name[GN_NET_NAME_LEN];
};

struct gn_gro_entry_rec {
	struct gn_header hdr;
	struct gn_net_dev dev;
	__u64 skbaddr;
	__u32 napi_id;
	__u32 len;
	__u32 data_len;
	__u16 queue_mapping;
	__u16 pad;
	char name[GN_NET_NAME_LEN];
};

struct gn_gro_exit_rec {
	struct gn_header hdr;
	__s32 ret;
	__u32 pad;
};

struct gn_xmit_timeout_rec {
	struct gn_header hdr;
	struct gn_net_dev dev;
	__s32 queue;
	__u32 pad;
	char name[GN_NET_NAME_LEN];
	char driver[GN_NET_NAME_LEN];
};

struct gn_dql_stall_rec {
	struct gn_header hdr;
	__u64 last_reap;
	__u64 hist_head;
	__u64 now;
	__u32 thrs;
	__u32 len;
	__u64 hist[4];
};

struct gn_tcp_retransmit_rec {
	struct gn_header hdr;
	__u64 skbaddr;
	__u64 skaddr;
	__s32 state;
	__u16 sport;
	__u16 dport;
	__u16 family;
	__u16 pad;
	__s32 err;
	__u8 saddr[16]; /* IPv4 in the first 4 bytes for AF_INET */
	__u8 daddr[16];
};

struct gn_skb_drop_rec {
	struct gn_header hdr;
	struct gn_net_dev dev;
	__u64 skbaddr;
	__u64 location;
	__u32 reason; /* enum skb_drop_reason; names come from BTF */
	__u16 protocol;
	__u16 pad;
	char name[GN_NET_NAME_LEN];
};

struct gn_nic_event_rec {
	struct gn_header hdr;
	__u32 event; /* index into the list user space attached */
	__u32 pad;
	char dev[GN_NET_NAME_LEN]; /* empty when the event has no device field */
};

/* ---- per-CPU aggregates ------------------------------------------------- */

enum gn_net_dir {
	GN_NET_RX = 0,         /* netif_receive_skb */
	GN_NET_TX = 1,         /* transmitted: where, gn_tx_counted_at says */
	GN_NET_QUEUED = 2,     /* net_dev_queue, when TX is counted at the driver */
	GN_NET_TX_TIMEOUT = 3, /* net_dev_xmit_timeout: the TX watchdog fired */
	GN_NET_NUM_DIRS = 4,
};

/* Where bpf/netdev.bpf.c counts GN_NET_TX. */
enum gn_tx_count_point {
	GN_TX_AT_QUEUE = 0, /* net_dev_queue: once per GSO skb, the default */
	GN_TX_AT_START = 1, /* net_dev_start_xmit, corrected at net_dev_xmit */
	GN_TX_AT_XMIT = 2,  /* net_dev_xmit alone (no net_dev_start_xmit) */
};

/* The counter maps' keys are compared and copied as 64-bit words by their
 * per-CPU caches (bpf/agg_cache.bpf.h): 8-byte aligned, sizes multiples of 8. */
#define GN_AGG_KEY __attribute__((aligned(8)))

/* gn_dev_stats: packets and bytes per device, queue and direction. */
struct GN_AGG_KEY gn_dev_key {
	struct gn_net_dev dev;
	__s32 queue; /* -1: unknown or not applicable */
	__u32 dir;   /* enum gn_net_dir */
};

struct gn_dev_val {
	__u64 packets; /* segments: a GRO/GSO skb counts as the packets in it */
	__u64 bytes;   /* with the link-layer header, as device statistics count */
	__u64 errors;  /* TX: skbs the driver refused (rc != NETDEV_TX_OK) */
};

/* gn_napi_stats: polls per NAPI instance. */
struct GN_AGG_KEY gn_napi_key {
	struct gn_net_dev dev;
	__u32 napi_id;
	__s32 queue; /* napi_struct::index or -1 */
	__s32 irq;   /* napi_struct::irq or -1 */
	__u32 pad;
};

struct gn_napi_val {
	__u64 polls;
	__u64 full_budget; /* polls with work >= budget: more is waiting */
	__u64 work;        /* packets processed */
};

/* gn_drop_stats: kfree_skb per device, reason and code location. */
struct GN_AGG_KEY gn_drop_key {
	struct gn_net_dev dev;
	__u32 reason;
	__u32 pad;
	__u64 location;
};

struct gn_drop_val {
	__u64 packets;
	__u64 bytes;
};

/* Each counter map has a front of GN_AGG_CACHE_SLOTS slots per CPU
 * (bpf/agg_cache.bpf.h): an array map of possible CPUs x slots, mapped by
 * user space, which reads a key's count on a CPU as its slot's plus its
 * hash entry's. A slot is owned by the first key that lands on it. */
#define GN_AGG_CACHE_SLOTS 64

enum gn_agg_slot_state {
	GN_AGG_SLOT_FREE = 0,
	GN_AGG_SLOT_CLAIMING = 1, /* key and value being written: not yet counted */
	GN_AGG_SLOT_OWNED = 2,
};

/* A 32-bit finaliser (murmur3's), so that nearby ifindexes, queues and
 * namespaces spread over the slots. */
static inline __u32 gn_agg_mix(__u32 h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bU;
	h ^= h >> 13;
	h *= 0xc2b2ae35U;
	h ^= h >> 16;
	return h;
}

/* Slot mixes of each key type, every field that tells keys apart (shared
 * with user space, whose tests know which keys share a slot). */
static inline __u32 gn_dev_key_mix(const struct gn_dev_key *k)
{
	return gn_agg_mix(k->dev.ifindex * 0x9e3779b1U + k->dev.netns * 0x7feb352dU +
			  (__u32)k->queue * 0x846ca68bU + k->dir);
}

static inline __u32 gn_napi_key_mix(const struct gn_napi_key *k)
{
	return gn_agg_mix(k->napi_id * 0x9e3779b1U + k->dev.netns * 0x7feb352dU +
			  k->dev.ifindex * 0x846ca68bU + (__u32)k->queue * 0x27d4eb2fU + (__u32)k->irq);
}

static inline __u32 gn_drop_key_mix(const struct gn_drop_key *k)
{
	return gn_agg_mix((__u32)k->location * 0x9e3779b1U + (__u32)(k->location >> 32) +
			  k->reason * 0x7feb352dU + k->dev.ifindex * 0x846ca68bU + k->dev.netns);
}

struct gn_dev_cache_slot {
	__u64 state; /* enum gn_agg_slot_state; first, so a reader sees it before the key */
	struct gn_dev_key key;
	struct gn_dev_val val;
};

struct gn_napi_cache_slot {
	__u64 state;
	struct gn_napi_key key;
	struct gn_napi_val val;
};

struct gn_drop_cache_slot {
	__u64 state;
	struct gn_drop_key key;
	struct gn_drop_val val;
};

/* gn_nic_stats: NIC-driver tracepoint hits per event and device. */
struct gn_nic_key {
	__u32 event;
	__u32 pad;
	char dev[GN_NET_NAME_LEN];
};

struct gn_nic_val {
	__u64 count;
};

/* gn_net_names: the name each device had when first seen. */
struct gn_net_name {
	char name[GN_NET_NAME_LEN];
};

/* gn_nic_fields: where each attached NIC event keeps its device name. */
enum gn_nic_field_kind {
	GN_NIC_FIELD_NONE = 0,
	GN_NIC_FIELD_DATA_LOC = 1, /* __data_loc char[]: u32 (len << 16 | offset) */
	GN_NIC_FIELD_ARRAY = 2,    /* char name[N] inline */
};

struct gn_nic_field {
	__u32 kind;   /* enum gn_nic_field_kind */
	__u16 offset; /* from the start of the raw trace entry */
	__u16 size;
};

#endif /* GPUNOISE_BPF_NET_H */
