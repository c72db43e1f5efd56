// The eBPF record layouts (bpf/*.h) as user space sees them, with the layout
// pinned: a mismatch between the two compilers fails the build, not a trace.
#pragma once

#include <cstddef>

extern "C" {
#include "bpf/irq.h"
#include "bpf/sched.h"
}

namespace gpunoise::collect {

static_assert(sizeof(gn_header) == 16);
static_assert(offsetof(gn_header, ts) == 0);
static_assert(offsetof(gn_header, kind) == 8);
static_assert(offsetof(gn_header, tid) == 12);

static_assert(sizeof(gn_sched_switch) == 56);
static_assert(offsetof(gn_sched_switch, prev_state) == 20);
static_assert(offsetof(gn_sched_switch, next_comm) == 40);
static_assert(sizeof(gn_sched_wake) == 48);
static_assert(offsetof(gn_sched_wake, comm) == 32);
static_assert(sizeof(gn_sched_migrate) == 56);
static_assert(sizeof(gn_process_fork) == 64);
static_assert(sizeof(gn_process_exec) == 168);
static_assert(sizeof(gn_process_exit) == 40);
static_assert(sizeof(gn_task_rename) == 56);
static_assert(sizeof(gn_irq) == 24);
static_assert(sizeof(gn_softirq) == 24);
static_assert(sizeof(gn_vector) == 24);

}  // namespace gpunoise::collect
