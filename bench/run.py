#!/usr/bin/env python3
"""gpunoise's overhead beside the tracers an operator would otherwise use.

Each (tracer, workload) cell runs the workload traced and untraced in turn
(A B A B ..., --pairs times) so that the ratio traced/untraced holds on a
noisy machine. Figures per cell: workload throughput ratio (median, min-max),
tracer CPU (% of one CPU), events seen per second, lost events, nanoseconds
of extra system-wide CPU time per event, and output bytes per event.

The harness measures and reports; it never judges. It exits non-zero only
when it cannot run at all (not root, gpunoise not built). A tracer that cannot
run on this machine is listed with the reason.

Usage: sudo bench/run.py [--pairs 3] [--workloads w1,w2,w3] [--tracers ...]
                         [--out docs/performance.md]
"""

import argparse
import datetime
import os
import platform
import re
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GPUNOISE = os.path.join(ROOT, "build", "tools", "gpunoise", "gpunoise")
NETLOAD = os.path.join(ROOT, "build", "bench", "gpunoise-netload")

# The same kernel events for every tracer: scheduling, hard and soft irqs.
SCHED_IRQ_EVENTS = [
    "sched:sched_switch", "sched:sched_waking", "sched:sched_wakeup_new",
    "sched:sched_process_fork", "sched:sched_process_exec", "sched:sched_process_exit",
    "irq:irq_handler_entry", "irq:irq_handler_exit",
    "irq:softirq_entry", "irq:softirq_exit", "irq:softirq_raise",
]


def busy_jiffies():
    """System-wide non-idle CPU time from /proc/stat, in seconds."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------- workloads

class Workload:
    name = ""
    description = ""

    def available(self):
        return None  # or a reason string

    def run(self):
        """Runs once; returns throughput (higher is better) or None."""
        raise NotImplementedError


class PipeWorkload(Workload):
    name = "W1 sched pipe"
    description = "taskset -c 1 perf bench sched pipe -l {loops} (context-switch heavy)"

    def __init__(self, loops):
        self.loops = loops
        self.description = self.description.format(loops=loops)

    def available(self):
        if subprocess.run(["perf", "bench", "sched", "pipe", "-l", "10"],
                          capture_output=True).returncode != 0:
            return "perf bench is not available"
        return None

    def run(self):
        out = subprocess.run(["taskset", "-c", "1", "perf", "bench", "sched", "pipe", "-l",
                              str(self.loops)], capture_output=True, text=True).stdout
        m = re.search(r"([\d.]+)\s+ops/sec", out)
        return float(m.group(1)) if m else None


class NetWorkload(Workload):
    def __init__(self, mode, seconds):
        self.mode = mode
        self.seconds = seconds
        self.name = f"W2 {mode.upper()}"
        self.description = (f"{os.path.relpath(NETLOAD, ROOT)} --{mode} --seconds {seconds} "
                            "(veth between two network namespaces)")

    def available(self):
        if not os.access(NETLOAD, os.X_OK):
            return "the network load generator (build/bench/gpunoise-netload) is not built"
        return None

    def run(self):
        out = subprocess.run([NETLOAD, f"--{self.mode}", "--seconds", str(self.seconds)],
                             capture_output=True, text=True)
        m = re.search(r"throughput\s+([\d.]+)", out.stdout)
        return float(m.group(1)) if m else None


class IdleWorkload(Workload):
    name = "W3 idle"

    def __init__(self, seconds):
        self.seconds = seconds
        self.description = f"sleep {seconds} (an idle node: the floor of continuous mode)"

    def run(self):
        time.sleep(self.seconds)
        return None


# ------------------------------------------------------------------ tracers

class Tracer:
    name = ""
    ready_marker = None  # stderr text that says the tracer is attached
    settle_seconds = 2.0

    def available(self):
        return None

    def command(self, outdir):
        raise NotImplementedError

    def wrap(self, argv):
        return argv

    def parse(self, stdout, stderr, outdir):
        """Returns (events, lost, output_bytes) after the tracer exits."""
        return None, None, None


class GpunoiseRecord(Tracer):
    ready_marker = "recording"

    def __init__(self, events=None, name="gpunoise record"):
        self.events = events
        self.name = name

    def available(self):
        return None if os.access(GPUNOISE, os.X_OK) else "gpunoise is not built"

    def command(self, outdir):
        argv = [GPUNOISE, "record", "-o", os.path.join(outdir, "trace.pftrace")]
        if self.events:
            argv += ["--events", self.events]
        return argv

    def parse(self, stdout, stderr, outdir):
        events = sum(int(n) for n in re.findall(r"(\d+) events", stdout))
        m = re.search(r"(\d+) lost events", stdout)
        lost = int(m.group(1)) if m else None
        path = os.path.join(outdir, "trace.pftrace")
        size = os.path.getsize(path) if os.path.exists(path) else None
        return events, lost, size


class GpunoiseMonitor(Tracer):
    name = "gpunoise monitor"
    ready_marker = "listening"

    def available(self):
        if not os.access(GPUNOISE, os.X_OK):
            return "gpunoise is not built"
        r = subprocess.run([GPUNOISE, "monitor", "--help"], capture_output=True)
        return None if r.returncode == 0 else "gpunoise monitor is not available in this build"

    def command(self, outdir):
        return [GPUNOISE, "monitor", "--listen", "127.0.0.1:0"]


class Bpftrace(Tracer):
    name = "bpftrace count()"

    def available(self):
        return None if shutil_which("bpftrace") else "bpftrace is not installed (apt install bpftrace)"

    def command(self, outdir):
        probes = ",".join("tracepoint:" + e for e in SCHED_IRQ_EVENTS)
        return ["bpftrace", "-e", probes + " { @[probe] = count(); }"]

    def parse(self, stdout, stderr, outdir):
        counts = [int(n) for n in re.findall(r"\]:\s*(\d+)", stdout)]
        m = re.search(r"Lost (\d+) events", stdout + stderr)
        return (sum(counts) if counts else None), (int(m.group(1)) if m else 0), None


class Bcc(Tracer):
    name = "bcc softirqs + runqlat"

    def available(self):
        if not shutil_which("softirqs-bpfcc"):
            return "bcc tools are not installed (apt install bpfcc-tools)"
        r = subprocess.run(["timeout", "20", "softirqs-bpfcc", "1", "1"], capture_output=True, text=True)
        if r.returncode != 0:
            if "kernel headers" in r.stderr:
                return "bcc cannot compile its programs here: no kernel headers for this kernel"
            last = (r.stderr.strip().splitlines() or ["failed"])[-1]
            return f"bcc cannot run here: {last.strip()}"
        return None

    def command(self, outdir):
        return ["sh", "-c", "softirqs-bpfcc & runqlat-bpfcc & wait"]


class TraceCmd(Tracer):
    name = "trace-cmd record"

    def available(self):
        return None if shutil_which("trace-cmd") else "trace-cmd is not installed (apt install trace-cmd)"

    def command(self, outdir):
        out = os.path.join(outdir, "trace.dat")
        events = " ".join("-e " + e for e in SCHED_IRQ_EVENTS)
        # Some kernels refuse writes to ftrace_enabled (no function tracer);
        # trace-cmd insists on writing it, so give it a stand-in file in a
        # private mount namespace.
        stand_in = os.path.join(outdir, "ftrace_enabled")
        with open(stand_in, "w") as f:
            f.write("1\n")
        empty = os.path.join(outdir, "empty")
        open(empty, "w").close()
        # This kernel has no function tracer: trace-cmd's writes to these
        # control files fail and it gives up, so it gets empty stand-ins.
        binds = " ".join(
            f"[ -e /sys/kernel/tracing/{name} ] && mount --bind {empty} /sys/kernel/tracing/{name};"
            for name in ("set_ftrace_pid", "set_ftrace_filter", "set_ftrace_notrace",
                         "set_graph_function", "set_graph_notrace"))
        # trace-cmd crashes on SIGINT here when it has no command to follow,
        # so it follows a long sleep that the stop signal ends.
        script = (f"mount --bind {stand_in} /proc/sys/kernel/ftrace_enabled 2>/dev/null; {binds} "
                  f"exec trace-cmd record {events} -o {out} sleep 1000000")
        return ["unshare", "-m", "sh", "-c", script]

    def parse(self, stdout, stderr, outdir):
        out = os.path.join(outdir, "trace.dat")
        if not os.path.exists(out):
            return None, None, None
        report = subprocess.run(["trace-cmd", "report", "-i", out], capture_output=True, text=True)
        events = sum(1 for line in report.stdout.splitlines() if re.search(r"\d+\.\d+: \w+:", line))
        stats = subprocess.run(["trace-cmd", "report", "--stat", "-i", out], capture_output=True,
                               text=True).stdout
        lost = sum(int(n) for n in re.findall(r"overrun: (\d+)", stats))
        return events, lost, os.path.getsize(out)


class PerfRecord(Tracer):
    name = "perf record"

    def command(self, outdir):
        argv = ["perf", "record", "-q", "-a", "-o", os.path.join(outdir, "perf.data")]
        for e in SCHED_IRQ_EVENTS:
            argv += ["-e", e]
        return argv

    def parse(self, stdout, stderr, outdir):
        out = os.path.join(outdir, "perf.data")
        if not os.path.exists(out):
            return None, None, None
        stats = subprocess.run(["perf", "report", "--stats", "-i", out], capture_output=True,
                               text=True).stdout
        m = re.search(r"SAMPLE events:\s+(\d+)", stats)
        lost = re.search(r"LOST events:\s+(\d+)", stats)
        return (int(m.group(1)) if m else None), (int(lost.group(1)) if lost else 0), os.path.getsize(out)


def shutil_which(cmd):
    from shutil import which
    return which(cmd)


# ------------------------------------------------------------------ running

def start_tracer(tracer, outdir):
    proc = subprocess.Popen(tracer.command(outdir), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE,
                            start_new_session=True)
    proc.early_stderr = b""
    if tracer.ready_marker:
        import select
        deadline = time.time() + 30
        marker = tracer.ready_marker.encode()
        while time.time() < deadline and marker not in proc.early_stderr and proc.poll() is None:
            ready, _, _ = select.select([proc.stderr], [], [], 0.1)
            if ready:
                chunk = os.read(proc.stderr.fileno(), 65536)
                if not chunk:
                    break
                proc.early_stderr += chunk
    else:
        time.sleep(tracer.settle_seconds)
    return proc


def kill_group(proc, sig):
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


def stop_tracer(proc):
    # The whole group: some tracers (trace-cmd) leave per-CPU readers behind.
    kill_group(proc, signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        kill_group(proc, signal.SIGKILL)
        out, err = proc.communicate(timeout=10)
    kill_group(proc, signal.SIGKILL)
    decode = lambda b: (b or b"").decode(errors="replace")
    return decode(out), decode(proc.early_stderr) + decode(err)


def tracer_cpu_seconds(pid_rusage):
    return pid_rusage.ru_utime + pid_rusage.ru_stime


def run_cell(tracer, workload, pairs):
    ratios, tracer_cpu, events_rate, lost_total, bytes_per_event, ns_per_event = [], [], [], 0, [], []
    for _ in range(pairs):
        # B: untraced
        busy0 = busy_jiffies()
        t0 = time.monotonic()
        base = workload.run()
        base_wall = time.monotonic() - t0
        base_busy = busy_jiffies() - busy0
        # A: traced
        with tempfile.TemporaryDirectory(prefix="gpunoise-bench-") as outdir:
            proc = start_tracer(tracer, outdir)
            if proc.poll() is not None:
                kill_group(proc, signal.SIGKILL)
                out, err = proc.communicate(timeout=10)
                why = (proc.early_stderr + (err or b"") or out or b"").decode(errors="replace")
                return {"error": f"{tracer.name} exited at start: {why.strip()[:200]}"}
            busy0 = busy_jiffies()
            t0 = time.monotonic()
            traced = workload.run()
            wall = time.monotonic() - t0
            busy = busy_jiffies() - busy0
            # The workload's own child is reaped by now; the tracer is reaped
            # only at stop, so the difference is the tracer's whole CPU time.
            before = resource_children()
            t_stop = time.monotonic()
            out, err = stop_tracer(proc)
            cpu = resource_children() - before
            events, lost, size = tracer.parse(out, err, outdir)
        if base and traced:
            ratios.append(traced / base)
        tracer_cpu.append(cpu / max(wall + (t_stop - t0 - wall), 1e-9))
        if events:
            events_rate.append(events / wall)
            # Extra system-wide CPU for the same work, per event seen.
            extra = busy - base_busy * (wall / base_wall if workload.name.startswith("W3") else 1.0)
            ns_per_event.append(max(extra, 0.0) * 1e9 / events)
            if size:
                bytes_per_event.append(size / events)
        if lost:
            lost_total += lost
    return {
        "ratios": ratios, "tracer_cpu": tracer_cpu, "events_rate": events_rate,
        "lost": lost_total, "bytes_per_event": bytes_per_event, "ns_per_event": ns_per_event,
    }


def resource_children():
    import resource
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def fmt_ratio(values):
    if not values:
        return "n/a"
    return f"{statistics.median(values):.3f} [{min(values):.3f}–{max(values):.3f}]"


def fmt_median(values, fmt):
    return fmt.format(statistics.median(values)) if values else "n/a"


def machine_description():
    cpu = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return f"{os.cpu_count()} CPUs ({cpu}), Linux {platform.release()}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=3, help="traced/untraced pairs per cell (default 3)")
    ap.add_argument("--workloads", default="w1,w2udp,w2tcp,w3")
    ap.add_argument("--tracers", default="none,gpunoise,gpunoise-packets,monitor,bpftrace,bcc,trace-cmd,perf")
    ap.add_argument("--pipe-loops", type=int, default=600000)
    ap.add_argument("--net-seconds", type=int, default=5)
    ap.add_argument("--idle-seconds", type=int, default=10)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "performance.md"))
    args = ap.parse_args()

    if os.geteuid() != 0:
        sys.exit("bench: needs root (tracers load eBPF programs)")
    if not os.access(GPUNOISE, os.X_OK):
        sys.exit("bench: build gpunoise first (tools/setup.sh)")

    all_workloads = {
        "w1": PipeWorkload(args.pipe_loops),
        "w2udp": NetWorkload("udp", args.net_seconds),
        "w2tcp": NetWorkload("tcp", args.net_seconds),
        "w3": IdleWorkload(args.idle_seconds),
    }

    class NoTracer(Tracer):
        name = "control (no tracer)"

        def command(self, outdir):
            return ["sleep", "100000"]

    all_tracers = {
        "none": NoTracer(),
        "gpunoise": GpunoiseRecord(),
        "gpunoise-packets": GpunoiseRecord("sched,irq,softirq,net,net-packets",
                                           "gpunoise record + per-packet net events"),
        "monitor": GpunoiseMonitor(),
        "bpftrace": Bpftrace(),
        "bcc": Bcc(),
        "trace-cmd": TraceCmd(),
        "perf": PerfRecord(),
    }
    workloads = [all_workloads[w] for w in args.workloads.split(",")]
    tracers = [all_tracers[t] for t in args.tracers.split(",")]

    rows = []
    for tracer in tracers:
        reason = tracer.available()
        for workload in workloads:
            why = reason or workload.available()
            if why:
                rows.append((tracer.name, workload.name, {"error": why}))
                print(f"{tracer.name} / {workload.name}: cannot run: {why}", flush=True)
                continue
            print(f"{tracer.name} / {workload.name} ...", flush=True)
            cell = run_cell(tracer, workload, args.pairs)
            rows.append((tracer.name, workload.name, cell))
            print("   ", cell if "error" in cell else fmt_ratio(cell["ratios"]), flush=True)

    write_report(args, workloads, rows)
    print(f"bench: wrote {args.out}")


def write_report(args, workloads, rows):
    lines = [
        "# Performance: gpunoise beside the tracers it replaces",
        "",
        f"Measured {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC on {machine_description()}.",
        "",
        f"Command: `sudo bench/run.py --pairs {args.pairs} --workloads {args.workloads} "
        f"--tracers {args.tracers}`",
        "",
        "Workloads:",
        "",
    ]
    for w in workloads:
        lines.append(f"- **{w.name}**: `{w.description}`")
    lines += [
        "",
        "Each cell: workload throughput traced/untraced, median [min–max] over the pairs (A B A B ...) | "
        "tracer CPU (% of one CPU) | events seen per second | lost events | ns of extra system-wide CPU "
        "per event | output bytes per event. W3 has no throughput; its figure is the tracer's CPU.",
        "",
        "| tracer | workload | throughput ratio | tracer CPU | events/s | lost | ns/event | bytes/event |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for tracer, workload, cell in rows:
        if "error" in cell:
            lines.append(f"| {tracer} | {workload} | cannot run: {cell['error']} | | | | | |")
            continue
        lines.append("| {} | {} | {} | {} | {} | {} | {} | {} |".format(
            tracer, workload, fmt_ratio(cell["ratios"]),
            fmt_median([100 * c for c in cell["tracer_cpu"]], "{:.2f}%"),
            fmt_median(cell["events_rate"], "{:,.0f}"), cell["lost"],
            fmt_median(cell["ns_per_event"], "{:.0f}"),
            fmt_median(cell["bytes_per_event"], "{:.1f}")))
    lines.append("")
    with open(args.out, "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
