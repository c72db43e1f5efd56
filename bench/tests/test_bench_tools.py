#!/usr/bin/env python3
"""Integration tests of the benchmark tools on this machine (root):
gpunoise-netload, the ring-consume micro-benchmark and a bench/run.py smoke
run. GPUNOISE_BUILD_DIR names the build directory (CMake sets it)."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))

from harness import system  # noqa: E402

BUILD = os.environ.get("GPUNOISE_BUILD_DIR", os.path.join(ROOT, "build"))
NETLOAD = os.path.join(BUILD, "bench", "gpunoise-netload")
RING_BENCH = os.path.join(BUILD, "bench", "ring_consume_benchmark")
SCALE_MODEL = os.path.join(BUILD, "bench", "gpunoise-scale-model")
FLOOR = os.path.join(BUILD, "bench", "floor", "gpunoise-floor")
BATCH_COST = os.path.join(BUILD, "bench", "gpunoise-batch-cost")


def require_root(test):
    if os.geteuid() != 0:
        if os.environ.get("GPUNOISE_REQUIRE_ROOT_TESTS") == "1":
            test.fail("needs root, and GPUNOISE_REQUIRE_ROOT_TESTS=1")
        test.skipTest("needs root")


def namespaces_of(pid):
    try:
        return [n for n in os.listdir("/run/netns") if n.startswith(f"gnt-{pid}-")]
    except OSError:
        return []


def parse_line(stdout):
    for line in stdout.splitlines():
        if line.startswith("gpunoise-netload:"):
            return dict(kv.split("=", 1) for kv in line.split()[1:])
    return {}


class NetloadTest(unittest.TestCase):
    def setUp(self):
        require_root(self)

    def run_netload(self, *args):
        p = subprocess.Popen([NETLOAD, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = p.communicate(timeout=120)
        return p, out, err

    def test_udp_flood_prints_packets_per_second_and_removes_its_namespaces(self):
        p, out, err = self.run_netload("--udp", "--seconds", "1")
        self.assertEqual(p.returncode, 0, err)
        values = parse_line(out)
        self.assertEqual(values["mode"], "udp")
        self.assertEqual(values["unit"], "packets/s")
        self.assertGreater(float(values["throughput"]), 1000)
        self.assertGreater(int(values["work"]), 0)
        self.assertLessEqual(int(values["work"]), int(values["sent"]))
        self.assertGreater(float(values["busy_cpu_s"]), 0)
        self.assertEqual(namespaces_of(p.pid), [])

    def test_tcp_stream_prints_gbit_per_second_and_removes_its_namespaces(self):
        p, out, err = self.run_netload("--tcp", "--seconds", "1")
        self.assertEqual(p.returncode, 0, err)
        values = parse_line(out)
        self.assertEqual(values["unit"], "Gbit/s")
        self.assertGreater(float(values["throughput"]), 0.01)
        self.assertEqual(namespaces_of(p.pid), [])

    def test_a_terminated_load_removes_its_namespaces(self):
        p = subprocess.Popen([NETLOAD, "--udp", "--seconds", "30"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 30
            while len(namespaces_of(p.pid)) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            self.assertEqual(len(namespaces_of(p.pid)), 2, "the load never made its namespaces")
            time.sleep(0.5)
            p.send_signal(signal.SIGTERM)
            _, err = p.communicate(timeout=30)
        finally:
            if p.poll() is None:
                p.kill()
                p.communicate()
        self.assertEqual(p.returncode, 128 + signal.SIGTERM, err)
        self.assertIn("namespaces removed", err)
        self.assertEqual(namespaces_of(p.pid), [])

    def test_flag_misuse_exits_2_with_a_usage_line(self):
        for args in ([], ["--udp", "--tcp"], ["--udp", "--seconds", "0"], ["--tcp", "--seconds", "601"],
                     ["--udp", "--napi", "fast"], ["--udp", "--sender-cpu", "4096"]):
            p, _, err = self.run_netload(*args)
            self.assertEqual(p.returncode, 2, args)
            self.assertTrue(err.startswith("usage:"), err)


class RingConsumeBenchmarkTest(unittest.TestCase):
    def setUp(self):
        require_root(self)
        if not os.access(RING_BENCH, os.X_OK):
            why = "ring_consume_benchmark is not built (Google Benchmark missing: Debian package libbenchmark-dev)"
            if os.environ.get("GPUNOISE_REQUIRE_ROOT_TESTS") == "1":
                self.fail(why + "; tools/setup.sh installs it, and as root a skip is a failure")
            self.skipTest(why)

    def test_every_record_the_program_writes_is_drained_and_encoded(self):
        r = subprocess.run([RING_BENCH, "--benchmark_filter=BM_RingConsumeEncode/1024",
                            "--benchmark_format=json", "--benchmark_min_time=0.01"],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        results = json.loads(r.stdout)["benchmarks"]
        self.assertEqual(len(results), 1)
        b = results[0]
        self.assertFalse(b.get("error_occurred"), b.get("error_message"))
        self.assertGreater(b["items_per_second"], 0)
        self.assertGreater(b["bytes_per_event"], 1)


class ScaleModelTest(unittest.TestCase):
    def setUp(self):
        require_root(self)

    def test_scale_model_drains_every_record_it_produced_at_a_low_rate(self):
        r = subprocess.run([SCALE_MODEL, "--rings", "4,32", "--threads", "1,2", "--rates", "500",
                            "--seconds", "1"], capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        rows = scale_model_rows(r.stdout)
        self.assertEqual(len(rows), 4, r.stdout)
        for row in rows:
            self.assertTrue(row["result"].startswith("kept up"), row)
            self.assertGreater(float(row["produced events/s"]), 0.9 * float(row["offered events/s"]), row)
        self.assertIn("- 32 rings, 2 drain threads: lossless up to", r.stdout)

    def test_scale_model_runs_records_drain_lanes_and_deflate_thread(self):
        r = subprocess.run([SCALE_MODEL, "--rings", "8", "--threads", "1", "--lanes", "2", "--deflate-thread",
                            "--rates", "500", "--seconds", "1"], capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        rows = scale_model_rows(r.stdout)
        self.assertEqual(len(rows), 1, r.stdout)
        row = rows[0]
        self.assertTrue(row["result"].startswith("kept up"), row)
        self.assertEqual(row["lanes each"], "2", row)
        self.assertGreater(float(row["deflate thread CPU ns/event"]), 0, row)
        self.assertGreater(float(row["busiest drain or lane thread, % of one CPU"]), 0, row)

    def test_scale_model_small_rings_lose_counted_records(self):
        # 4 KiB rings at 200,000 records/s each fill between 100 ms drains.
        r = subprocess.run([SCALE_MODEL, "--rings", "2", "--threads", "1", "--rates", "200000",
                            "--ring-bytes", "4096", "--seconds", "1"], capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        row = next(line for line in r.stdout.splitlines() if line.startswith("| 2 |"))
        self.assertIn("lost", row)

    def test_scale_model_flag_misuse_exits_2(self):
        r = subprocess.run([SCALE_MODEL, "--rings", "0"], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--rings takes positive integers", r.stderr)


def scale_model_rows(stdout):
    """The scale model's table rows, each a dict by its header's names."""
    lines = [line for line in stdout.splitlines() if line.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = []
    for line in lines[2:]:
        cols = [c.strip() for c in line.strip("|").split("|")]
        rows.append(dict(zip(header, cols)))
    return rows


class BatchCostTest(unittest.TestCase):
    def setUp(self):
        require_root(self)

    def test_batch_cost_both_producers_deliver_every_record_and_lose_none(self):
        # The tool itself fails unless each run's records all come back whole
        # from the ring, the batched ones through the gate's-close flush too.
        r = subprocess.run([BATCH_COST, "--rounds", "2", "--records", "500"],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"direct +producer [0-9.]+ \(p10")
        self.assertRegex(r.stdout, r"batched +producer [0-9.]+ \(p10")
        last = r.stdout.strip().splitlines()[-1]
        batches = int(last.split(",")[0].removeprefix("batches "))
        # 1000 records of 56 B in 4 KiB batches: 13 full ones, plus the flushed rests.
        self.assertGreaterEqual(batches, 14, r.stdout)
        self.assertIn("refused records 0, batches the ring refused 0, ring loss 0", r.stdout)

    def test_batch_cost_attached_to_sched_switch_drains_a_record_per_run(self):
        # Each program on sched_switch for 0.2 s under a pipe ping-pong; the
        # batched one's rests come out through the flush run on every CPU.
        r = subprocess.run([BATCH_COST, "--rounds", "1", "--records", "100", "--attach", "0.2",
                            "--attach-rounds", "2"], capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        for name in ("direct", "batched", "no-query"):
            m = re.search(name + r" +[0-9.]+ \(p10 [0-9.]+\) \[[0-9.-]+\] ns/run, (\d+) runs, (\d+) records drained",
                          r.stdout)
            self.assertIsNotNone(m, r.stdout)
            self.assertGreater(int(m.group(1)), 1000, r.stdout)  # the ping-pong switches
            self.assertEqual(m.group(1), m.group(2), r.stdout)
        self.assertIn("attached: refused records 0, ring loss 0, batches the ring refused 0", r.stdout)

    def test_batch_cost_flag_misuse_exits_2(self):
        r = subprocess.run([BATCH_COST, "--records", "0"], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn("usage: gpunoise-batch-cost", r.stderr)


class FloorTest(unittest.TestCase):
    def setUp(self):
        require_root(self)

    def test_floor_counts_context_switches_on_both_attach_types(self):
        for attach in ("raw", "classic"):
            p = subprocess.Popen([FLOOR, "--attach", attach, "--store", "sched:sched_switch"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            line = p.stdout.readline()
            self.assertIn(f"floor: attached 1 {attach} programs (store)", line)
            for _ in range(200):  # context switches
                time.sleep(0.001)
            p.send_signal(signal.SIGINT)
            out, err = p.communicate(timeout=60)
            self.assertEqual(p.returncode, 0, err)
            n = int(out.split("floor: events=")[1])
            self.assertGreaterEqual(n, 100, out)


class RunPyTest(unittest.TestCase):
    def setUp(self):
        require_root(self)

    def test_quick_run_writes_a_results_block_with_every_figure(self):
        out_dir = tempfile.mkdtemp(prefix="gpunoise-bench-test-")
        self.addCleanup(shutil.rmtree, out_dir, True)
        out = os.path.join(out_dir, "perf.md")
        with open("/proc/sys/kernel/bpf_stats_enabled") as f:
            stats_before = f.read().strip()
        p = subprocess.Popen([sys.executable, os.path.join(ROOT, "bench", "run.py"), "--quick", "--workloads",
                              "w3", "--tracers", "none,floor,gpunoise,bcc", "--idle-seconds", "1", "--no-micro",
                              "--build-dir", BUILD, "--out", out],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        stdout, stderr = p.communicate(timeout=300)
        self.assertEqual(p.returncode, 0, stdout + stderr)
        with open(out) as f:
            text = f.read()
        self.assertIn("<!-- bench:results:begin", text)
        self.assertIn("<!-- bench:results:end -->", text)
        self.assertIn("Smoke run", text)
        row = next(line for line in text.splitlines() if line.startswith("| gpunoise record | W3 idle |"))
        cols = [c.strip() for c in row.strip("|").split("|")]
        # tracer CPU, events/s, lost and bytes/event are measured on W3.
        self.assertNotEqual(cols[4], "n/a", row)
        self.assertNotEqual(cols[5], "n/a", row)
        # Lost is a measured figure: on an idle node it is the few program
        # runs the kernel skips while another tracing program runs on the
        # CPU (the kwork collector's hrtimer hooks meet 0-2 of them a run).
        self.assertRegex(cols[6], r"^[0-9][0-9,]*$", row)
        self.assertLessEqual(int(cols[6].replace(",", "")), 20, row)
        self.assertNotEqual(cols[8], "n/a", row)
        # The kernel's per-program cost, from the extra run with bpf_stats on,
        # for the floor and gpunoise; the sysctl is back as it was.
        section = text.split("#### Kernel cost per program", 1)[1].split("####", 1)[0]
        for tracer in ("| floor: tp_btf path (raw_tp), per-CPU count | W3 idle |", "| gpunoise record | W3 idle |"):
            cost = next(line for line in section.splitlines() if line.startswith(tracer))
            cols = [c.strip() for c in cost.strip("|").split("|")]
            self.assertGreater(int(cols[2]), 0, cost)
            self.assertGreater(float(cols[3]), 0, cost)
        with open("/proc/sys/kernel/bpf_stats_enabled") as f:
            self.assertEqual(f.read().strip(), stats_before)
        bcc = next(line for line in text.splitlines() if line.startswith("| bcc softirqs + runqlat | W3 idle |"))
        self.assertTrue("cannot run:" in bcc or "n/a" in bcc, bcc)
        root = system.cgroup2_root()
        if root:
            mine = [n for n in os.listdir(root) if n.startswith(f"gpunoise-bench-{p.pid}-")]
            self.assertEqual(mine, [])


if __name__ == "__main__":
    unittest.main()
