"""Markdown for docs/performance.md and the README: the machine, the exact
command, the whole-tool table, the micro-benchmarks, and where each target
stands. Targets are read, never asserted: a miss changes a word in a table,
not the exit status."""

import os
import re
import statistics

from . import bpf_stats
from .cells import median_range
from .micro import REPORT_PARSING_BENCHMARK

RESULTS_BEGIN = "<!-- bench:results:begin (bench/run.py writes from here to the end marker) -->"
RESULTS_END = "<!-- bench:results:end -->"
TARGETS_BEGIN = "<!-- bench:targets:begin (bench/run.py writes from here to the end marker) -->"
TARGETS_END = "<!-- bench:targets:end -->"

MET, MISSED = "met", "**missed**"


def fmt_count(v):
    if v is None:
        return "n/a"
    return f"{v:,.0f}"


def fmt_throughput(v):
    if v is None:
        return "n/a"
    return f"{v:,.0f}" if v >= 100 else f"{v:.2f}"


def cell_row(cell, workload_unit):
    if cell.error:
        return f"| {cell.tracer} | {cell.workload} | cannot run: {cell.error} | | | | | | | |"
    lost = cell.lost_total()
    lost_text = "n/a" if lost is None else f"{lost:,}"
    base = cell.values("base_throughput")
    return "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
        cell.tracer, cell.workload,
        median_range(cell.values("ratio")),
        (fmt_throughput(statistics.median(base)) + f" {workload_unit}") if base else "n/a",
        median_range([100 * v for v in cell.values("tracer_cpu")], "{:.2f}"),
        fmt_count(statistics.median(cell.values("events_per_s"))) if cell.values("events_per_s") else "n/a",
        lost_text,
        median_range(cell.values("ns_per_event"), "{:,.0f}"),
        median_range(cell.values("bytes_per_event"), "{:.1f}"),
        median_range(cell.values("bytes_per_sched_event"), "{:.1f}"))


class Figures:
    """Lookups of medians by (tracer key, workload key)."""

    def __init__(self, cells, micro):
        self.cells = {(c.tracer_key, c.workload_key): c for c in cells}
        self.micro = micro

    def cell(self, tracer, workload):
        return self.cells.get((tracer, workload))

    def why_missing(self, tracer, workload):
        c = self.cell(tracer, workload)
        if c is None:
            return "not run"
        return c.error or "no figure"

    def median(self, tracer, workload, field):
        c = self.cell(tracer, workload)
        if c is None or c.error:
            return None
        values = c.values(field)
        return statistics.median(values) if values else None

    def program_ns_per_event(self, tracer, workload):
        """The kernel's program time per reported event, from the cell's
        bpf_stats run (None where it did not run)."""
        c = self.cell(tracer, workload)
        if c is None or c.error or not c.programs or not c.program_events:
            return None
        return sum(p.run_time_ns for p in c.programs) / c.program_events

    def lost(self, tracer, workload):
        c = self.cell(tracer, workload)
        return None if c is None or c.error else c.lost_total()


def target_cost_per_event(f):
    parts, verdicts = [], []
    for wl, label in (("w1", "W1"), ("w2udp", "W2 UDP"), ("w2tcp", "W2 TCP")):
        # The peers get the sched/irq/softirq tracepoints only; gpunoise's
        # default also hooks the network stack (counted in the kernel, not
        # as events), so the like-for-like row is the one with the peers'
        # events, when it ran.
        ours = "gpunoise-same" if f.median("gpunoise-same", wl, "ns_per_event") is not None else "gpunoise"
        g = f.median(ours, wl, "ns_per_event")
        if g is None:
            parts.append(f"{label}: not measured (gpunoise: {f.why_missing('gpunoise', wl)})")
            verdicts.append(None)
            continue
        peers = []
        for key, name in (("trace-cmd", "trace-cmd"), ("bpftrace", "bpftrace")):
            v = f.median(key, wl, "ns_per_event")
            peers.append((name, v))
        who = "gpunoise (sched,irq,softirq)" if ours == "gpunoise-same" else "gpunoise (default events)"
        text = f"{label}: {who} {g:,.0f} ns" + "".join(
            f", {name} {v:,.0f} ns" if v is not None else f", {name} n/a" for name, v in peers)
        parts.append(text)
        measured = [v for _, v in peers if v is not None]
        verdicts.append(None if not measured else all(g < v for v in measured))
    return "gpunoise record costs less per event than trace-cmd and bpftrace (same events)", parts, verdicts


def target_zero_loss(f):
    parts, verdicts = [], []
    for wl, label in (("w1", "W1"), ("w2udp", "W2 UDP"), ("w2tcp", "W2 TCP")):
        lost = f.lost("gpunoise", wl)
        if lost is None:
            parts.append(f"{label}: not measured ({f.why_missing('gpunoise', wl)})")
            verdicts.append(None)
        else:
            # The target is about the recorder keeping up; runs the kernel
            # skipped for recursion are named beside it, not hidden.
            skipped = sum(f.cell("gpunoise", wl).values("kernel_skipped"))
            parts.append(f"{label}: {lost:,} lost" +
                         (f" ({skipped:,} program runs the kernel skipped)" if skipped else ""))
            verdicts.append(lost == 0)
    return "gpunoise record loses no events at W1's and W2's full rate (ring or drain)", parts, verdicts


def target_sched_bytes(f):
    title = "sched events cost at most 10 bytes each in the output file (W1)"
    g = f.median("gpunoise", "w1", "bytes_per_sched_event")
    if g is None:
        return title, [f"not measured ({f.why_missing('gpunoise', 'w1')})"], [None]
    return title, [f"gpunoise {g:.1f} B per sched event (whole file / sched events)"], [g <= 10]


def target_sched_bytes_below_peers(f):
    title = "... below what trace-cmd and perf write for the same events (W1)"
    g = f.median("gpunoise", "w1", "bytes_per_sched_event")
    if g is None:
        return title, [f"not measured ({f.why_missing('gpunoise', 'w1')})"], [None]
    parts, verdicts = [f"gpunoise {g:.1f} B/sched event"], []
    for key in ("trace-cmd", "perf"):
        v = f.median(key, "w1", "bytes_per_event")
        if v is None:
            parts.append(f"{key} not measured ({f.why_missing(key, 'w1')})")
            continue
        raw = f.median(key, "w1", "uncompressed_bytes_per_event")
        parts.append(f"{key} {v:.1f} B/event as written"
                     + (f" ({raw:.1f} B/event before its compression)" if raw else ""))
        verdicts.append(g < v)
    return title, parts, verdicts or [None]


def target_monitor(f):
    parts, verdicts = [], []
    for wl, label, limit in (("w3", "W3 idle", 1.0), ("w2udp", "W2 UDP", 2.0), ("w2tcp", "W2 TCP", 2.0)):
        v = f.median("monitor", wl, "tracer_cpu")
        if v is None:
            parts.append(f"{label}: not measured ({f.why_missing('monitor', wl)})")
            verdicts.append(None)
        else:
            parts.append(f"{label}: {100 * v:.2f}% (limit {limit:g}%)")
            verdicts.append(100 * v < limit)
    return "gpunoise monitor uses under 1% of one CPU on W3 and under 2% on W2", parts, verdicts


def target_report_parsing(f):
    for m in f.micro:
        if m.name == REPORT_PARSING_BENCHMARK and m.events_per_s:
            return ("report parsing at least 10 million events/s on one core",
                    [f"{m.events_per_s / 1e6:.1f} M events/s ({REPORT_PARSING_BENCHMARK})"],
                    [m.events_per_s >= 10e6])
    why = "report_reader_benchmark did not run"
    for m in f.micro:
        if "report_reader" in m.binary and m.error:
            why = m.error
    return "report parsing at least 10 million events/s on one core", [f"not measured ({why})"], [None]


def merge_unmeasured(parts, verdicts):
    """'W3: not measured (R); W2 UDP: not measured (R)' reads 'not measured (R)'."""
    if any(v is not None for v in verdicts):
        return parts
    reasons = {re.sub(r"^[^:]*: ", "", p) if ": not measured (" in p else p for p in parts}
    return sorted(reasons) if len(reasons) == 1 else parts


def verdict(verdicts):
    judged = [v for v in verdicts if v is not None]
    if not judged:
        return "not measured"
    status = MET if all(judged) else MISSED
    if len(judged) < len(verdicts):
        status += " (in part: some cells not measured)"
    return status


def targets_table(cells, micro):
    f = Figures(cells, micro)
    lines = ["| target | measured (medians) | status |", "|---|---|---|"]
    for target in (target_cost_per_event, target_zero_loss, target_sched_bytes, target_sched_bytes_below_peers,
                   target_monitor, target_report_parsing, target_floor_share, recorder_share):
        title, parts, verdicts, *status = target(f)
        parts = merge_unmeasured(parts, verdicts)
        lines.append(f"| {title} | {'; '.join(parts)} | {status[0] if status else verdict(verdicts)} |")
    return lines


def micro_table(micro):
    lines = ["| benchmark | binary | ns/event | events/s | bytes/event |", "|---|---|---|---|---|"]
    for m in micro:
        if m.error:
            lines.append(f"| {m.name} | `{m.binary}` | cannot run: {m.error} | | |")
            continue
        lines.append("| {} | `{}` | {} | {} | {} |".format(
            m.name, m.binary, f"{m.ns_per_event:.1f}" if m.ns_per_event else "n/a",
            f"{m.events_per_s / 1e6:.2f} M" if m.events_per_s else "n/a",
            f"{m.bytes_per_event:.2f}" if m.bytes_per_event is not None else ""))
    return lines


def program_cost_table(cells):
    """Per cell, from its extra run with kernel.bpf_stats_enabled: the
    programs' mean ns per run, their time per reported event, and the three
    costliest programs."""
    lines = ["| tracer | workload | programs | ns per program run | program ns per reported event "
             "| costliest programs (ns/run × runs) |", "|---|---|---|---|---|---|"]
    for c in cells:
        if c.error or (c.programs is None and not c.programs_error):
            continue
        if c.programs_error:
            lines.append(f"| {c.tracer} | {c.workload} | cannot measure: {c.programs_error} | | | |")
            continue
        per_run = bpf_stats.total_ns_per_run(c.programs)
        ns = sum(p.run_time_ns for p in c.programs)
        top = sorted((p for p in c.programs if p.runs), key=lambda p: -p.run_time_ns)[:3]
        lines.append("| {} | {} | {} | {} | {} | {} |".format(
            c.tracer, c.workload, len(c.programs), "n/a" if per_run is None else f"{per_run:.0f}",
            f"{ns / c.program_events:.0f}" if c.program_events else "n/a",
            ", ".join(f"`{p.name}` {p.ns_per_run:.0f} × {p.runs:,}" for p in top) or "none ran"))
    return lines


def ratio_over_floor(f, floor, wl, label):
    """gpunoise's throughput ratio over a floor's on one workload: (share or
    None, the text for the table)."""
    g, fl = f.median("gpunoise", wl, "ratio"), f.median(floor, wl, "ratio")
    if g is None or fl is None:
        return None, (f"{label}: not measured (gpunoise: {f.why_missing('gpunoise', wl)}; "
                      f"{floor}: {f.why_missing(floor, wl)})")
    return g / fl, f"{label}: {g:.3f} / {fl:.3f} = {g / fl:.3f}"


TARGET_WORKLOADS = (("w1", "W1"), ("w2udp", "W2 UDP"), ("w2tcp", "W2 TCP"))


def target_floor_share(f):
    """gpunoise's throughput ratio as a share of the floor's (issue 18's
    target: at least 0.92 on every workload)."""
    title = "gpunoise record keeps at least 0.92 of the floor's throughput ratio (default events)"
    parts, verdicts = [], []
    for wl, label in TARGET_WORKLOADS:
        share, text = ratio_over_floor(f, "floor", wl, label)
        parts.append(text)
        verdicts.append(None if share is None else share >= 0.92)
    return title, parts, verdicts


def recorder_share(f):
    """What the recorder costs above the floor that also reads the clock and
    stores a record-sized value per event (issue 18: "gpunoise's cost above
    the second variant is the recorder's own share; report it in the targets
    table"). A figure with no limit: its status says so."""
    title = ("the recorder's own share: gpunoise record (default events) against the floor that also reads the "
             "clock and stores a record-sized value")
    parts, measured = [], []  # measured: True per workload with a figure (no limit to judge it by)
    for wl, label in TARGET_WORKLOADS:
        share, text = ratio_over_floor(f, "floor-store", wl, label)
        kernel = [f.program_ns_per_event(t, wl) for t in ("gpunoise", "floor-store")]
        if share is not None and None not in kernel:
            text += f" (kernel program ns per event {kernel[0]:.0f} against {kernel[1]:.0f})"
        parts.append(text)
        measured.append(None if share is None else True)
    return title, parts, measured, "figure (no limit)" if any(measured) else "not measured"


def net_group_table(cells):
    """The default `net` group's cost on its own (issue 18): the default
    events beside the same without `net`, and beside the same with a
    counting program on every packet (`--net-packet-counters on`) where that
    ran, per workload, with the kernel's program time per event from each
    cell's bpf_stats run."""
    f = Figures(cells, [])
    variants = [("gpunoise", "default events"), ("gpunoise-nonet", "without `net`")]
    if any(c.tracer_key == "gpunoise-packet-counters" for c in cells):
        variants.append(("gpunoise-packet-counters", "`--net-packet-counters on`"))
    names = [name for _, name in variants]
    lines = ["| workload | " + " | ".join(f"{n}: ratio" for n in names) + " | default / without | "
             f"tracer CPU, % of one CPU: {', '.join(names)} | kernel program ns per event: {', '.join(names)} |",
             "|---|" + "---|" * (len(variants) + 3)]

    def cpu(c):
        return median_range([100 * v for v in c.values("tracer_cpu")], "{:.2f}")

    def program_ns(c):
        if not c.programs or not c.program_events:
            return "n/a"
        return f"{sum(p.run_time_ns for p in c.programs) / c.program_events:.0f}"

    for wl, label in (("w1", "W1 sched pipe"), ("w2udp", "W2 UDP"), ("w2tcp", "W2 TCP"), ("w3", "W3 idle")):
        row = [f.cell(tracer, wl) for tracer, _ in variants]
        if row[0] is None or row[1] is None:
            continue
        if any(c is not None and c.error for c in row):
            lines.append(f"| {label} | " + " | ".join((c.error or "") if c else "" for c in row) + " |" +
                         " |" * 3)
            continue
        a, b = f.median("gpunoise", wl, "ratio"), f.median("gpunoise-nonet", wl, "ratio")
        quotient = f"{a / b:.3f}" if a is not None and b else "n/a"
        ratios = " | ".join(median_range(c.values("ratio")) if c else "n/a" for c in row)
        cpus = ", ".join(cpu(c) if c else "n/a" for c in row)
        ns = ", ".join(program_ns(c) if c else "n/a" for c in row)
        lines.append(f"| {label} | {ratios} | {quotient} | {cpus} | {ns} |")
    return lines if len(lines) > 2 else []


def delivered_table(cells):
    rows = []
    for c in cells:
        traced, base = c.values("traced_delivered"), c.values("base_delivered")
        if c.error or not traced or not base:
            continue
        rows.append(f"| {c.tracer} | {median_range(traced, '{:.3f}')} | {median_range(base, '{:.3f}')} |")
    if not rows:
        return []
    return ["| tracer | traced | untraced (same pairs) |", "|---|---|---|"] + rows


def smoke_banner(run):
    if not run["quick"]:
        return []
    return ["> **Smoke run (`--quick`)**: one pair per cell, short workloads, on a machine shared with other",
            "> work. These numbers show the harness runs end to end; they are not the benchmark.",
            "> The full run is `sudo bench/run.sh` on a quiet machine.", ""]


def results_block(run, workloads, cells, micro):
    m = run["machine"]
    lines = [RESULTS_BEGIN, "", f"### Results: {m['date']}", ""] + smoke_banner(run) + [
        f"- Machine: {m['nproc']} CPUs ({m['cpu']}), {m['memory']}, Linux {m['kernel']}; "
        f"load average at start {run['load_start']}, at end {run['load_end']}. {m['irq_accounting']}",
        f"- Command: `{run['command']}`",
        f"- Pairs per cell: {run['pairs']} (order alternates: untraced first, then traced first, ...). "
        f"Tracer CPU measured through: {run['cpu_method']}.",
        f"- Peer tracers got these {len(run['tracepoints'])} tracepoints: "
        + ", ".join(f"`{t}`" for t in run["tracepoints"]) + ".",
        "",
        "Workloads:",
        "",
    ]
    for w in workloads:
        lines.append(f"- **{w.name}**: `{w.describe()}`")
    lines += [
        "",
        "#### Whole-tool comparison",
        "",
        "| tracer | workload | throughput traced/untraced | untraced throughput | tracer CPU, % of one CPU "
        "| events/s seen | lost | ns of extra CPU per event | bytes/event | bytes/sched event |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    units = {w.name: w.unit for w in workloads}
    for cell in cells:
        lines.append(cell_row(cell, units.get(cell.workload, "")))
    # One line per (tracer, note), naming the workloads it came from.
    where = {}
    for c in cells:
        if not c.error:
            for n in c.notes():
                where.setdefault((c.tracer, n), []).append(c.workload)
    notes = [f"{tracer} / {', '.join(wls)}: {n}" for (tracer, n), wls in where.items()]
    if notes:
        lines += ["", "Notes from the tracers' own output:", ""] + [f"- {n}" for n in notes]
    net = net_group_table(cells)
    if net:
        lines += ["", "#### The `net` group on its own", "",
                  "`gpunoise` (default events) beside `gpunoise-nonet` (the same without `net`: no per-device, "
                  "NAPI or drop counters) and `gpunoise-packet-counters` (the default with "
                  "`--net-packet-counters on`: packets and bytes counted by a program on every packet rather than "
                  "read from the devices' statistics). Ratios are throughput traced/untraced, median [range].",
                  ""] + net
    delivered = delivered_table(cells)
    if delivered:
        lines += ["", "#### What the job's receiver got (W2 UDP)", "",
                  "Datagrams received / sent: the rest overflowed the receiving socket's buffer while the "
                  "receiver waited for its CPU. Median [range] over the pairs.", ""] + delivered
    lines += ["", "#### Kernel cost per program (kernel.bpf_stats_enabled, one extra traced run per cell)", "",
              "The kernel's own timing of each program run; it hardly moves between runs, unlike the ratios. "
              "The stats are on only in that extra run, never in the pairs above.", ""] + program_cost_table(cells)
    lines += ["", "#### Micro-benchmarks (Google Benchmark, pinned to one CPU)", ""] + micro_table(micro)
    lines += ["", "#### Targets", ""] + targets_table(cells, micro) + ["", RESULTS_END]
    return lines


def targets_block(run, cells, micro):
    m = run["machine"]
    label = "a smoke run (`--quick`: noisy, not the benchmark)" if run["quick"] else "the full run"
    return [TARGETS_BEGIN, "",
            f"Where the targets stand, from {label} of {m['date']} on {m['nproc']} CPUs, Linux {m['kernel']} "
            "(details in [docs/performance.md](docs/performance.md)):", ""] + targets_table(cells, micro) + [
            "", TARGETS_END]


def replace_block(path, begin, end, lines, create_heading=None):
    """Writes `lines` between the markers in `path` (the rest is kept); a
    file without the markers gets the block appended; a missing file is
    created with `create_heading`."""
    text = ""
    if os.path.exists(path):
        with open(path) as f:
            text = f.read()
    elif create_heading:
        text = create_heading + "\n\n"
    block = "\n".join(lines)
    start = text.find(begin[:30])
    stop = text.find(end)
    if start >= 0 and stop > start:
        text = text[:start] + block + text[stop + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)
