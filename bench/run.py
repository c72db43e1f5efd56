#!/usr/bin/env python3
"""gpunoise's overhead beside the tracers an operator would otherwise use.

Each (tracer, workload) cell runs the workload untraced and traced in pairs
(--pairs, order alternating) so that ratios hold on a noisy machine, and
reports per cell: throughput traced/untraced (median [min-max]), the
tracer's own CPU, events/s it saw, events it lost (its own report), ns of
extra system-wide CPU per event, and output bytes per event. Then the
micro-benchmarks, then where each target stands.

The harness measures and reports; it never judges. It exits non-zero only
when it cannot run at all (not root, gpunoise not built, bad flags); a
tracer or workload that cannot run here gets "cannot run: <reason>" in its
cell, and a missed target is a word in a table.

  sudo bench/run.sh                 # installs the peer tools, builds, runs this
  sudo bench/run.py --quick         # smoke run: 1 pair, short workloads
  sudo bench/run.py --workloads w1 --tracers none,gpunoise,trace-cmd
"""

import argparse
import os
import shlex
import signal
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from harness import cells as cells_mod  # noqa: E402
from harness import micro as micro_mod  # noqa: E402
from harness import report, system, tracers, workloads  # noqa: E402

ALL_WORKLOADS = "w1,w2udp,w2tcp,w3"
ALL_TRACERS = "none,floor,floor-store,floor-classic,floor-classic-store,floor-store-hooks,gpunoise,gpunoise-nonet,gpunoise-packet-counters,gpunoise-same,gpunoise-packets,monitor,monitor-flight,bpftrace,bcc,trace-cmd,perf"


def log(text):
    print(text, flush=True)


def usage_error(message):
    print(f"usage: bench/run.py: {message}", file=sys.stderr)
    sys.exit(2)


def interrupt(_signum, _frame):
    raise KeyboardInterrupt


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: 1 pair, short workloads, short micro-benchmarks; writes "
                         "build/bench-quick.md unless --out is given, and leaves README.md alone")
    ap.add_argument("--pairs", type=int, help="traced/untraced pairs per cell (default 3; --quick: 1)")
    ap.add_argument("--workloads", default=ALL_WORKLOADS, help=f"comma-separated (default {ALL_WORKLOADS})")
    ap.add_argument("--tracers", default=ALL_TRACERS, help=f"comma-separated (default {ALL_TRACERS})")
    ap.add_argument("--pipe-loops", type=int, help="W1 loops (default 600000; --quick: 100000)")
    ap.add_argument("--net-seconds", type=int, help="W2 seconds per run (default 5; --quick: 2)")
    ap.add_argument("--idle-seconds", type=int, help="W3 seconds per run (default 10; --quick: 3)")
    ap.add_argument("--no-micro", action="store_true", help="skip the micro-benchmarks")
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", help="markdown to write the results into, between its markers "
                                  "(default docs/performance.md; --quick: build/bench-quick.md)")
    ap.add_argument("--readme", help="README to write the targets table into, between its markers "
                                     "(default README.md; --quick: none)")
    args = ap.parse_args(argv)
    quick = args.quick
    default = lambda value, quick_value, full_value: value if value is not None else (
        quick_value if quick else full_value)
    args.pairs = default(args.pairs, 1, 3)
    args.pipe_loops = default(args.pipe_loops, 100000, 600000)
    args.net_seconds = default(args.net_seconds, 2, 5)
    args.idle_seconds = default(args.idle_seconds, 3, 10)
    if args.out is None:
        args.out = os.path.join(args.build_dir, "bench-quick.md") if quick else os.path.join(ROOT, "docs", "performance.md")
    if args.readme is None:
        args.readme = "" if quick else os.path.join(ROOT, "README.md")
    if args.pairs < 1 or args.pipe_loops < 1 or args.net_seconds < 1 or args.idle_seconds < 1:
        ap.error("--pairs, --pipe-loops, --net-seconds and --idle-seconds must be positive")
    if args.net_seconds > 600 or args.idle_seconds > 3600:
        ap.error("--net-seconds is at most 600 and --idle-seconds at most 3600 (every load is bounded)")
    return args


def pick(keys_text, table, what):
    out = []
    for key in filter(None, keys_text.split(",")):
        if key not in table:
            usage_error(f"unknown {what} {key!r} (known: {', '.join(table)})")
        out.append(table[key])
    return out


def main(argv):
    args = parse_args(argv)

    gpunoise = os.path.join(args.build_dir, "tools", "gpunoise", "gpunoise")
    netload = os.path.join(args.build_dir, "bench", "gpunoise-netload")
    floor = os.path.join(args.build_dir, "bench", "floor", "gpunoise-floor")
    ncpu = os.cpu_count() or 1
    last_cpu = ncpu - 1
    all_workloads = {
        # MEASURED.md's layout: W1 on the last CPU, W2's sender on CPU 0 and
        # receiver on CPU 1 (the same CPU on a one-CPU machine).
        "w1": workloads.PipeWorkload(args.pipe_loops, last_cpu),
        "w2udp": workloads.NetWorkload(netload, "udp", args.net_seconds, 0, min(1, last_cpu)),
        "w2tcp": workloads.NetWorkload(netload, "tcp", args.net_seconds, 0, min(1, last_cpu)),
        "w3": workloads.IdleWorkload(args.idle_seconds),
    }
    peer_tps = tracers.peer_tracepoints() if os.path.isdir(tracers.TRACEFS + "/events") else []
    all_tracers = {
        "none": tracers.NoTracer(),
        "floor": tracers.Floor(floor, peer_tps, "raw", store=False),
        "floor-store": tracers.Floor(floor, peer_tps, "raw", store=True),
        "floor-classic": tracers.Floor(floor, peer_tps, "classic", store=False),
        "floor-classic-store": tracers.Floor(floor, peer_tps, "classic", store=True),
        # The default's own hooks: the recorded tracepoints and those its
        # `net` and `node` groups count on.
        "floor-store-hooks": tracers.Floor(
            floor, peer_tps + tracers.existing_tracepoints(tracers.GPUNOISE_DEFAULT_EXTRA_TRACEPOINTS),
            "raw", store=True, hooks="-hooks"),
        "gpunoise": tracers.GpunoiseRecord(gpunoise, "gpunoise", "gpunoise record"),
        # Beside "gpunoise": what the default `net` group (in-kernel counters
        # per device, queue and CPU; NAPI polls; drops) costs on its own.
        "gpunoise-nonet": tracers.GpunoiseRecord(gpunoise, "gpunoise-nonet",
                                                 "gpunoise record, default events without net (sched,irq,softirq,node)",
                                                 "sched,irq,softirq,node"),
        # Beside "gpunoise": packets and bytes per device, queue and CPU from
        # a program on every packet, rather than the devices' statistics.
        "gpunoise-packet-counters": tracers.GpunoiseRecord(
            gpunoise, "gpunoise-packet-counters", "gpunoise record --net-packet-counters on",
            extra_args=["--net-packet-counters", "on"]),
        "gpunoise-same": tracers.GpunoiseRecord(gpunoise, "gpunoise-same",
                                                "gpunoise record, the peers' events (sched,irq,softirq)",
                                                "sched,irq,softirq"),
        "gpunoise-packets": tracers.GpunoiseRecord(gpunoise, "gpunoise-packets",
                                                   "gpunoise record + per-packet net events",
                                                   "sched,irq,softirq,net,net-packets,node"),
        # Opt-in (not in ALL_TRACERS): what zlib compression saves and costs.
        "gpunoise-plain": tracers.GpunoiseRecord(gpunoise, "gpunoise-plain",
                                                 "gpunoise record --compress none",
                                                 extra_args=["--compress", "none"]),
        # Opt-in: zlib on every block, against the default (auto: zlib only
        # while the node has CPU to spare).
        "gpunoise-zlib": tracers.GpunoiseRecord(gpunoise, "gpunoise-zlib",
                                                "gpunoise record --compress zlib",
                                                extra_args=["--compress", "zlib"]),
        # Opt-in: one ring reservation per record, for A/B against the
        # default per-CPU batches in the kernel (issue 18).
        "gpunoise-direct": tracers.GpunoiseRecord(gpunoise, "gpunoise-direct",
                                                  "gpunoise record --no-batching",
                                                  extra_args=["--no-batching"]),
        # Opt-in: the drain under SCHED_OTHER throughout, against the default
        # (SCHED_IDLE while its rings have room, record/drain_priority.h).
        "gpunoise-drain-normal": tracers.GpunoiseRecord(gpunoise, "gpunoise-drain-normal",
                                                        "gpunoise record --drain-priority normal",
                                                        extra_args=["--drain-priority", "normal"]),
        # Opt-in: the deflate on a thread of its own beside the drain (the
        # default from 4 CPUs; off on smaller machines such as the 2-CPU VM).
        "gpunoise-deflate-thread": tracers.GpunoiseRecord(gpunoise, "gpunoise-deflate-thread",
                                                          "gpunoise record --deflate-thread on",
                                                          extra_args=["--deflate-thread", "on"]),
        # Opt-in: two drain lanes (the default from 129 online CPUs).
        "gpunoise-lanes": tracers.GpunoiseRecord(gpunoise, "gpunoise-lanes",
                                                 "gpunoise record --drain-threads 2",
                                                 extra_args=["--drain-threads", "2"]),
        "monitor": tracers.GpunoiseMonitor(gpunoise),
        "monitor-flight": tracers.GpunoiseMonitor(gpunoise, "monitor-flight",
                                                  "gpunoise monitor --flight-recorder 20s",
                                                  flight_recorder="20s"),
        "bpftrace": tracers.Bpftrace(peer_tps),
        "bcc": tracers.Bcc(),
        "trace-cmd": tracers.TraceCmd(peer_tps),
        "perf": tracers.PerfRecord(peer_tps),
    }
    chosen_workloads = pick(args.workloads, all_workloads, "workload")
    chosen_tracers = pick(args.tracers, all_tracers, "tracer")

    if os.geteuid() != 0:
        print("bench: needs root (the tracers load eBPF programs; W2 creates network namespaces)",
              file=sys.stderr)
        return 1
    if not os.access(gpunoise, os.X_OK):
        print(f"bench: gpunoise is not built at {gpunoise} (run tools/setup.sh or bench/run.sh)", file=sys.stderr)
        return 1
    if not peer_tps:
        print(f"bench: tracefs is not mounted at {tracers.TRACEFS} (mount -t tracefs nodev {tracers.TRACEFS})",
              file=sys.stderr)
        return 1

    # SIGTERM unwinds like Ctrl-C, so tracers are stopped and cgroups removed.
    signal.signal(signal.SIGTERM, interrupt)
    system.remove_stale_cgroups()

    run = {
        "quick": args.quick,
        "machine": system.machine_description(),
        "load_start": system.load_average(),
        "command": "sudo bench/run.py " + " ".join(shlex.quote(a) for a in argv) if argv else "sudo bench/run.py",
        "pairs": args.pairs,
        "tracepoints": peer_tps,
        "cpu_method": "",
    }
    if os.environ.get("GPUNOISE_BENCH_COMMAND"):
        run["command"] = os.environ["GPUNOISE_BENCH_COMMAND"]

    results = []
    reasons = {t.key: t.available() for t in chosen_tracers}
    for workload in chosen_workloads:
        wl_reason = workload.available()
        for tracer in chosen_tracers:
            why = reasons[tracer.key] or wl_reason
            if why:
                log(f"{tracer.name} / {workload.name}: cannot run: {why}")
                results.append(cells_mod.CellResult(tracer.name, workload.name, tracer.key, workload.key,
                                                    error=why))
                continue
            log(f"{tracer.name} / {workload.name} ({args.pairs} pairs) ...")
            cell = cells_mod.run_cell(tracer, workload, args.pairs, log)
            if cell.error:
                log(f"    cannot run: {cell.error}")
            run["cpu_method"] = run["cpu_method"] or cell.cpu_method
            results.append(cell)

    micro = []
    if not args.no_micro:
        micro = micro_mod.run_micro(args.build_dir, last_cpu, 0.05 if args.quick else 0.5,
                                    1 if args.quick else 3, log)
    run["load_end"] = system.load_average()
    run["cpu_method"] = {"cgroup": "a cgroup v2 per tracer (cpu.stat usage_usec)",
                         "process group": "/proc of the tracer's process group (no cgroup v2)"}.get(
                             run["cpu_method"], "n/a")

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    report.replace_block(args.out, report.RESULTS_BEGIN, report.RESULTS_END,
                         report.results_block(run, chosen_workloads, results, micro),
                         create_heading="# gpunoise benchmark results")
    log(f"bench: wrote {args.out}")
    if args.readme:
        report.replace_block(args.readme, report.TARGETS_BEGIN, report.TARGETS_END,
                             report.targets_block(run, results, micro))
        log(f"bench: wrote the targets table into {args.readme}")
    for line in report.targets_table(results, micro):
        log(line)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        print("bench: interrupted; tracers stopped, nothing written", file=sys.stderr)
        sys.exit(130)
