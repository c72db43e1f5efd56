"""The kernel's own count of what each BPF program costs per run
(kernel.bpf_stats_enabled: run_cnt and run_time_ns in the program info).

Unlike a throughput ratio it hardly moves between runs on a noisy machine:
the kernel times each program run with preemption off, so other work on
the machine adds little to it. Turning the stats on costs two clock reads
per run, so they are on only for the extra cost run of a cell, never during
the pairs whose ratios are reported."""

import dataclasses
import json
import os
import subprocess

STATS_SYSCTL = "/proc/sys/kernel/bpf_stats_enabled"


@dataclasses.dataclass
class ProgramCost:
    name: str
    kind: str
    runs: int
    run_time_ns: int

    @property
    def ns_per_run(self):
        return self.run_time_ns / self.runs if self.runs else None


class StatsEnabled:
    """Turns kernel.bpf_stats_enabled on for a `with` block, then restores it."""

    def __enter__(self):
        with open(STATS_SYSCTL) as f:
            self.old = f.read().strip()
        with open(STATS_SYSCTL, "w") as f:
            f.write("1")
        return self

    def __exit__(self, *exc):
        with open(STATS_SYSCTL, "w") as f:
            f.write(self.old or "0")
        return False


def program_ids_of(pids, proc="/proc"):
    """Ids of the BPF programs that `pids` hold open, as program or link fds
    (their fdinfo names the program). Debian's bpftool lists no holders."""
    ids = set()
    for pid in pids:
        fd_dir = os.path.join(proc, str(pid), "fdinfo")
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                with open(os.path.join(fd_dir, fd)) as f:
                    for line in f:
                        if line.startswith("prog_id:"):
                            ids.add(int(line.split()[1]))
            except (OSError, ValueError, IndexError):
                continue
    return ids


def programs_of(pids, bpftool_json=None, ids=None):
    """The programs that `pids` hold, with their run counts and times."""
    if ids is None:
        ids = program_ids_of(pids)
    if bpftool_json is None:
        r = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("bpftool prog show failed: " + r.stderr.strip()[-200:])
        bpftool_json = r.stdout
    out = []
    for prog in json.loads(bpftool_json or "[]"):
        if prog.get("id") not in ids:
            continue
        out.append(ProgramCost(prog.get("name", "?"), prog.get("type", "?"),
                               int(prog.get("run_cnt", 0)), int(prog.get("run_time_ns", 0))))
    return out


def total_ns_per_run(programs):
    runs = sum(p.runs for p in programs)
    return sum(p.run_time_ns for p in programs) / runs if runs else None
