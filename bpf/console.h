/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* console collector: every kernel log message at printk time, from the
 * printk:console tracepoint (kernel/printk/printk.c printk_sprint: called in
 * the caller's context once the text is formatted, level prefix and
 * trailing newline stripped; a pr_cont() fragment fires on its own). The
 * record carries what /dev/kmsg lacks (the trace clock, CPU, task) and the
 * text, which user space uses to match it with its /dev/kmsg record (level,
 * facility, sequence number, DEVICE=). Records go into a fixed log in .bss
 * that user space follows by index, as bpf/memstall.h does; an entry
 * overwritten before it was read is counted as lost. Shared layouts only:
 * fixed-width fields (userspace/collect/console_collector.cc pins them). */
#ifndef GPUNOISE_BPF_CONSOLE_H
#define GPUNOISE_BPF_CONSOLE_H

#ifndef __bpf__
#include <linux/types.h>
#endif

/* Entries of the log (a power of two): a printk burst of this many
 * messages between two drains (100 ms) fits. */
#define GN_CON_LOG 4096
/* Text bytes kept per message (a power of two); longer messages keep their
 * first GN_CON_TEXT - 1 bytes and their full length in `len`. */
#define GN_CON_TEXT 256
#define GN_CON_COMM 16

struct gn_console {
	__u64 seq;  /* index + 1, written last: a reader checks it was not overwritten */
	__u64 ts;   /* CLOCK_BOOTTIME ns, bpf_ktime_get_boot_ns() */
	__u32 tid;  /* current task when printk ran (0: the idle task, an interrupt on an idle CPU) */
	__u32 pid;  /* its thread group */
	__u16 cpu;
	__u16 len;  /* the message's full length (the text may be cut) */
	__u32 copied; /* bytes of text copied (< GN_CON_TEXT) */
	char comm[GN_CON_COMM];
	char text[GN_CON_TEXT]; /* not NUL-terminated: `copied` bytes */
};

#endif /* GPUNOISE_BPF_CONSOLE_H */
