/* The CPU filter (--cpus) of a collector object: a flag and a bitmask in
 * rodata, set before load, so that the verifier sees constants and a
 * disabled filter costs nothing. Userspace fills both with SetCpuFilter
 * (userspace/collect/collector.h). common.bpf.h declares the one the ring
 * transport's objects share; kwork and cpustate, which do not use that
 * transport, declare their own. */
#pragma once

/* Declares `filter` and `mask` (`words` 64-CPU words) and `allowed(cpu)`:
 * true for every CPU when the filter is off, else for the CPUs in the
 * mask; CPUs past the mask are never allowed. */
#define GN_CPU_FILTER(filter, mask, words, allowed)                \
	const volatile bool filter = false;                        \
	const volatile __u64 mask[words] = {};                     \
	static __always_inline bool allowed(__u32 cpu)             \
	{                                                          \
		if (!filter)                                       \
			return true;                               \
		if (cpu >= (words) * 64)                           \
			return false;                              \
		return (mask[cpu / 64] >> (cpu % 64)) & 1;         \
	}
