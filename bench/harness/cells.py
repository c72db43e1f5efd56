"""One table cell: a tracer on a workload, measured in traced/untraced pairs.

Pairs alternate their order (untraced first, then traced first, ...) so
that drift on a shared machine cancels rather than favouring one half.
Per pair:

- throughput ratio = traced throughput / untraced throughput;
- tracer CPU = CPU time of the tracer's process tree (its own cgroup)
  during the workload, as a share of one CPU;
- events/s = events the tracer reported / its time from attached to stop;
- extra CPU = system-wide busy CPU of the traced run, plus the tracer's own
  CPU after the run (flushing, writing, post-processing what it captured),
  minus the untraced run's busy CPU scaled to the same work. Fixed-work
  workloads (W1) scale by 1; fixed-time ones (W2) by the work each half did,
  because a slowed flood does less work in the same time, not more CPU;
- ns/event = extra CPU / events in the run. For W1 and W2 all events the
  tracer reported count (the idle moments before and after the run add a
  few); on an idle node (W3) the count is prorated to the run's share of
  the tracer's life;
- bytes/event = output file size / events; bytes per sched event = size /
  scheduler events (an upper bound: the file holds the other events too),
  given only where sched events are at least half of the events;
- lost = what the tracer itself reports, summed over the pairs.
"""

import dataclasses
import os
import signal
import statistics
import subprocess
import tempfile
import time

from . import bpf_stats, system
from .tracers import tree_pids as tracers_tree
from .workloads import WorkloadError

READY_TIMEOUT_S = 90


@dataclasses.dataclass
class PairResult:
    ratio: float = None
    base_throughput: float = None
    traced_throughput: float = None
    tracer_cpu: float = None         # share of one CPU during the run
    tracer_after_s: float = None     # tracer CPU after the run, to its exit
    events: int = None
    events_per_s: float = None
    lost: int = None
    extra_cpu_s: float = None
    ns_per_event: float = None
    bytes_per_event: float = None
    bytes_per_sched_event: float = None
    uncompressed_bytes_per_event: float = None
    unreported_switches: int = None
    kernel_skipped: int = None
    untimed_softirqs: int = None
    base_delivered: float = None     # W2 UDP: datagrams received / sent, untraced
    traced_delivered: float = None   # the same, traced
    note: str = ""


@dataclasses.dataclass
class CellResult:
    tracer: str
    workload: str
    tracer_key: str = ""
    workload_key: str = ""
    error: str = None
    pairs: list = dataclasses.field(default_factory=list)
    cpu_method: str = ""
    # From one extra traced run with kernel.bpf_stats_enabled on (never one
    # of the pairs): the tracer's BPF programs, and the events it reported.
    programs: list = None
    program_events: int = None
    programs_error: str = None

    def values(self, field):
        return [getattr(p, field) for p in self.pairs if getattr(p, field) is not None]

    def lost_total(self):
        lost = self.values("lost")
        return sum(lost) if lost else None

    def notes(self):
        notes = sorted({p.note for p in self.pairs if p.note})
        unreported = self.values("unreported_switches")
        if unreported and sum(unreported):
            notes.append(f"{sum(unreported):,} context switches the kernel never delivered to a tracepoint "
                         "(gpunoise's switch-chain check; not ring loss)")
        untimed = self.values("untimed_softirqs")
        if untimed and sum(untimed):
            notes.append(f"{sum(untimed):,} NET_RX softirqs counted without timing (storm sampling, record "
                         "--netrx-sample): each is two events (entry and exit) in events/s and ns/event, as the "
                         "peers write both")
        skipped = self.values("kernel_skipped")
        if skipped and sum(skipped):
            notes.append(f"{sum(skipped):,} program runs the kernel skipped, the program already running on "
                         "that CPU (lost events, but not ring loss: not in the lost column)")
        return notes


class TracerFailed(Exception):
    pass


def run_traced(tracer, workload, outdir, before_stop=None):
    """Starts the tracer, runs the workload once under it, stops it.
    before_stop(pids) runs between the workload's end and the stop signal,
    with the tracer's process tree. Returns (WorkloadRun, TracerOutput, timings)."""
    stdout = open(os.path.join(outdir, tracer.stdout_name), "w")
    stderr = open(os.path.join(outdir, tracer.stderr_name), "w")
    cpu = system.TreeCpu()
    tracer.before_start()
    try:
        proc = subprocess.Popen(tracer.argv(outdir), stdin=subprocess.DEVNULL, stdout=stdout,
                                stderr=stderr, start_new_session=True, preexec_fn=cpu.preexec)
        cpu.attach_group(proc.pid)
        try:
            deadline = time.monotonic() + READY_TIMEOUT_S
            while not tracer.ready(proc.pid, outdir):
                if proc.poll() is not None:
                    raise TracerFailed(f"exited at start ({proc.returncode}): "
                                       + (tracer.stderr(outdir) or tracer.stdout(outdir)).strip()[-300:])
                if time.monotonic() > deadline:
                    raise TracerFailed(f"not attached after {READY_TIMEOUT_S} s")
                time.sleep(0.05)
            time.sleep(tracer.settle_s())
            t_ready = time.monotonic()
            cpu_start = cpu.seconds()
            run = workload.run()
            cpu_end = cpu.seconds()
            t_stop = time.monotonic()
            if proc.poll() is not None:
                raise TracerFailed(f"exited during the run ({proc.returncode}): "
                                   + tracer.stderr(outdir).strip()[-300:])
            if before_stop:
                before_stop(tracers_tree(proc.pid))
            tracer.before_signal(outdir)
            system.signal_group(proc.pid, signal.SIGINT)
            try:
                proc.wait(timeout=tracer.stop_timeout_s)
            except subprocess.TimeoutExpired:
                system.signal_group(proc.pid, signal.SIGKILL)
                proc.wait()
                raise TracerFailed(f"did not stop within {tracer.stop_timeout_s} s of SIGINT")
            # The cgroup keeps the count after its last process exits; the
            # process-group fallback loses it, so it reads the last sample.
            cpu_exit = cpu.seconds() if cpu.path else cpu_end
        finally:
            system.signal_group(proc.pid, signal.SIGKILL)
            if proc.poll() is None:
                proc.wait()
    finally:
        stdout.close()
        stderr.close()
        method = cpu.method
        cpu.remove()
        tracer.after_stop()
    output = tracer.parse(outdir)
    timings = {"cpu_run_s": cpu_end - cpu_start, "cpu_after_s": cpu_exit - cpu_end,
               "life_s": t_stop - t_ready, "method": method}
    return run, output, timings


def measure_pair(tracer, workload, base, traced, output, timings):
    p = PairResult(note=output.note, unreported_switches=output.unreported_switches,
                   kernel_skipped=output.kernel_skipped, untimed_softirqs=output.untimed_softirqs)
    if base.throughput and traced.throughput:
        p.ratio = traced.throughput / base.throughput
        p.base_throughput = base.throughput
        p.traced_throughput = traced.throughput
    p.base_delivered, p.traced_delivered = base.delivered, traced.delivered
    p.tracer_cpu = timings["cpu_run_s"] / traced.wall_s if traced.wall_s > 0 else None
    p.tracer_after_s = timings["cpu_after_s"]
    p.lost = output.lost
    if base.work > 0:
        p.extra_cpu_s = traced.busy_cpu_s + timings["cpu_after_s"] - base.busy_cpu_s * (traced.work / base.work)
    if output.events:
        p.events = output.events
        life = max(timings["life_s"], 1e-9)
        p.events_per_s = output.events / life
        in_run = output.events * min(traced.wall_s / life, 1.0) if workload.uniform_rate else output.events
        if p.extra_cpu_s is not None and in_run > 0:
            p.ns_per_event = p.extra_cpu_s * 1e9 / in_run
        if output.output_bytes:
            p.bytes_per_event = output.output_bytes / output.events
        if output.uncompressed_bytes:
            p.uncompressed_bytes_per_event = output.uncompressed_bytes / output.events
    # Meaningful only where the file is mostly sched events (W1); elsewhere
    # the other events' bytes would swamp it.
    if output.output_bytes and output.sched_events and output.events and 2 * output.sched_events >= output.events:
        p.bytes_per_sched_event = output.output_bytes / output.sched_events
    return p


def run_cell(tracer, workload, pairs, log):
    cell = CellResult(tracer.name, workload.name, tracer.key, workload.key)
    for i in range(pairs):
        try:
            with tempfile.TemporaryDirectory(prefix=f"gpunoise-bench-{os.getpid()}-") as outdir:
                if i % 2 == 0:
                    base = workload.run()
                    traced, output, timings = run_traced(tracer, workload, outdir)
                else:
                    traced, output, timings = run_traced(tracer, workload, outdir)
                    base = workload.run()
        except (TracerFailed, WorkloadError) as e:
            cell.error = f"{tracer.name}: {e}" if isinstance(e, TracerFailed) else str(e)
            return cell
        cell.cpu_method = timings["method"]
        pair = measure_pair(tracer, workload, base, traced, output, timings)
        cell.pairs.append(pair)
        log(f"    pair {i + 1}/{pairs}: {describe_pair(pair, workload)}")
    if getattr(tracer, "has_bpf", False):
        measure_program_cost(tracer, workload, cell, log)
    return cell


def measure_program_cost(tracer, workload, cell, log):
    """One more traced run, with the kernel timing every program run."""
    seen = []
    try:
        with tempfile.TemporaryDirectory(prefix=f"gpunoise-bench-{os.getpid()}-") as outdir:
            with bpf_stats.StatsEnabled():
                _, output, _ = run_traced(tracer, workload, outdir,
                                          before_stop=lambda pids: seen.extend(bpf_stats.programs_of(pids)))
    except (TracerFailed, WorkloadError, RuntimeError, OSError) as e:
        cell.programs_error = str(e)
        log(f"    program cost: cannot measure: {e}")
        return
    cell.programs = seen
    cell.program_events = output.events
    log(f"    program cost: {describe_programs(seen, output.events)}")


def describe_programs(programs, events):
    total = bpf_stats.total_ns_per_run(programs)
    if total is None:
        return "no program ran"
    ns = sum(p.run_time_ns for p in programs)
    text = f"{len(programs)} programs, {total:.0f} ns per run"
    if events:
        text += f", {ns / events:.0f} ns of program time per reported event"
    return text


def describe_pair(p, workload):
    parts = []
    if p.ratio is not None:
        parts.append(f"ratio {p.ratio:.3f} ({p.traced_throughput:,.4g}/{p.base_throughput:,.4g} {workload.unit})")
    if p.traced_delivered is not None and p.base_delivered is not None:
        parts.append(f"delivered {p.traced_delivered:.3f} (untraced {p.base_delivered:.3f})")
    if p.tracer_cpu is not None:
        parts.append(f"tracer CPU {100 * p.tracer_cpu:.2f}%")
    if p.events_per_s is not None:
        parts.append(f"{p.events_per_s:,.0f} events/s")
    if p.lost is not None:
        parts.append(f"lost {p.lost}")
    if p.ns_per_event is not None:
        parts.append(f"{p.ns_per_event:,.0f} ns/event")
    if p.bytes_per_event is not None:
        parts.append(f"{p.bytes_per_event:.1f} B/event")
    if p.bytes_per_sched_event is not None:
        parts.append(f"{p.bytes_per_sched_event:.1f} B/sched event")
    return ", ".join(parts) or "no figures"


def median_range(values, fmt="{:.3f}"):
    """'median [min–max]', or the value alone for one pair, or 'n/a'."""
    if not values:
        return "n/a"
    med = fmt.format(statistics.median(values))
    if len(values) == 1:
        return med
    return f"{med} [{fmt.format(min(values))}–{fmt.format(max(values))}]"
