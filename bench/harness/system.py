"""What the harness reads from the machine: system-wide CPU time, the CPU
time of one process tree (through a cgroup of its own), the machine's
description, and helpers to stop process groups."""

import datetime
import os
import platform
import signal
import time


def cgroup2_root():
    """Where the cgroup v2 hierarchy is mounted: /sys/fs/cgroup on unified
    systems, /sys/fs/cgroup/unified on hybrid ones; None without one."""
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                left, _, right = line.partition(" - ")
                if right.split()[:1] == ["cgroup2"]:
                    return left.split()[4]
    except OSError:
        pass
    return None


def busy_cpu_seconds():
    """System-wide non-idle CPU seconds so far (/proc/stat: user, nice,
    system, irq, softirq). Steal is left out: it is time the hypervisor gave
    to another guest, not work done here. gpunoise-netload uses the same sum."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:8]]
    user, nice, system, _idle, _iowait, irq, softirq = fields
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


class TreeCpu:
    """CPU time of a process and everything it starts.

    The tree runs in a cgroup v2 of its own, so no child escapes the count
    (trace-cmd's per-CPU readers, bcc's two tools) and children that exit
    before the end still count; cpu.stat's usage_usec is kept even without
    the cpu controller (also on hybrid v1/v2 systems). Without cgroup v2 it falls back to summing
    /proc/PID/stat (utime+stime+cutime+cstime) over the process group, which
    misses children that were never waited for."""

    _serial = 0

    def __init__(self):
        TreeCpu._serial += 1
        self.path = None
        self.pgid = None
        root = cgroup2_root()
        if root:
            path = os.path.join(root, f"gpunoise-bench-{os.getpid()}-{TreeCpu._serial}")
            try:
                os.mkdir(path)
                self.path = path
            except OSError:
                self.path = None

    @property
    def method(self):
        return "cgroup" if self.path else "process group"

    def preexec(self):
        """Runs in the child between fork and exec: joins the cgroup, and
        undoes an ignored SIGINT inherited from a shell that started the
        harness in the background (the tracers are stopped with SIGINT)."""
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if self.path:
            with open(os.path.join(self.path, "cgroup.procs"), "w") as f:
                f.write("0")

    def attach_group(self, pgid):
        self.pgid = pgid

    def seconds(self):
        if self.path:
            with open(os.path.join(self.path, "cpu.stat")) as f:
                for line in f:
                    key, value = line.split()
                    if key == "usage_usec":
                        return int(value) / 1e6
            return 0.0
        return self._group_seconds()

    def _group_seconds(self):
        total = 0
        tick = os.sysconf("SC_CLK_TCK")
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as f:
                    text = f.read()
            except OSError:
                continue
            fields = text[text.rfind(")") + 2:].split()
            # After "(comm) ": state ppid pgrp ...; utime=14 stime=15 cutime=16 cstime=17 (1-based).
            if int(fields[2]) != self.pgid:
                continue
            total += sum(int(x) for x in fields[11:15])
        return total / tick

    def remove(self):
        """Kills whatever is left in the cgroup and removes it."""
        if not self.path:
            return
        kill = os.path.join(self.path, "cgroup.kill")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with open(os.path.join(self.path, "cgroup.procs")) as f:
                    pids = [int(p) for p in f.read().split()]
            except OSError:
                break
            if not pids:
                break
            if os.path.exists(kill):
                with open(kill, "w") as f:
                    f.write("1")
            else:
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
            time.sleep(0.05)
        try:
            os.rmdir(self.path)
        except OSError:
            pass
        self.path = None


def remove_stale_cgroups():
    """Removes cgroups a killed harness left behind (the PID in the name is gone)."""
    root = cgroup2_root()
    try:
        names = os.listdir(root) if root else []
    except OSError:
        return
    for name in names:
        if not name.startswith("gpunoise-bench-"):
            continue
        pid = name.split("-")[2]
        if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
            stale = TreeCpu.__new__(TreeCpu)
            stale.path = os.path.join(root, name)
            stale.remove()


def signal_group(pgid, sig):
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def machine_description():
    cpu = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem_gib = 0.0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem_gib = int(line.split()[1]) / 1024 / 1024
    return {
        "irq_accounting": irq_time_accounting(),
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "kernel": platform.release(),
        "memory": f"{mem_gib:.1f} GiB",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }


def irq_time_accounting():
    """Whether interrupt time is charged to the task it interrupts, which
    decides whether a tracer's CPU includes interrupts that hit it."""
    import gzip
    try:
        with gzip.open("/proc/config.gz", "rt") as f:
            config = f.read()
    except OSError:
        return "Kernel config unknown: interrupts may be charged to the task they interrupt, tracers included."
    if "CONFIG_IRQ_TIME_ACCOUNTING=y" in config:
        return "CONFIG_IRQ_TIME_ACCOUNTING=y: interrupt time is not charged to tracers."
    return ("CONFIG_IRQ_TIME_ACCOUNTING is off: interrupts are charged to the task they interrupt, "
            "so a tracer that is on a CPU more is also charged more of the softirqs that land there.")


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])
