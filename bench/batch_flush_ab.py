#!/usr/bin/env python3
"""What the pre-drain batch flushes of `gpunoise record --batching` cost, two
builds side by side (collect/batch_flush.h: a flush program run per CPU and
stream, each an IPI to that CPU; since the batch state words are mapped,
only CPUs whose batch holds records are flushed).

For each scenario, in interleaved pairs (the order flips every pair), each
build records for --duration seconds; over a steady window in the middle it
reads
  flushes/s: runs of the flush programs (gn_sched_flush, gn_irq_flush) per
             second, from the kernel's program stats (bpf_stats_enabled),
  flush ns:  the kernel's ns per flush run (the program only, not the IPI),
  cpu ms/s:  the recorder's own CPU per second of recording, all threads
             (/proc/PID/task/*/schedstat), which includes waiting for each IPI,
  cpu ns/switch: the same per gn_sched_switch run (the recorder's cost per
             event, when switches are most of the events),
  switch ns: the kernel's ns per gn_sched_switch run (the batch's own cost),
and prints median and range per build, and per pair the ratio to the first
build. Scenarios:
  pid-idle:  --events sched --pid of a sleeping process: no batch ever
             holds a record (one job on a node whose other CPUs it never uses),
  all:       --events sched,irq,softirq on every CPU, at whatever load the
             machine has,
  pipe:      the same, with `perf bench sched pipe` on CPU 1 (a switch storm).
Root; every run and load is bounded in time.

usage: sudo bench/batch_flush_ab.py [--pairs N] [--duration D] [--scenarios a,b] [--record-args '...']
                                   NAME=BINARY NAME=BINARY...
"""
import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import bpf_stats  # noqa: E402

FLUSH_PROGRAMS = ("gn_sched_flush", "gn_irq_flush")


def cpu_seconds(pid):
    """CPU time of every thread of `pid` so far, from the scheduler's own
    account (schedstat, ns; /proc/PID/stat counts in 10 ms ticks)."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return total / 1e9


def program_stats(pid):
    """(flush runs, flush ns, gn_sched_switch runs, its ns) so far."""
    progs = bpf_stats.programs_of([pid])
    flush = [p for p in progs if p.name in FLUSH_PROGRAMS]
    switch = [p for p in progs if p.name == "gn_sched_switch"]
    return (sum(p.runs for p in flush), sum(p.run_time_ns for p in flush),
            sum(p.runs for p in switch), sum(p.run_time_ns for p in switch))


def run_once(binary, scenario, duration, out, idle_pid, extra):
    argv = [binary, "record", "--batching", "-d", str(duration), "-o", out, "--compress", "none"] + extra
    if scenario == "pid-idle":
        argv += ["--events", "sched", "--pid", str(idle_pid)]
    else:
        argv += ["--events", "sched,irq,softirq"]
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    load = None
    try:
        for line in p.stderr:
            if line.startswith("gpunoise: recording "):
                break
        else:
            raise RuntimeError(f"{binary} did not start")
        if scenario == "pipe":
            load = subprocess.Popen(["timeout", str(duration), "taskset", "-c", "1", "perf", "bench", "sched",
                                     "pipe", "-l", "100000000"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        window = max(1.0, duration - 3.0)
        time.sleep(1.0)
        c0, s0, w0 = cpu_seconds(p.pid), program_stats(p.pid), time.monotonic()
        time.sleep(window)
        c1, s1, w1 = cpu_seconds(p.pid), program_stats(p.pid), time.monotonic()
    finally:
        if load:
            load.send_signal(signal.SIGINT)
            load.wait(timeout=30)
        p.send_signal(signal.SIGINT)
        p.stderr.read()
        p.wait(timeout=60)
    wall = w1 - w0
    d = [b - a for a, b in zip(s0, s1)]
    return {"flushes/s": d[0] / wall, "flush ns": d[1] / d[0] if d[0] else 0.0,
            "cpu ms/s": (c1 - c0) / wall * 1000,
            "cpu ns/switch": (c1 - c0) * 1e9 / d[2] if d[2] else 0.0, "switches/s": d[2] / wall,
            "switch ns": d[3] / d[2] if d[2] else 0.0}


def span(values):
    return f"{statistics.median(values):.3g} [{min(values):.3g}-{max(values):.3g}]"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--duration", type=int, default=7, help="seconds per recording")
    ap.add_argument("--scenarios", default="pid-idle,all,pipe")
    ap.add_argument("--record-args", default="",
                    help="more options for record, e.g. '--drain-batch 256' (a batch counts as one record)")
    ap.add_argument("builds", nargs="+", help="NAME=BINARY")
    args = ap.parse_args()
    builds = [b.split("=", 1) for b in args.builds]
    if len(builds) < 2 or any(len(b) != 2 for b in builds):
        sys.exit("batch_flush_ab: give two or more NAME=BINARY")
    if os.geteuid() != 0:
        sys.exit("batch_flush_ab: needs root")
    idle = subprocess.Popen(["sleep", str(args.pairs * len(builds) * 3 * (args.duration + 10))])
    try:
        with bpf_stats.StatsEnabled(), tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "t.pftrace")
            for scenario in args.scenarios.split(","):
                results = {name: [] for name, _ in builds}
                for pair in range(args.pairs):
                    order = builds if pair % 2 == 0 else list(reversed(builds))
                    for name, binary in order:
                        results[name].append(run_once(binary, scenario, args.duration, out, idle.pid,
                                                      args.record_args.split()))
                print(f"{scenario}: {args.pairs} pairs, {args.duration} s each, load average "
                      f"{os.getloadavg()[0]:.1f}")
                first = builds[0][0]
                for name, _ in builds:
                    rows = results[name]
                    line = ", ".join(f"{k} {span([r[k] for r in rows])}" for k in rows[0])
                    print(f"  {name}: {line}")
                    if name != first:
                        for k in ("flushes/s", "cpu ms/s", "cpu ns/switch", "switch ns"):
                            ratios = [r[k] / f[k] for r, f in zip(rows, results[first]) if f[k]]
                            if ratios:
                                print(f"    {name}/{first} {k} per pair: {span(ratios)}")
                sys.stdout.flush()
    finally:
        idle.kill()
        idle.wait()


if __name__ == "__main__":
    main()
