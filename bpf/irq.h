/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* irq collector records (bpf/irq.bpf.c <-> userspace/collect). */
#ifndef GPUNOISE_BPF_IRQ_H
#define GPUNOISE_BPF_IRQ_H

#include "record.h"

#define GN_IRQ_NAME_LEN 48

/* IRQ names are not in the per-event record: the kernel side stores each
 * IRQ's action name once in the irq_names hash map, and user space resolves
 * numbers through it. */
struct gn_irq {
	struct gn_header hdr;
	__s32 irq;
	__s32 ret; /* exit only: IRQ_HANDLED etc. */
};

/* Softirq vectors as the kernel numbers them (include/linux/interrupt.h). */
enum gn_softirq_vec {
	GN_SOFTIRQ_HI = 0,
	GN_SOFTIRQ_TIMER = 1,
	GN_SOFTIRQ_NET_TX = 2,
	GN_SOFTIRQ_NET_RX = 3,
	GN_SOFTIRQ_BLOCK = 4,
	GN_SOFTIRQ_IRQ_POLL = 5,
	GN_SOFTIRQ_TASKLET = 6,
	GN_SOFTIRQ_SCHED = 7,
	GN_SOFTIRQ_HRTIMER = 8,
	GN_SOFTIRQ_RCU = 9,
	GN_NR_SOFTIRQS = 10,
};

struct gn_softirq {
	struct gn_header hdr;
	__u16 vec;
	/* Entries only: NET_RX softirqs that ran untimed on this CPU since its
	 * previous timed NET_RX entry (storm sampling, bpf/irq.bpf.c),
	 * saturated at 65535; 0 for every other vector. */
	__u16 untimed_before;
	/* Entries only: ns from the earliest raise of this vector on this CPU
	 * that no entry has answered yet, to this entry (saturated at
	 * UINT32_MAX, about 4.3 s); 0 when no such raise was seen (raised
	 * before the recording, or the raise program did not run); too long
	 * when the previous entry's program did not run (a skipped run, which
	 * the recording counts). Raises are
	 * folded into their entry rather than written on their own: under a
	 * NET_RX flood every packet raises, and a third of all records were
	 * raises that no analysis reads. */
	__u32 raise_wait_ns;
};

/* A softirq whose entry was still unwritten at its exit: nothing else was
 * recorded on its CPU in between, so one record stands for both
 * (bpf/irq.bpf.c, "Softirq entries wait for their exit"). hdr is the exit's
 * (hdr.ts its time); user space writes the entry and the exit. */
struct gn_softirq_slice {
	struct gn_header hdr;
	__u64 entry_ts; /* the entry's time; 0: an exit alone (its entry was written before) */
	__u16 vec;
	__u16 untimed_before; /* the entry's, as in struct gn_softirq */
	__u32 raise_wait_ns; /* the entry's, as in struct gn_softirq */
};

/* Per CPU, per softirq vector (slots past the kernel's vectors keep a newer
 * kernel's harmless): when the vector was first raised since its last entry
 * (bpf_ktime_get_boot_ns, 0: not raised), and how many times the entry
 * program ran for it since it was attached, gate or not, timed or not.
 * User space sets that count against the kernel's own (/proc/softirqs):
 * softirqs the kernel ran without calling its tracepoint show up as the
 * difference (record/softirq_audit.h). */
#define GN_SOFTIRQ_SLOTS 16
struct gn_softirq_cpu {
	__u64 raised_at[GN_SOFTIRQ_SLOTS];
	__u64 entries[GN_SOFTIRQ_SLOTS];
};

/* System vectors that irq_handler_entry does not see (x86 irq_vectors
 * tracepoints). */
enum gn_vector_kind {
	GN_VEC_LOCAL_TIMER = 0,
	GN_VEC_RESCHEDULE = 1,
	GN_VEC_CALL_FUNCTION = 2,
	GN_VEC_CALL_FUNCTION_SINGLE = 3,
	GN_VEC_IRQ_WORK = 4,
	GN_VEC_X86_PLATFORM_IPI = 5,
	GN_VEC_THERMAL_APIC = 6,
	GN_VEC_ERROR_APIC = 7,
	GN_VEC_SPURIOUS_APIC = 8,
	GN_NR_VECTOR_KINDS = 9,
};

/* The x86 irq_vectors tracepoints gpunoise traces: X(event, short name,
 * kind) once per vector, for the programs irq.bpf.c and irqtime.bpf.c
 * generate from it (the short name keeps program names under the kernel's
 * 15 characters). One list, so the two collectors see the same vectors. */
#define GN_X86_VECTORS(X)                                             \
	X(local_timer, timer, GN_VEC_LOCAL_TIMER)                     \
	X(reschedule, resched, GN_VEC_RESCHEDULE)                     \
	X(call_function, callfn, GN_VEC_CALL_FUNCTION)                \
	X(call_function_single, callfn1, GN_VEC_CALL_FUNCTION_SINGLE) \
	X(irq_work, irqwork, GN_VEC_IRQ_WORK)                         \
	X(x86_platform_ipi, platipi, GN_VEC_X86_PLATFORM_IPI)         \
	X(thermal_apic, thermal, GN_VEC_THERMAL_APIC)                 \
	X(error_apic, errapic, GN_VEC_ERROR_APIC)                     \
	X(spurious_apic, spurious, GN_VEC_SPURIOUS_APIC)

struct gn_vector {
	struct gn_header hdr;
	__u32 kind; /* enum gn_vector_kind */
	__s32 vector;
};

#endif /* GPUNOISE_BPF_IRQ_H */
