// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* console collector (bpf/console.h): one log entry per printk:console event.
 * The tracepoint fires in printk's caller (an interrupt handler, a kworker,
 * the task that wrote /dev/kmsg), so the CPU, the task and the time are
 * those of the message itself.
 *
 * A tp_btf program and its classic tracepoint twin; user space autoloads
 * one of the two. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "console.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

__u64 gn_con_next = 0; /* messages written so far */
struct gn_console gn_con_log[GN_CON_LOG] = {};

static __always_inline void gn_con_log_text(const char *text, __u64 len)
{
	__u64 index = __sync_fetch_and_add(&gn_con_next, 1);
	struct gn_console *e = &gn_con_log[index & (GN_CON_LOG - 1)];
	__u64 id = bpf_get_current_pid_tgid();
	__u32 n = len < GN_CON_TEXT - 1 ? (__u32)len : GN_CON_TEXT - 1;

	e->seq = 0; /* being written */
	e->ts = bpf_ktime_get_boot_ns();
	e->tid = (__u32)id;
	e->pid = (__u32)(id >> 32);
	e->cpu = bpf_get_smp_processor_id();
	e->len = len > 0xffff ? 0xffff : (__u16)len;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	/* The mask tells the verifier the bound it already holds. */
	n &= GN_CON_TEXT - 1;
	if (bpf_probe_read_kernel(e->text, n, text) != 0)
		n = 0;
	e->copied = n;
	/* No fences in BPF: the reader checks seq before and after copying the
	 * entry, which is enough on x86 (stores are not reordered). */
	e->seq = index + 1;
}

/* include/trace/events/printk.h: TP_PROTO(const char *text, size_t len). */
SEC("tp_btf/console")
int BPF_PROG(gn_con_console, const char *text, size_t len)
{
	gn_con_log_text(text, len);
	return 0;
}

/* The classic event stores the text as a __data_loc string with its NUL
 * (length len + 1). */
SEC("tracepoint/printk/console")
int gn_tcon_console(struct trace_event_raw_console *ctx)
{
	__u32 loc = ctx->__data_loc_msg;
	__u32 size = loc >> 16;
	gn_con_log_text((const char *)ctx + (loc & 0xffff), size ? size - 1 : 0);
	return 0;
}
