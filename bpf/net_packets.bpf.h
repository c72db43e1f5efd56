/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The per-packet switch (`--events net-packets`) and the device-name filter
 * (`--net-dev`) every network collector applies to its ring records. */
#ifndef GPUNOISE_NET_PACKETS_BPF_H
#define GPUNOISE_NET_PACKETS_BPF_H

#include "common.bpf.h"
#include "net.h"

/* Per-packet ring records are off unless `--events net-packets`; the
 * in-kernel aggregates are always kept. Set before load (rodata). */
const volatile bool gn_net_packets = false;
/* --net-dev: per-packet records only for these device names. */
const volatile __u32 gn_net_dev_filter_count = 0;
const volatile char gn_net_dev_filter[GN_NET_DEV_FILTER_MAX][GN_NET_NAME_LEN] = {};

/* Whether per-packet records for a device with this name are wanted. The
 * loops have no early exit so that clang unrolls them. */
static __always_inline bool gn_dev_name_selected(const char *name)
{
	if (!gn_net_packets)
		return false;
	if (gn_net_dev_filter_count == 0)
		return true;
	bool any = false;
#pragma unroll
	for (int f = 0; f < GN_NET_DEV_FILTER_MAX; f++) {
		bool same = f < gn_net_dev_filter_count;
		bool ended = false;
#pragma unroll
		for (int i = 0; i < GN_NET_NAME_LEN; i++) {
			char want = gn_net_dev_filter[f][i];
			if (!ended && name[i] != want)
				same = false;
			if (!want)
				ended = true;
		}
		any |= same;
	}
	return any;
}

#endif /* GPUNOISE_NET_PACKETS_BPF_H */
