/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The recording's gate, shared like gn_rings: one u32, non-zero while user
 * space has closed it. Collectors attach and detach one link at a time, and
 * each detach waits for an RCU grace period (about 35 ms per link on a
 * 16-CPU VM), so without a gate the first collector stops recording seconds
 * before the last and the trace ends ragged. Closing the gate stops every
 * producer in one write; what fires behind it is outside the recording and
 * is not counted as lost. An object whose gate is not shared keeps its own,
 * which stays open. */
#ifndef GPUNOISE_GATE_BPF_H
#define GPUNOISE_GATE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} gn_gate SEC(".maps");

static __always_inline bool gn_gate_closed(void)
{
	__u32 zero = 0;
	__u32 *closed = bpf_map_lookup_elem(&gn_gate, &zero);
	return closed && *closed;
}

#endif /* GPUNOISE_GATE_BPF_H */
