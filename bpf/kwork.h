/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* kwork collector: kernel work that runs on the recorded CPUs in place of
 * (or on top of) the tasks there: IPI callbacks (csd), work items, hrtimer
 * callbacks, and who sent each function-call IPI. Each CPU writes its own
 * region of one mmap'able array (no ring records, no shared cache line);
 * user space follows each CPU's head. Shared layouts only: fixed-width
 * fields (userspace/collect/kwork_collector.cc pins them). */
#ifndef GPUNOISE_BPF_KWORK_H
#define GPUNOISE_BPF_KWORK_H

#ifndef __bpf__
#include <linux/types.h>
#endif

enum gn_kwork_kind {
	GN_KW_IPI_SEND = 0, /* csd:csd_queue_cpu (instant, sender side: a callback queued for a CPU) */
	GN_KW_CSD = 1,      /* csd:csd_function_entry/exit: an IPI's callback run on the receiver */
	GN_KW_WORK = 2,     /* workqueue:workqueue_execute_start/end */
	GN_KW_HRTIMER = 3,  /* timer:hrtimer_expire_entry/exit */
	GN_KW_KINDS = 4,
};

/* The context of an entry, from the irq collector's per-CPU state
 * (bpf/common.bpf.h gn_cpu_ctx; zero when it does not run): a send made in
 * an interrupt was made by the interrupt, not by the task it interrupted. */
enum gn_kwork_flags {
	GN_KW_IN_HARDIRQ = 1,
	GN_KW_IN_SOFTIRQ = 2,
};

/* Entries per CPU (a power of two). Drained every 100 ms by default, so a
 * CPU may run 20k callbacks a second before entries are overwritten (and
 * counted as lost). 72 bytes each: 144 KiB per CPU. */
#define GN_KW_LOG 2048

struct gn_kwork {
	__u64 seq;      /* index on this CPU + 1, written last */
	__u64 begin;    /* CLOCK_BOOTTIME ns */
	__u64 end;      /* = begin for an IPI send */
	__u64 func;     /* kernel text address: callback, work function, hrtimer function */
	__u64 callsite; /* IPI send: the caller that asked for it (_RET_IP_); else 0 */
	__u64 targets;  /* IPI send: target CPUs 0..63 as a mask (bit 63 also stands for CPUs above) */
	__u64 csd;      /* IPI send and callback: the call_single_data, which pairs the two; 0 when none */
	__u32 tid;      /* current task (the sender, the kworker, the interrupted task) */
	__u8 kind;      /* enum gn_kwork_kind */
	__u8 flags;     /* enum gn_kwork_flags: the context it ran in, where the irq collector tells */
	__u16 cpu;
	__u32 tgid;     /* current task's process: names a sender that exited before the recorder read the entry */
	__u32 pad;
};

/* One per CPU, a cache line each so CPUs never share one. */
struct gn_kwork_head {
	__u64 next;     /* entries written on this CPU */
	__u64 unpaired; /* exits with no entry (attached mid-callback) or entries nested too deep */
	__u64 read;     /* user space: entries it has read on this CPU (the doorbell, bpf/doorbell.bpf.h) */
	__u64 pad[5];
};

#endif /* GPUNOISE_BPF_KWORK_H */
