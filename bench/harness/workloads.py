"""The workloads, each bounded in time. A run returns how fast it went
(throughput, higher is better), how much work it did (so that CPU time can
be compared per unit of work between runs that did different amounts), and
the system-wide non-idle CPU time over the run itself."""

import dataclasses
import os
import re
import shutil
import signal
import subprocess
import time

from . import system


class WorkloadError(Exception):
    pass


def kill_group(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run_in_own_group(argv, timeout):
    """Runs argv in a process group of its own; returns (returncode, stdout,
    stderr). On a timeout (subprocess.TimeoutExpired) or an interrupt (Ctrl-C,
    or SIGTERM through run.py's handler) the whole group is killed before the
    exception goes on, so no process the workload forked (perf bench's second
    process) keeps running after the bench."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:
        kill_group(proc.pid)
        proc.communicate()
        raise
    return proc.returncode, out, err


@dataclasses.dataclass
class WorkloadRun:
    throughput: float = None  # None: the workload has no throughput (idle)
    work: float = 0.0         # units of work done in the run
    busy_cpu_s: float = 0.0   # system-wide non-idle CPU over the run
    wall_s: float = 0.0
    # W2 UDP: the share of the datagrams sent that the receiver got (the
    # rest overflowed its socket buffer); None elsewhere.
    delivered: float = None


class Workload:
    key = ""
    name = ""
    unit = ""  # throughput unit
    # Events arrive at an even rate over the run and before and after it
    # (an idle node): a tracer's event count can be prorated to the run.
    uniform_rate = False

    def describe(self):
        raise NotImplementedError

    def available(self):
        """None, or why this workload cannot run here."""
        return None

    def run(self):
        raise NotImplementedError


class PipeWorkload(Workload):
    """W1: two threads ping-ponging over a pipe on one CPU (perf bench
    sched pipe): about two context switches and a wakeup per operation."""

    key = "w1"
    name = "W1 sched pipe"
    unit = "ops/s"

    def __init__(self, loops, cpu, timeout_s=300):
        self.loops = loops
        self.cpu = cpu
        self.timeout_s = timeout_s

    def describe(self):
        return f"taskset -c {self.cpu} perf bench sched pipe -l {self.loops} (context-switch heavy)"

    def available(self):
        if not shutil.which("perf"):
            return "perf is not installed (apt install linux-perf)"
        r = subprocess.run(["perf", "bench", "sched", "pipe", "-l", "10"], capture_output=True, text=True)
        if r.returncode != 0:
            return "perf bench does not run: " + (r.stderr.strip().splitlines() or ["?"])[-1]
        return None

    def run(self):
        argv = ["taskset", "-c", str(self.cpu), "perf", "bench", "sched", "pipe", "-l", str(self.loops)]
        busy0 = system.busy_cpu_seconds()
        t0 = time.monotonic()
        try:
            rc, out, err = run_in_own_group(argv, self.timeout_s)
        except subprocess.TimeoutExpired:
            raise WorkloadError(f"perf bench sched pipe ran over {self.timeout_s} s")
        wall = time.monotonic() - t0
        busy = system.busy_cpu_seconds() - busy0
        m = re.search(r"([\d.]+)\s+ops/sec", out)
        if rc != 0 or not m:
            raise WorkloadError("perf bench sched pipe failed: " + (err.strip() or out.strip())[:200])
        return WorkloadRun(float(m.group(1)), float(self.loops), busy, wall)


def parse_netload_line(text):
    """The key=value line gpunoise-netload prints; {} when there is none."""
    for line in text.splitlines():
        if line.startswith("gpunoise-netload:"):
            return dict(re.findall(r"(\w+)=(\S+)", line))
    return {}


def remove_namespaces_of(pid):
    """Namespaces a killed gpunoise-netload left ("gnt-<pid>-...")."""
    prefix = f"gnt-{pid}-"
    try:
        names = os.listdir("/run/netns")
    except OSError:
        return
    for name in names:
        if name.startswith(prefix):
            subprocess.run(["ip", "netns", "del", name], capture_output=True)


class NetWorkload(Workload):
    """W2: gpunoise-netload's UDP flood or TCP stream across veth between two
    namespaces, sender on one CPU, receiver on the other. Fixed duration, so
    the work done (datagrams or bytes received) differs between runs."""

    def __init__(self, binary, mode, seconds, sender_cpu, receiver_cpu):
        self.binary = binary
        self.mode = mode
        self.seconds = seconds
        self.sender_cpu = sender_cpu
        self.receiver_cpu = receiver_cpu
        self.key = "w2" + mode
        self.name = f"W2 {mode.upper()}"
        self.unit = "packets/s" if mode == "udp" else "Gbit/s"

    def argv(self):
        return [self.binary, f"--{self.mode}", "--seconds", str(self.seconds),
                "--sender-cpu", str(self.sender_cpu), "--receiver-cpu", str(self.receiver_cpu)]

    def describe(self):
        what = "64-byte UDP datagrams, flood" if self.mode == "udp" else "one TCP stream"
        argv = self.argv()
        argv[0] = "build/bench/gpunoise-netload"
        return " ".join(argv) + f" ({what}; veth between two network namespaces)"

    def available(self):
        if not os.access(self.binary, os.X_OK):
            return "gpunoise-netload is not built (build/bench/gpunoise-netload)"
        return None

    @staticmethod
    def stop(proc, grace_s):
        """SIGTERM lets gpunoise-netload remove its namespaces; SIGKILL if it
        does not within grace_s."""
        proc.send_signal(signal.SIGTERM)
        try:
            proc.communicate(timeout=grace_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
        remove_namespaces_of(proc.pid)

    def run(self):
        proc = subprocess.Popen(self.argv(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            out, err = proc.communicate(timeout=self.seconds + 60)
        except subprocess.TimeoutExpired:
            self.stop(proc, 15)
            raise WorkloadError(f"gpunoise-netload ran over {self.seconds + 60} s")
        except BaseException:
            self.stop(proc, 5)  # interrupted: the same, without waiting long
            raise
        remove_namespaces_of(proc.pid)
        values = parse_netload_line(out)
        if proc.returncode != 0 or "throughput" not in values:
            raise WorkloadError("gpunoise-netload failed: " + (err.strip() or out.strip())[:200])
        sent = float(values.get("sent", 0))
        delivered = float(values["work"]) / sent if self.mode == "udp" and sent > 0 else None
        return WorkloadRun(float(values["throughput"]), float(values["work"]),
                           float(values["busy_cpu_s"]), float(values["seconds"]), delivered)


class IdleWorkload(Workload):
    """W3: nothing runs; shows the floor a tracer costs on an idle node."""

    key = "w3"
    name = "W3 idle"
    unit = ""
    uniform_rate = True

    def __init__(self, seconds):
        self.seconds = seconds

    def describe(self):
        return f"sleep {self.seconds} (an idle node: the floor of continuous mode)"

    def run(self):
        busy0 = system.busy_cpu_seconds()
        t0 = time.monotonic()
        time.sleep(self.seconds)
        wall = time.monotonic() - t0
        # The work of an idle node is time itself.
        return WorkloadRun(None, wall, system.busy_cpu_seconds() - busy0, wall)
