// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* nic collector: NIC-driver tracepoints (mlx5, ice, i40e, bnxt, ena, gve,
 * ixgbe, ...), which differ per driver and per kernel. User space discovers
 * which driver categories exist in tracefs, parses each event's format file
 * for a device-name field, and attaches this one program to every event with
 * the event's index as the BPF cookie. The program counts hits per event,
 * device and CPU (per-CPU map), and with `--events net-packets` records each
 * hit (for the --net-dev devices, when given). */
#include "common.bpf.h"
#include "net.h"
#include "net_packets.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Aggregate updates that found the map full, per CPU. */
__u64 gn_agg_full[GN_MAX_CPUS] = {};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, GN_NIC_MAX_EVENTS);
	__type(key, __u32);
	__type(value, struct gn_nic_field);
} gn_nic_fields SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	/* Allocated as keys appear: preallocated, every key's value for
	 * every possible CPU is over 100 MiB a map on a 256-CPU node. */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct gn_nic_key);
	__type(value, struct gn_nic_val);
} gn_nic_stats SEC(".maps");

/* Reads the device name out of the raw trace entry at `base`. The verifier
 * forbids variable offsets from the context pointer, so the entry's address
 * is taken as a number and read through bpf_probe_read_kernel. */
static __always_inline void gn_read_dev(__u64 base, const struct gn_nic_field *f,
					char out[GN_NET_NAME_LEN])
{
	__u32 offset = f->offset & 0xfff;
	if (f->kind == GN_NIC_FIELD_DATA_LOC) {
		/* __data_loc: (length << 16) | offset from the entry's start */
		__u32 loc = 0;
		bpf_probe_read_kernel(&loc, sizeof(loc), (void *)(base + offset));
		__u32 len = loc >> 16;
		if (len > GN_NET_NAME_LEN)
			len = GN_NET_NAME_LEN;
		if (len)
			bpf_probe_read_kernel_str(out, len, (void *)(base + (loc & 0xffff)));
	} else if (f->kind == GN_NIC_FIELD_ARRAY) {
		__u32 size = f->size;
		if (size > GN_NET_NAME_LEN)
			size = GN_NET_NAME_LEN;
		if (size)
			bpf_probe_read_kernel_str(out, size, (void *)(base + offset));
	}
}

SEC("tracepoint")
int gn_nic_event(void *ctx)
{
	__u32 cpu = bpf_get_smp_processor_id();
	if (!gn_cpu_allowed(cpu))
		return 0;
	__u32 event = (__u32)bpf_get_attach_cookie(ctx);
	if (event >= GN_NIC_MAX_EVENTS)
		return 0;
	struct gn_nic_key key = {};
	key.event = event;
	struct gn_nic_field *field = bpf_map_lookup_elem(&gn_nic_fields, &event);
	if (field && field->kind != GN_NIC_FIELD_NONE) {
		void *p = ctx;
		__u64 base = 0;
		bpf_probe_read_kernel(&base, sizeof(base), &p);
		gn_read_dev(base, field, key.dev);
	}

	struct gn_nic_val *val = bpf_map_lookup_elem(&gn_nic_stats, &key);
	if (!val) {
		static const struct gn_nic_val zero = {};
		bpf_map_update_elem(&gn_nic_stats, &key, &zero, BPF_NOEXIST);
		val = bpf_map_lookup_elem(&gn_nic_stats, &key);
	}
	if (val)
		val->count += 1;
	else
		__sync_fetch_and_add(&gn_agg_full[cpu & (GN_MAX_CPUS - 1)], 1);

	if (!gn_dev_name_selected(key.dev))
		return 0;
	__u64 wake;
	struct gn_nic_event_rec *rec = GN_RESERVE(struct gn_nic_event_rec, GN_REC_NIC_EVENT, &wake);
	if (!rec)
		return 0;
	rec->event = event;
	rec->pad = 0;
	__builtin_memcpy(rec->dev, key.dev, GN_NET_NAME_LEN);
	gn_submit(rec, wake);
	return 0;
}
