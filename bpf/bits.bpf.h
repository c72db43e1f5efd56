/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Branch-free integer log2 for histogram slots (libbpf-tools keep the same
 * helper in bits.bpf.h): the verifier sees straight-line code with a bounded
 * result, so the slot index needs only a clamp. */
#ifndef GPUNOISE_BITS_BPF_H
#define GPUNOISE_BITS_BPF_H

#include "vmlinux.h"

/* floor(log2(v)) for v > 0; 0 for v == 0. */
static __always_inline __u32 gn_log2_u32(__u32 v)
{
	__u32 r, shift;

	r = (v > 0xFFFF) << 4;
	v >>= r;
	shift = (v > 0xFF) << 3;
	v >>= shift;
	r |= shift;
	shift = (v > 0xF) << 2;
	v >>= shift;
	r |= shift;
	shift = (v > 0x3) << 1;
	v >>= shift;
	r |= shift;
	r |= (v >> 1);
	return r;
}

static __always_inline __u32 gn_log2_u64(__u64 v)
{
	__u32 hi = v >> 32;
	return hi ? gn_log2_u32(hi) + 32 : gn_log2_u32((__u32)v);
}

#endif /* GPUNOISE_BITS_BPF_H */
