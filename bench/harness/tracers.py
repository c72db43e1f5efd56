"""The tracers compared, each started as its own process tree and stopped
with SIGINT, and what each says about its own run: events it saw, events it
lost, bytes it wrote. Numbers come from each tool's own output, never from
the harness's guesses."""

import dataclasses
import glob
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.request

from . import perf_data

TRACEFS = "/sys/kernel/tracing"

# The tracepoints `gpunoise record` turns into records by default (bpf/sched.bpf.c,
# bpf/irq.bpf.c): every peer tracer gets these, where the kernel has them.
# gpunoise's default `net` group also runs in-kernel network counters on top
# (no records); the peers do not get those, which can only flatter them.
GPUNOISE_RECORD_TRACEPOINTS = [
    "sched:sched_switch", "sched:sched_waking", "sched:sched_wakeup_new",
    "sched:sched_migrate_task", "sched:sched_process_fork", "sched:sched_process_exec",
    "sched:sched_process_exit", "task:task_rename",
    "irq:irq_handler_entry", "irq:irq_handler_exit",
    "irq:softirq_entry", "irq:softirq_exit", "irq:softirq_raise",
] + [f"irq_vectors:{v}_{edge}"
     for v in ("local_timer", "reschedule", "call_function", "call_function_single", "irq_work",
               "x86_platform_ipi", "thermal_apic", "error_apic", "spurious_apic")
     for edge in ("entry", "exit")]

SCHED_CATEGORIES = ("sched", "task")


# The busy tracepoints gpunoise's default events also run programs on,
# beyond those it records with the peers' events: the `net` group's
# counters (per NAPI instance, drop reason) and the `node` group's idle
# periods. A floor on these as well is what the default's own hooks cost at
# the least. (The default also attaches to rare ones: TX timeouts, TCP
# retransmissions, BQL stalls, reclaim and compaction, console, task_newtask.
# Packets and bytes per device come from the devices' statistics, unless
# `--net-packet-counters on` adds netif_receive_skb and net_dev_queue.)
GPUNOISE_DEFAULT_EXTRA_TRACEPOINTS = [
    "napi:napi_poll", "skb:kfree_skb", "power:cpu_idle",
]


def existing_tracepoints(names):
    """Those of `names` that this kernel has."""
    return [tp for tp in names if os.path.isdir(os.path.join(TRACEFS, "events", *tp.split(":")))]


def peer_tracepoints():
    """The tracepoints above that this kernel has."""
    return existing_tracepoints(GPUNOISE_RECORD_TRACEPOINTS)


@dataclasses.dataclass
class TracerOutput:
    events: int = None          # events the tracer says it saw (None: it does not say)
    sched_events: int = None    # of those, scheduler/task events
    lost: int = None            # events it says it lost (None: it has no loss report)
    output_bytes: int = None    # what it wrote to disk (None: it writes nothing)
    uncompressed_bytes: int = None  # the data before the tool compressed it, when it says
    # gpunoise only: context switches whose switch chain shows the kernel
    # never delivered them to any tracepoint consumer (not a ring loss).
    unreported_switches: int = None
    # gpunoise only: program runs the kernel skipped because the program was
    # already running on that CPU (recursion). Lost events, but not ring
    # loss: kept out of `lost`, as the report keeps them apart.
    kernel_skipped: int = None
    # gpunoise only: NET_RX softirqs its programs ran on and counted without
    # timing or writing them (record --netrx-sample). Each is two of the
    # events the peers write (its entry and exit), counted in `events`.
    untimed_softirqs: int = None
    note: str = ""


def read_text(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def fd_targets(pids):
    out = []
    for pid in pids:
        for fd in glob.glob(f"/proc/{pid}/fd/*"):
            try:
                out.append(os.readlink(fd))
            except OSError:
                pass
    return out


def tree_pids(root_pid):
    """root_pid and its descendants."""
    children = {}
    for stat in glob.glob("/proc/[0-9]*/stat"):
        text = read_text(stat)
        if not text:
            continue
        fields = text[text.rfind(")") + 2:].split()
        children.setdefault(int(fields[1]), []).append(int(stat.split("/")[2]))
    out, todo = [], [root_pid]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


class Tracer:
    key = ""
    name = ""
    stdout_name = "stdout.txt"
    stderr_name = "stderr.txt"
    stop_timeout_s = 180

    def available(self):
        """None, or why this tracer cannot run on this machine."""
        return None

    def argv(self, outdir):
        raise NotImplementedError

    def ready(self, pid, outdir):
        """True once the tracer is attached and counting."""
        return True

    def settle_s(self):
        """Extra wait after ready(): attachment finishing after the signal."""
        return 0.0

    def parse(self, outdir):
        return TracerOutput()

    def before_start(self):
        pass

    def before_signal(self, outdir):
        """Runs after the workload, before the stop signal: for what can only
        be read from a tracer still running."""
        pass

    def after_stop(self):
        pass

    def stdout(self, outdir):
        return read_text(os.path.join(outdir, self.stdout_name))

    def stderr(self, outdir):
        return read_text(os.path.join(outdir, self.stderr_name))


class NoTracer(Tracer):
    """The control: the same pairs with nothing traced in either half; its
    spread is the noise of the machine."""

    key = "none"
    name = "control (no tracer)"

    def argv(self, outdir):
        return ["sleep", "100000"]

    def ready(self, pid, outdir):
        # Once exec'd, so that its start-up is not counted in the run.
        return read_text(f"/proc/{pid}/comm").strip() == "sleep"


def parse_gpunoise_summary(text):
    """`gpunoise record`'s summary line: per-collector events and lost events."""
    m = re.search(r"gpunoise: recorded .*?\): (.*); (\d+) lost events", text)
    if not m:
        return None
    per_collector = {name: int(n) for name, n in re.findall(r"([\w-]+) (\d+) events", m.group(1))}
    return per_collector, int(m.group(2))


class GpunoiseRecord(Tracer):
    has_bpf = True

    def __init__(self, binary, key, name, events=None, extra_args=()):
        self.binary = binary
        self.key = key
        self.name = name
        self.events = events
        self.extra_args = list(extra_args)

    def available(self):
        return None if os.access(self.binary, os.X_OK) else "gpunoise is not built"

    def argv(self, outdir):
        argv = [self.binary, "record", "-o", os.path.join(outdir, "trace.pftrace")]
        if self.events:
            argv += ["--events", self.events]
        return argv + self.extra_args

    def ready(self, pid, outdir):
        return "recording to" in self.stderr(outdir)

    def parse(self, outdir):
        parsed = parse_gpunoise_summary(self.stdout(outdir))
        if not parsed:
            return TracerOutput(note="no summary line: " + self.stderr(outdir).strip()[-200:])
        per_collector, lost = parsed
        path = os.path.join(outdir, "trace.pftrace")
        unseen = re.search(r"(\d+) context switches the kernel did not report", self.stdout(outdir))
        skipped = re.search(r"\((\d+) of them program runs the kernel skipped\)", self.stdout(outdir))
        skipped = int(skipped.group(1)) if skipped else 0
        untimed = re.search(r"NET_RX storms: (\d+) softirqs ran untimed", self.stdout(outdir))
        untimed = int(untimed.group(1)) if untimed else 0
        return TracerOutput(
            events=sum(per_collector.values()) + 2 * untimed, sched_events=per_collector.get("sched"),
            lost=lost - skipped, kernel_skipped=skipped, untimed_softirqs=untimed,
            output_bytes=os.path.getsize(path) if os.path.exists(path) else None,
            unreported_switches=int(unseen.group(1)) if unseen else 0)


def free_loopback_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def parse_monitor_lost(metrics):
    """The sum of `gpunoise_lost_events_total` over its `where` labels (full
    in-kernel maps, the flight recorder's rings); None without the series."""
    values = re.findall(r"^gpunoise_lost_events_total(?:\{[^}]*\})? (\d+)$", metrics, re.MULTILINE)
    return sum(int(v) for v in values) if values else None


class GpunoiseMonitor(Tracer):
    """`gpunoise monitor` (in-kernel aggregates, OpenMetrics). It keeps no
    per-event records, so only its CPU, the workload's throughput and what
    its last scrape says it lost count. With `flight_recorder` it also runs
    the flight recorder: record's sched and irq collectors into an in-memory
    ring, dumped only on a finding."""

    has_bpf = True

    def __init__(self, binary, key="monitor", name="gpunoise monitor", flight_recorder=None):
        self.binary = binary
        self.key = key
        self.name = name
        self.flight_recorder = flight_recorder
        self.port = None

    def available(self):
        if not os.access(self.binary, os.X_OK):
            return "gpunoise is not built"
        r = subprocess.run([self.binary, "monitor", "--help"], capture_output=True, text=True)
        if r.returncode != 0:
            return "this gpunoise has no monitor command yet"
        return None

    def argv(self, outdir):
        self.port = free_loopback_port()
        argv = [self.binary, "monitor", "--listen", f"127.0.0.1:{self.port}"]
        if self.flight_recorder:
            dumps = os.path.join(outdir, "dumps")
            os.makedirs(dumps, mode=0o700, exist_ok=True)
            argv += ["--flight-recorder", self.flight_recorder, "--dump-dir", dumps]
        return argv

    def scrape(self):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=2) as r:
                return r.read().decode(errors="replace")
        except OSError:
            return None

    def ready(self, pid, outdir):
        text = self.scrape()
        if text is not None:
            with open(os.path.join(outdir, "metrics-start.txt"), "w") as f:
                f.write(text)
        return text is not None

    def settle_s(self):
        return 1.0  # one interval of aggregates before the workload

    def before_signal(self, outdir):
        # Through the next interval, so that the count covers the whole run.
        time.sleep(1.0)
        text = self.scrape()
        if text is not None:
            with open(os.path.join(outdir, "metrics-end.txt"), "w") as f:
                f.write(text)

    def parse(self, outdir):
        metrics = read_text(os.path.join(outdir, "metrics-end.txt"))
        if not metrics:
            return TracerOutput(note="no scrape after the run, so no loss count")
        lost = parse_monitor_lost(metrics)
        if lost is None:
            return TracerOutput(note="its metrics have no gpunoise_lost_events_total")
        return TracerOutput(lost=lost)


class Bpftrace(Tracer):
    """bpftrace counting every tracepoint gpunoise records (count() per probe,
    kept in per-CPU maps and printed at exit)."""

    key = "bpftrace"
    name = "bpftrace count()"
    has_bpf = True

    def __init__(self, tracepoints):
        self.tracepoints = tracepoints

    def available(self):
        return None if shutil.which("bpftrace") else "bpftrace is not installed (apt install bpftrace)"

    def argv(self, outdir):
        probes = ",".join("tracepoint:" + tp for tp in self.tracepoints)
        return ["bpftrace", "-e", probes + " { @[probe] = count(); }"]

    def ready(self, pid, outdir):
        # One perf_event (or bpf_link) fd per attached probe.
        if "Attaching" not in self.stdout(outdir):
            return False
        fds = fd_targets(tree_pids(pid))
        attached = sum(1 for t in fds if "perf_event" in t or "bpf_link" in t)
        return attached >= len(self.tracepoints)

    def settle_s(self):
        return 0.2

    def parse(self, outdir):
        out = self.stdout(outdir) + self.stderr(outdir)
        counts = {probe: int(n) for probe, n in re.findall(r"@\[tracepoint:([\w:]+)\]: (\d+)", out)}
        if not counts:
            return TracerOutput(note="no counts printed: " + out.strip()[-200:])
        lost = sum(int(n) for n in re.findall(r"Lost (\d+) events", out))
        sched = sum(n for probe, n in counts.items() if probe.split(":")[0] in SCHED_CATEGORIES)
        return TracerOutput(events=sum(counts.values()), sched_events=sched, lost=lost,
                            note="counts in per-CPU maps: no event output that could be lost")


def parse_floor_count(text):
    """The count gpunoise-floor prints at exit; None when it printed none."""
    m = re.search(r"^floor: events=(\d+)$", text, re.M)
    return int(m.group(1)) if m else None


class Floor(Tracer):
    """The least a BPF tracer can do on gpunoise's default tracepoints
    (bench/floor/floor.bpf.c): a per-CPU count, or (store) also the clock read
    and a record-sized store that any recorder needs. raw_tp is tp_btf's entry
    path; classic goes through perf's tracepoint glue, as gpunoise's classic
    twins do. What gpunoise costs above the store variant is its own."""

    has_bpf = True

    def __init__(self, binary, tracepoints, attach, store, hooks=""):
        """`hooks`: "" for the recorded tracepoints alone, "-hooks" when
        `tracepoints` also holds every busy one the default counts on."""
        self.binary = binary
        self.tracepoints = tracepoints
        self.attach = attach
        self.store = store
        suffix = ("" if attach == "raw" else "-classic") + ("-store" if store else "") + hooks
        self.key = "floor" + suffix
        self.name = (f"floor: {'tp_btf path (raw_tp)' if attach == 'raw' else 'classic tracepoints'}, "
                     + ("count + clock + record-sized store" if store else "per-CPU count")
                     + (", also on the default's counting hooks (net, idle)" if hooks else ""))

    def available(self):
        return None if os.access(self.binary, os.X_OK) else "gpunoise-floor is not built"

    def argv(self, outdir):
        return ([self.binary, "--attach", self.attach] + (["--store"] if self.store else [])
                + list(self.tracepoints))

    def ready(self, pid, outdir):
        return "floor: attached" in self.stdout(outdir)

    def parse(self, outdir):
        n = parse_floor_count(self.stdout(outdir))
        if n is None:
            return TracerOutput(note="no count printed: " + self.stderr(outdir).strip()[-200:])
        sched = None  # one counter for every tracepoint
        return TracerOutput(events=n, sched_events=sched, lost=0,
                            note="counts in a per-CPU map: no event output that could be lost")


def bcc_unavailable_reason():
    """Why bcc's tools cannot compile their programs here, from what bcc needs:
    kernel headers (/lib/modules/RELEASE/build), or the kernel's own copy of
    them (CONFIG_IKHEADERS: /sys/kernel/kheaders.tar.xz)."""
    release = os.uname().release
    if os.path.exists(f"/lib/modules/{release}/build/include") or os.path.exists("/sys/kernel/kheaders.tar.xz"):
        return None
    ikheaders = "not known"
    config = subprocess.run(["sh", "-c", "zcat /proc/config.gz 2>/dev/null | grep IKHEADERS"],
                            capture_output=True, text=True).stdout.strip()
    if "is not set" in config:
        ikheaders = "not set"
    elif config:
        ikheaders = config.split("=")[-1] + " but /sys/kernel/kheaders.tar.xz is absent (module not loaded)"
    return (f"no kernel headers for Linux {release}: /lib/modules/{release}/build is absent and "
            f"CONFIG_IKHEADERS is {ikheaders}, so bcc cannot compile its programs")


class Bcc(Tracer):
    """bcc's softirqs and runqlat together (the tools an operator reaches for
    first). They summarise in the kernel and print histograms, no event count."""

    key = "bcc"
    name = "bcc softirqs + runqlat"
    has_bpf = True

    def available(self):
        tools = [t for t in ("softirqs-bpfcc", "runqlat-bpfcc") if not shutil.which(t)]
        if tools:
            return "bcc tools are not installed (apt install bpfcc-tools)"
        reason = bcc_unavailable_reason()
        if reason:
            return reason
        r = subprocess.run(["timeout", "60", "softirqs-bpfcc", "1", "1"], capture_output=True, text=True)
        if r.returncode != 0:
            return "softirqs-bpfcc fails: " + (r.stderr.strip().splitlines() or ["?"])[-1][:200]
        return None

    def argv(self, outdir):
        return ["sh", "-c", "softirqs-bpfcc & runqlat-bpfcc & wait"]

    def ready(self, pid, outdir):
        return self.stdout(outdir).count("Hit Ctrl-C") >= 2

    def parse(self, outdir):
        return TracerOutput(note="summaries in the kernel: no event count, no loss report")


def parse_trace_cmd_stat(text):
    """Losses trace-cmd recorded: per CPU overrun + commit overrun + dropped events."""
    lost = 0
    for key in ("overrun", "commit overrun", "dropped events"):
        lost += sum(int(n) for n in re.findall(rf"^{key}: (\d+)", text, re.M))
    return lost


class TraceCmd(Tracer):
    """trace-cmd record (ftrace) of the same tracepoints, ring buffer sized
    like gpunoise's (4 MiB per CPU).

    On kernels without the function tracer its writes to the function-tracer
    control files fail and it gives up; it gets stand-in files in a private
    mount namespace (MEASURED.md). It stops cleanly on SIGINT only while
    following a command, so it follows a long sleep that the stop ends."""

    key = "trace-cmd"
    name = "trace-cmd record"
    buffer_kb = 4096

    def __init__(self, tracepoints):
        self.tracepoints = tracepoints
        self.saved_buffer_kb = None

    def available(self):
        return None if shutil.which("trace-cmd") else "trace-cmd is not installed (apt install trace-cmd)"

    def before_start(self):
        self.saved_buffer_kb = read_text(os.path.join(TRACEFS, "buffer_size_kb")).split()[:1]

    def after_stop(self):
        # trace-cmd leaves its buffer size behind; put back what was there.
        if self.saved_buffer_kb and self.saved_buffer_kb[0].isdigit():
            try:
                with open(os.path.join(TRACEFS, "buffer_size_kb"), "w") as f:
                    f.write(self.saved_buffer_kb[0])
            except OSError:
                pass

    def argv(self, outdir):
        stand_in = os.path.join(outdir, "ftrace_enabled")
        with open(stand_in, "w") as f:
            f.write("1\n")
        empty = os.path.join(outdir, "empty")
        open(empty, "w").close()
        binds = " ".join(
            f"[ -e {TRACEFS}/{name} ] && mount --bind {empty} {TRACEFS}/{name};"
            for name in ("set_ftrace_pid", "set_ftrace_filter", "set_ftrace_notrace",
                         "set_graph_function", "set_graph_notrace"))
        events = " ".join("-e " + tp for tp in self.tracepoints)
        script = (f"mount --bind {stand_in} /proc/sys/kernel/ftrace_enabled 2>/dev/null; {binds} "
                  f"exec trace-cmd record -b {self.buffer_kb} {events} -o {outdir}/trace.dat sleep 1000000")
        return ["unshare", "-m", "sh", "-c", script]

    def ready(self, pid, outdir):
        first = self.tracepoints[0].split(":")
        enabled = read_text(os.path.join(TRACEFS, "events", *first, "enable")).strip() == "1"
        on = read_text(os.path.join(TRACEFS, "tracing_on")).strip() == "1"
        # trace-cmd forks one reader per CPU once tracing is on.
        return enabled and on and len(tree_pids(pid)) >= 1 + (os.cpu_count() or 1)

    def settle_s(self):
        return 0.3

    def parse(self, outdir):
        path = os.path.join(outdir, "trace.dat")
        if not os.path.exists(path):
            return TracerOutput(note="no trace.dat: " + self.stderr(outdir).strip()[-200:])
        # Events: one line per event in trace-cmd's own report, by event name.
        per_event = {}
        line_re = re.compile(r"\s\d+\.\d+: (\w+):")
        with subprocess.Popen(["trace-cmd", "report", "-i", path], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, errors="replace") as report:
            for line in report.stdout:
                m = line_re.search(line)
                if m:
                    per_event[m.group(1)] = per_event.get(m.group(1), 0) + 1
        stat = subprocess.run(["trace-cmd", "report", "--stat", "-i", path], capture_output=True,
                              text=True).stdout
        sched_names = {tp.split(":")[1] for tp in self.tracepoints if tp.split(":")[0] in SCHED_CATEGORIES}
        events = sum(per_event.values())
        # trace-cmd compresses the ftrace pages it stores; it prints both sizes.
        uncompressed = [int(n) for n in re.findall(r"\((\d+) uncompressed\)",
                                                       self.stdout(outdir) + self.stderr(outdir))]
        return TracerOutput(events=events,
                            sched_events=sum(n for e, n in per_event.items() if e in sched_names),
                            lost=parse_trace_cmd_stat(stat), output_bytes=os.path.getsize(path),
                            uncompressed_bytes=sum(uncompressed) if uncompressed else None,
                            note="trace.dat is compressed: bytes/event is what it wrote" if uncompressed else "")


def parse_perf_stats(text):
    """`perf report --stats`: total samples, samples per event, LOST records."""
    total = re.search(r"^\s*SAMPLE events:\s+(\d+)", text, re.M)
    per_event = {name: int(n) for name, n in
                 re.findall(r"^(\S+) stats:\s*\n\s*SAMPLE events:\s+(\d+)", text, re.M)}
    lost_records = sum(int(n) for n in re.findall(r"^\s*LOST(?:_SAMPLES)? events:\s+(\d+)", text, re.M))
    return (int(total.group(1)) if total else None), per_event, lost_records


class PerfRecord(Tracer):
    """perf record -a of the same tracepoints, 4 MiB of buffer per CPU like
    gpunoise, otherwise perf's defaults (what an operator would run)."""

    key = "perf"
    name = "perf record"

    def __init__(self, tracepoints):
        self.tracepoints = list(tracepoints)
        self.refused = []

    def available(self):
        if not shutil.which("perf"):
            return "perf is not installed (apt install linux-perf)"
        # perf refuses some tracepoints another tracer takes (irq_work_exit:
        # perf itself signals through irq_work); it records the rest.
        while self.tracepoints:
            argv = ["perf", "record", "-a", "-o", "/dev/null"]
            for tp in self.tracepoints:
                argv += ["-e", tp]
            r = subprocess.run(argv + ["--", "true"], capture_output=True, text=True, timeout=60)
            m = re.search(r"No permission to enable (\S+) event", r.stderr)
            if r.returncode == 0 or not m or m.group(1) not in self.tracepoints:
                break
            self.tracepoints.remove(m.group(1))
            self.refused.append(m.group(1))
        return None

    def argv(self, outdir):
        argv = ["perf", "record", "-a", "-m", "4M", "-o", os.path.join(outdir, "perf.data")]
        for tp in self.tracepoints:
            argv += ["-e", tp]
        return argv

    def ready(self, pid, outdir):
        # One perf_event fd per event per CPU once it is recording.
        fds = fd_targets(tree_pids(pid))
        opened = sum(1 for t in fds if "perf_event" in t)
        return opened >= len(self.tracepoints) * (os.cpu_count() or 1)

    def settle_s(self):
        return 0.3

    def parse(self, outdir):
        path = os.path.join(outdir, "perf.data")
        if not os.path.exists(path):
            return TracerOutput(note="no perf.data: " + self.stderr(outdir).strip()[-200:])
        stats = subprocess.run(["perf", "report", "--stats", "-i", path], capture_output=True,
                               text=True).stdout
        total, per_event, lost_records = parse_perf_stats(stats)
        # The stats count LOST records, not the samples each says were lost;
        # those are summed from the file itself.
        lost = perf_data.lost_samples(path) if lost_records else 0
        sched = sum(n for name, n in per_event.items() if name.split(":")[0] in SCHED_CATEGORIES)
        note = f"perf refuses {', '.join(self.refused)}; it records the rest" if self.refused else ""
        return TracerOutput(events=total, sched_events=sched, lost=lost, output_bytes=os.path.getsize(path),
                            note=note)
