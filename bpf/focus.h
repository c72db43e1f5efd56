/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The focus set the monitor's collectors share (bpf/focus.bpf.h <-> user
 * space): the processes and threads whose run-queue waits, preemptions and
 * interruptions are counted apart. */
#ifndef GPUNOISE_BPF_FOCUS_H
#define GPUNOISE_BPF_FOCUS_H

#include "record.h"

/* Ids (tgids of focus processes and the tids of their threads) the map holds
 * at most. User space creates the map with this size once and hands it to
 * every object (bpf_map__reuse_fd checks that the sizes match). */
#define GN_FOCUS_MAX 16384

/* Who a sample or an interruption hit (pid classes). */
enum gn_task_class {
	GN_CLASS_IDLE = 0,   /* the idle task (pid 0) */
	GN_CLASS_FOCUS = 1,  /* a focus thread */
	GN_CLASS_KERNEL = 2, /* a kernel thread (PF_KTHREAD) */
	GN_CLASS_OTHER = 3,  /* any other user task */
	GN_NR_TASK_CLASSES = 4,
};

#endif /* GPUNOISE_BPF_FOCUS_H */
