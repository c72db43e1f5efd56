"""The Google Benchmark micro-benchmarks of the user-space hot paths, run
pinned to one CPU, with their per-event figures pulled from the JSON."""

import dataclasses
import json
import os
import subprocess


@dataclasses.dataclass
class MicroSpec:
    binary: str           # relative to the build directory
    filter: str           # --benchmark_filter
    what: str             # what one "event" is here
    needs_root: bool = False


MICRO_BENCHMARKS = [
    MicroSpec("bench/ring_consume_benchmark", "BM_RingConsume",
              "ring-buffer consume (+ decode, + encode) per record, real BPF ring", needs_root=True),
    MicroSpec("bench/record_path_benchmark", "BM_",
              "decode + sort + Perfetto encode + serialize per event (memory input)"),
    MicroSpec("bench/report/report_reader_benchmark", "BM_TraceReader",
              "report parsing per event (trace file in the page cache)"),
]

# The one that the report-parsing target is read from: gpunoise's own format.
REPORT_PARSING_BENCHMARK = "BM_TraceReader/full_format:0"


@dataclasses.dataclass
class MicroResult:
    binary: str
    name: str
    ns_per_event: float = None
    events_per_s: float = None
    bytes_per_event: float = None
    error: str = None


def run_micro(build_dir, cpu, min_time_s, repetitions, log):
    results = []
    for spec in MICRO_BENCHMARKS:
        path = os.path.join(build_dir, spec.binary)
        if not os.access(path, os.X_OK):
            results.append(MicroResult(spec.binary, spec.what, error="not built: Google Benchmark (libbenchmark-dev) is missing"))
            continue
        if spec.needs_root and os.geteuid() != 0:
            results.append(MicroResult(spec.binary, spec.what, error="needs root"))
            continue
        log(f"micro-benchmark {spec.binary} ...")
        results.extend(run_one(path, spec, cpu, min_time_s, repetitions))
    return results


def run_one(path, spec, cpu, min_time_s, repetitions):
    base = ["taskset", "-c", str(cpu), path, f"--benchmark_filter={spec.filter}",
            "--benchmark_format=json"]
    if repetitions > 1:
        base += [f"--benchmark_repetitions={repetitions}", "--benchmark_report_aggregates_only=true"]
    # Google Benchmark 1.8 wants a unit ("0.5s"); 1.7 (Debian 12) a number.
    for min_time in (f"{min_time_s}", f"{min_time_s}s"):
        r = subprocess.run(base + [f"--benchmark_min_time={min_time}"], capture_output=True, text=True,
                           timeout=900)
        if r.returncode == 0:
            break
    if r.returncode != 0:
        return [MicroResult(spec.binary, spec.what, error=(r.stderr.strip() or "failed")[-200:])]
    return parse_benchmark_json(spec.binary, r.stdout)


def parse_benchmark_json(binary, text):
    data = json.loads(text)
    out = []
    for b in data.get("benchmarks", []):
        # With repetitions, keep the median aggregate only.
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        name = b.get("run_name", b["name"])
        if b.get("error_occurred"):
            out.append(MicroResult(binary, name, error=b.get("error_message", "error")))
            continue
        if b.get("skipped"):
            out.append(MicroResult(binary, name, error=b.get("skip_message", "skipped")))
            continue
        rate = b.get("items_per_second")
        out.append(MicroResult(binary, name, ns_per_event=1e9 / rate if rate else None, events_per_s=rate,
                               bytes_per_event=b.get("bytes_per_event")))
    return out
