#!/usr/bin/env python3
"""Unit tests of bench/run.py's parsers, arithmetic and report (no root)."""

import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from harness import bpf_stats, cells, micro, perf_data, report, tracers, workloads  # noqa: E402


class Idle(workloads.Workload):
    key, name, uniform_rate = "w3", "W3 idle", True


class Fixed(workloads.Workload):
    key, name = "w1", "W1 sched pipe"


def temp_dir(test):
    """A private directory removed when `test` ends, passed or failed."""
    d = tempfile.mkdtemp(prefix="gpunoise-bench-test-")
    test.addCleanup(shutil.rmtree, d, True)
    return d


def run(throughput, work, busy, wall):
    return workloads.WorkloadRun(throughput, work, busy, wall)


class WorkloadCleanupTest(unittest.TestCase):
    """A workload cut short takes every process it forked with it."""

    def start_and_cut(self, timeout, cut_by_alarm):
        with tempfile.TemporaryDirectory() as d:
            pid_file = os.path.join(d, "pid")
            # The forked process lets go of the pipes, so that only the group
            # kill ends it early (one that held them would end when
            # communicate() had waited out its 60 s).
            argv = ["sh", "-c", f"sleep 60 </dev/null >/dev/null 2>&1 & echo $! > {pid_file}; wait"]
            if cut_by_alarm:
                def interrupt(_signum, _frame):
                    raise KeyboardInterrupt
                old = signal.signal(signal.SIGALRM, interrupt)
                signal.alarm(1)
                try:
                    with self.assertRaises(KeyboardInterrupt):
                        workloads.run_in_own_group(argv, timeout)
                finally:
                    signal.alarm(0)
                    signal.signal(signal.SIGALRM, old)
            else:
                with self.assertRaises(subprocess.TimeoutExpired):
                    workloads.run_in_own_group(argv, timeout)
            with open(pid_file) as f:
                return int(f.read())

    def assert_gone(self, pid):
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                with open(f"/proc/{pid}/stat") as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
            except FileNotFoundError:
                return
            if state == "Z":
                return
            time.sleep(0.05)
        self.fail(f"process {pid} the workload forked is still running")

    def test_a_workload_that_runs_over_its_time_leaves_no_process_it_forked(self):
        self.assert_gone(self.start_and_cut(0.5, cut_by_alarm=False))

    def test_an_interrupted_workload_leaves_no_process_it_forked(self):
        self.assert_gone(self.start_and_cut(30, cut_by_alarm=True))

    def test_a_workload_that_finishes_returns_its_code_and_output(self):
        rc, out, err = workloads.run_in_own_group(["sh", "-c", "echo out; echo err >&2; exit 3"], 10)
        self.assertEqual((rc, out, err), (3, "out\n", "err\n"))


class ParsersTest(unittest.TestCase):
    def tracer_outputs(self, stdout_text):
        """A directory holding a tracer's stdout.txt and an empty stderr.txt."""
        d = temp_dir(self)
        with open(os.path.join(d, "stdout.txt"), "w") as f:
            f.write(stdout_text)
        open(os.path.join(d, "stderr.txt"), "w").close()
        return d

    def test_gpunoise_summary_gives_per_collector_events_and_lost(self):
        text = ("gpunoise: recorded 3.2 s on 2 CPUs to /tmp/x/trace.pftrace (1.1 MiB): sched 120000 events, "
                "irq 3000 events, napi 0 events, netdev disabled; 7 lost events, 3 context switches the "
                "kernel did not report\nnetwork: 2 devices, rx 10 packets, tx 10 packets")
        per_collector, lost = tracers.parse_gpunoise_summary(text)
        self.assertEqual(per_collector, {"sched": 120000, "irq": 3000, "napi": 0})
        self.assertEqual(lost, 7)

    def test_gpunoise_summary_of_a_compressed_recording_reads_the_same(self):
        text = ("gpunoise: recorded 6.1 s on 2 CPUs to /tmp/x/trace.pftrace (839.8 KiB; 4.8 MiB before zlib): "
                "sched 603093 events, irq 5594 events, nic disabled; 0 lost events")
        per_collector, lost = tracers.parse_gpunoise_summary(text)
        self.assertEqual(per_collector, {"sched": 603093, "irq": 5594})
        self.assertEqual(lost, 0)

    def test_gpunoise_runs_the_kernel_skipped_are_kept_out_of_lost_and_noted(self):
        d = self.tracer_outputs("gpunoise: recorded 5.0 s on 2 CPUs to /tmp/x/trace.pftrace (1.1 MiB): sched 9000 "
                                "events; 8 lost events (6 of them program runs the kernel skipped)\n")
        out = tracers.GpunoiseRecord("/bin/true", "gpunoise", "gpunoise record").parse(d)
        self.assertEqual(out.lost, 2)
        self.assertEqual(out.kernel_skipped, 6)
        c = cells.CellResult("gpunoise record", "W1 sched pipe")
        timings = {"cpu_run_s": 0.1, "cpu_after_s": 0.0, "life_s": 5.0}
        c.pairs = [cells.measure_pair(None, Fixed(), run(1.0, 1.0, 1.0, 5.0), run(1.0, 1.0, 1.0, 5.0), out, timings)]
        self.assertEqual(c.lost_total(), 2)
        self.assertTrue(any("6 program runs the kernel skipped" in n for n in c.notes()), c.notes())

    def test_gpunoise_untimed_softirqs_count_as_their_entry_and_exit_and_are_noted(self):
        d = self.tracer_outputs("gpunoise: recorded 5.0 s on 2 CPUs to /tmp/x/trace.pftrace (1.1 MiB): sched 9000 "
                                "events, irq 1000 events; 0 lost events\nNET_RX storms: 1500 softirqs ran untimed, "
                                "counted (1 in 16 timed past 8 a tick on a CPU; --netrx-sample 0 times all)\n")
        out = tracers.GpunoiseRecord("/bin/true", "gpunoise", "gpunoise record").parse(d)
        self.assertEqual(out.events, 9000 + 1000 + 2 * 1500)
        self.assertEqual(out.untimed_softirqs, 1500)
        c = cells.CellResult("gpunoise record", "W2 UDP")
        timings = {"cpu_run_s": 0.1, "cpu_after_s": 0.0, "life_s": 5.0}
        c.pairs = [cells.measure_pair(None, Fixed(), run(1.0, 1.0, 1.0, 5.0), run(1.0, 1.0, 1.0, 5.0), out, timings)]
        self.assertTrue(any("1,500 NET_RX softirqs counted without timing" in n for n in c.notes()), c.notes())

    def test_monitor_lost_is_the_sum_of_its_lost_events_counters_after_the_run(self):
        d = self.tracer_outputs("")
        monitor = tracers.GpunoiseMonitor("/bin/true")
        self.assertIsNone(monitor.parse(d).lost)
        self.assertIn("no scrape after the run", monitor.parse(d).note)
        with open(os.path.join(d, "metrics-end.txt"), "w") as f:
            f.write("# TYPE gpunoise_lost_events_total counter\n"
                    'gpunoise_lost_events_total{where="aggregates"} 3\n'
                    'gpunoise_lost_events_total{where="flight_recorder"} 40\n'
                    "gpunoise_kernel_log_lost_total 7\n")
        self.assertEqual(monitor.parse(d).lost, 43)
        self.assertIsNone(tracers.parse_monitor_lost("gpunoise_kernel_log_lost_total 7\n"))

    def test_monitor_with_the_flight_recorder_dumps_into_a_private_directory_of_the_run(self):
        d = temp_dir(self)
        argv = tracers.GpunoiseMonitor("/bin/true", "monitor-flight", "m", flight_recorder="20s").argv(d)
        dumps = os.path.join(d, "dumps")
        self.assertEqual(argv[argv.index("--flight-recorder") + 1], "20s")
        self.assertEqual(argv[argv.index("--dump-dir") + 1], dumps)
        self.assertEqual(os.stat(dumps).st_mode & 0o777, 0o700)
        self.assertNotIn("--flight-recorder", tracers.GpunoiseMonitor("/bin/true").argv(d))

    def test_gpunoise_summary_absent_is_none(self):
        self.assertIsNone(tracers.parse_gpunoise_summary("gpunoise: failed to attach: EPERM"))

    def test_bpftrace_counts_are_summed_and_sched_split(self):
        d = self.tracer_outputs("Attaching 3 probes...\n\n\n@[tracepoint:task:task_rename]: 10\n"
                                "@[tracepoint:irq_vectors:local_timer_entry]: 1958\n"
                                "@[tracepoint:sched:sched_switch]: 2180\n")
        out = tracers.Bpftrace([]).parse(d)
        self.assertEqual(out.events, 10 + 1958 + 2180)
        self.assertEqual(out.sched_events, 10 + 2180)
        self.assertEqual(out.lost, 0)
        self.assertIsNone(out.output_bytes)

    def test_trace_cmd_losses_sum_overruns_commit_overruns_and_drops(self):
        text = ("CPU: 0\nentries: 898\noverrun: 5\ncommit overrun: 1\nbytes: 50080\ndropped events: 2\n"
                "read events: 0\n\nCPU: 1\nentries: 0\noverrun: 10\ncommit overrun: 0\ndropped events: 0\n")
        self.assertEqual(tracers.parse_trace_cmd_stat(text), 18)

    def test_perf_stats_give_samples_per_event_and_lost_records(self):
        text = ("\nAggregated stats:\n           TOTAL events:       2010\n            LOST events:          2\n"
                "          SAMPLE events:       1306  (65.0%)\nsched:sched_switch stats:\n"
                "          SAMPLE events:        758\nirq:softirq_entry stats:\n          SAMPLE events:        548\n")
        total, per_event, lost_records = tracers.parse_perf_stats(text)
        self.assertEqual(total, 1306)
        self.assertEqual(per_event, {"sched:sched_switch": 758, "irq:softirq_entry": 548})
        self.assertEqual(lost_records, 2)

    def test_perf_data_lost_samples_are_summed(self):
        records = b"".join([
            struct.pack("<IHH", 9, 0, 16) + b"\0" * 8,                     # a sample
            struct.pack("<IHH", perf_data.PERF_RECORD_LOST, 0, 24) + struct.pack("<QQ", 1, 40),
            struct.pack("<IHH", perf_data.PERF_RECORD_LOST_SAMPLES, 0, 16) + struct.pack("<Q", 2),
        ])
        header = bytearray(104)
        header[:8] = perf_data.PERF_MAGIC
        struct.pack_into("<QQ", header, 40, 104, len(records))
        path = os.path.join(temp_dir(self), "perf.data")
        with open(path, "wb") as f:
            f.write(bytes(header) + records)
        self.assertEqual(perf_data.lost_samples(path), 42)

    def test_perf_data_rejects_a_file_that_is_not_perf_data(self):
        path = os.path.join(temp_dir(self), "perf.data")
        with open(path, "wb") as f:
            f.write(b"x" * 200)
        with self.assertRaises(perf_data.PerfDataError):
            perf_data.lost_samples(path)

    def test_netload_line_is_parsed(self):
        text = ("gpunoise-netload: mode=udp throughput=253012 unit=packets/s work=1265061 work_unit=packets "
                "seconds=5.000 sent=1300224 busy_cpu_s=9.95 sender_cpu=0 receiver_cpu=1 napi=gro\n")
        values = workloads.parse_netload_line(text)
        self.assertEqual(values["throughput"], "253012")
        self.assertEqual(values["busy_cpu_s"], "9.95")
        self.assertEqual(workloads.parse_netload_line("nothing"), {})

    def test_udp_delivery_is_what_the_receiver_got_of_what_was_sent(self):
        out = tracers.TracerOutput(events=10, lost=0)
        timings = {"cpu_run_s": 0.1, "cpu_after_s": 0.0, "life_s": 5.0}
        base = workloads.WorkloadRun(200_000, 1_000_000, 9.0, 5.0, delivered=0.995)
        traced = workloads.WorkloadRun(180_000, 900_000, 9.0, 5.0, delivered=0.966)
        p = cells.measure_pair(None, Fixed(), base, traced, out, timings)
        self.assertEqual((p.base_delivered, p.traced_delivered), (0.995, 0.966))
        self.assertIn("delivered 0.966 (untraced 0.995)", cells.describe_pair(p, Fixed()))

    def test_google_benchmark_json_keeps_medians_and_errors(self):
        text = """{"benchmarks": [
          {"name": "BM_A/16_mean", "run_name": "BM_A/16", "run_type": "aggregate", "aggregate_name": "mean",
           "items_per_second": 1.0e7},
          {"name": "BM_A/16_median", "run_name": "BM_A/16", "run_type": "aggregate", "aggregate_name": "median",
           "items_per_second": 2.0e7, "bytes_per_event": 8.5},
          {"name": "BM_B", "run_name": "BM_B", "run_type": "iteration", "error_occurred": true,
           "error_message": "needs root"}]}"""
        out = micro.parse_benchmark_json("bench/x", text)
        self.assertEqual([m.name for m in out], ["BM_A/16", "BM_B"])
        self.assertAlmostEqual(out[0].ns_per_event, 50.0)
        self.assertEqual(out[0].bytes_per_event, 8.5)
        self.assertEqual(out[1].error, "needs root")


class ArithmeticTest(unittest.TestCase):
    def test_fixed_work_extra_cpu_is_the_plain_difference(self):
        out = tracers.TracerOutput(events=1_000_000, sched_events=900_000, lost=0, output_bytes=8_000_000)
        timings = {"cpu_run_s": 0.1, "cpu_after_s": 0.05, "life_s": 2.0}
        p = cells.measure_pair(None, Fixed(), run(400_000, 600_000, 2.0, 1.5), run(300_000, 600_000, 2.25, 2.0),
                               out, timings)
        self.assertAlmostEqual(p.ratio, 0.75)
        self.assertAlmostEqual(p.extra_cpu_s, 0.30)          # 2.25 + 0.05 - 2.0
        self.assertAlmostEqual(p.ns_per_event, 300.0)        # 0.3 s / 1M events
        self.assertAlmostEqual(p.tracer_cpu, 0.05)           # 0.1 s over a 2 s run
        self.assertAlmostEqual(p.events_per_s, 500_000)
        self.assertAlmostEqual(p.bytes_per_event, 8.0)
        self.assertAlmostEqual(p.bytes_per_sched_event, 8_000_000 / 900_000)

    def test_fixed_time_extra_cpu_scales_untraced_busy_to_the_same_work(self):
        # A saturated flood: both halves keep both CPUs busy for 5 s, the
        # traced one delivers 20% fewer packets: the CPU those would have
        # taken is the tracer's cost.
        out = tracers.TracerOutput(events=2_000_000, lost=0)
        timings = {"cpu_run_s": 0.2, "cpu_after_s": 0.0, "life_s": 5.0}
        p = cells.measure_pair(None, Fixed(), run(250_000, 1_250_000, 10.0, 5.0),
                               run(200_000, 1_000_000, 10.0, 5.0), out, timings)
        self.assertAlmostEqual(p.extra_cpu_s, 2.0)           # 10 - 10 * 0.8
        self.assertAlmostEqual(p.ns_per_event, 1000.0)

    def test_idle_events_are_prorated_to_the_run(self):
        out = tracers.TracerOutput(events=4000, lost=0)
        timings = {"cpu_run_s": 0.01, "cpu_after_s": 0.0, "life_s": 4.0}
        p = cells.measure_pair(None, Idle(), run(None, 2.0, 0.010, 2.0), run(None, 2.0, 0.012, 2.0),
                               out, timings)
        self.assertIsNone(p.ratio)
        self.assertAlmostEqual(p.events_per_s, 1000.0)
        self.assertAlmostEqual(p.ns_per_event, 0.002 * 1e9 / 2000)  # half the events fell in the run

    def test_bytes_per_sched_event_is_withheld_where_sched_events_are_a_minority(self):
        out = tracers.TracerOutput(events=1_000_000, sched_events=100_000, lost=0, output_bytes=20_000_000)
        timings = {"cpu_run_s": 0.1, "cpu_after_s": 0.0, "life_s": 5.0}
        p = cells.measure_pair(None, Fixed(), run(1.0, 1.0, 1.0, 5.0), run(1.0, 1.0, 1.0, 5.0), out, timings)
        self.assertAlmostEqual(p.bytes_per_event, 20.0)
        self.assertIsNone(p.bytes_per_sched_event)

    def test_unreported_switches_are_summed_into_one_note(self):
        c = cells.CellResult("gpunoise record", "W1 sched pipe")
        c.pairs = [cells.PairResult(unreported_switches=8), cells.PairResult(unreported_switches=11)]
        self.assertEqual(len(c.notes()), 1)
        self.assertIn("19 context switches the kernel never delivered", c.notes()[0])

    def test_median_range_formats_one_and_several_pairs(self):
        self.assertEqual(cells.median_range([]), "n/a")
        self.assertEqual(cells.median_range([0.5]), "0.500")
        self.assertEqual(cells.median_range([0.9, 0.8, 1.0]), "0.900 [0.800–1.000]")


def cell(tracer, workload, error=None, **fields):
    c = cells.CellResult(tracer, workload, tracer, workload, error=error)
    if not error:
        c.pairs.append(cells.PairResult(**fields))
    return c


class ReportTest(unittest.TestCase):
    def test_a_missed_target_is_a_word_in_the_table(self):
        results = [cell("gpunoise", "w1", ns_per_event=500.0, lost=3, bytes_per_sched_event=12.0),
                   cell("trace-cmd", "w1", ns_per_event=400.0, lost=0, bytes_per_event=30.0),
                   cell("bpftrace", "w1", ns_per_event=900.0, lost=0)]
        table = "\n".join(report.targets_table(results, []))
        self.assertIn("W1: gpunoise (default events) 500 ns, trace-cmd 400 ns, bpftrace 900 ns", table)
        self.assertIn("W1: 3 lost", table)
        self.assertIn(report.MISSED, table)

    def test_cost_per_event_compares_the_run_with_the_peers_events_when_there_is_one(self):
        results = [cell("gpunoise", "w1", ns_per_event=500.0, lost=0),
                   cell("gpunoise-same", "w1", ns_per_event=90.0, lost=0),
                   cell("trace-cmd", "w1", ns_per_event=400.0, lost=0),
                   cell("bpftrace", "w1", ns_per_event=300.0, lost=0)]
        table = "\n".join(report.targets_table(results, []))
        self.assertIn("W1: gpunoise (sched,irq,softirq) 90 ns, trace-cmd 400 ns, bpftrace 300 ns", table)

    def test_met_targets_read_met(self):
        results = [cell("gpunoise", w, ns_per_event=100.0, lost=0, bytes_per_sched_event=8.4)
                   for w in ("w1", "w2udp", "w2tcp")]
        results += [cell("trace-cmd", w, ns_per_event=400.0, lost=0, bytes_per_event=30.0)
                    for w in ("w1", "w2udp", "w2tcp")]
        lines = report.targets_table(results, [])
        self.assertTrue(lines[2].endswith(f"| {report.MET} |"), lines[2])  # cost per event
        self.assertTrue(lines[3].endswith(f"| {report.MET} |"), lines[3])  # zero loss
        self.assertTrue(lines[4].endswith(f"| {report.MET} |"), lines[4])  # bytes per sched event

    def test_sched_bytes_are_judged_against_the_limit_and_against_the_peers_apart(self):
        results = [cell("gpunoise", "w1", bytes_per_sched_event=8.7),
                   cell("trace-cmd", "w1", bytes_per_event=6.3, uncompressed_bytes_per_event=26.0),
                   cell("perf", "w1", bytes_per_event=117.0)]
        lines = report.targets_table(results, [])
        self.assertTrue(lines[4].endswith(f"| {report.MET} |"), lines[4])
        self.assertIn("trace-cmd 6.3 B/event as written (26.0 B/event before its compression)", lines[5])
        self.assertTrue(lines[5].endswith(f"| {report.MISSED} |"), lines[5])

    def test_absent_monitor_and_report_benchmark_read_not_measured(self):
        results = [cell("monitor", w, error="this gpunoise has no monitor command yet")
                   for w in ("w3", "w2udp", "w2tcp")]
        micro_results = [micro.MicroResult("bench/report/report_reader_benchmark", "x",
                                           error="not built: Google Benchmark (libbenchmark-dev) is missing")]
        table = "\n".join(report.targets_table(results, micro_results))
        self.assertIn("| not measured (this gpunoise has no monitor command yet) | not measured |", table)
        self.assertIn("not measured (not built: Google Benchmark (libbenchmark-dev) is missing", table)

    def test_report_parsing_target_reads_the_reader_benchmark(self):
        m = micro.MicroResult("bench/report/report_reader_benchmark", micro.REPORT_PARSING_BENCHMARK,
                              ns_per_event=50.0, events_per_s=2e7)
        lines = report.targets_table([], [m])
        self.assertIn("20.0 M events/s", lines[7])
        self.assertTrue(lines[7].endswith(f"| {report.MET} |"))

    def test_replace_block_keeps_the_text_outside_the_markers(self):
        path = os.path.join(temp_dir(self), "doc.md")
        with open(path, "w") as f:
            f.write(f"intro\n\n{report.RESULTS_BEGIN}\nold\n{report.RESULTS_END}\n\noutro\n")
        report.replace_block(path, report.RESULTS_BEGIN, report.RESULTS_END,
                             [report.RESULTS_BEGIN, "new", report.RESULTS_END])
        with open(path) as f:
            text = f.read()
        self.assertEqual(text, f"intro\n\n{report.RESULTS_BEGIN}\nnew\n{report.RESULTS_END}\n\noutro\n")

    def test_replace_block_appends_to_a_file_without_markers(self):
        path = os.path.join(temp_dir(self), "doc.md")
        with open(path, "w") as f:
            f.write("intro\n")
        report.replace_block(path, report.TARGETS_BEGIN, report.TARGETS_END,
                             [report.TARGETS_BEGIN, "t", report.TARGETS_END])
        with open(path) as f:
            self.assertEqual(f.read(), f"intro\n\n{report.TARGETS_BEGIN}\nt\n{report.TARGETS_END}\n")

    def test_a_note_repeated_across_workloads_is_one_line(self):
        results = [cell("perf", w, note="perf refuses irq_vectors:irq_work_exit; it records the rest")
                   for w in ("W1 sched pipe", "W2 UDP")]
        run = {"quick": True, "machine": {"date": "d", "nproc": 2, "cpu": "c", "memory": "m", "kernel": "k",
                                          "irq_accounting": ""},
               "load_start": "", "load_end": "", "command": "c", "pairs": 1, "tracepoints": [], "cpu_method": ""}
        lines = report.results_block(run, [], results, [])
        self.assertIn("- perf / W1 sched pipe, W2 UDP: perf refuses irq_vectors:irq_work_exit; it records the rest",
                      lines)

    def test_a_cell_that_cannot_run_says_why(self):
        row = report.cell_row(cell("bcc", "w1", error="no kernel headers"), "ops/s")
        self.assertIn("cannot run: no kernel headers", row)


class FloorAndProgramCostTest(unittest.TestCase):
    BPFTOOL = """[{"id": 7, "type": "raw_tracepoint", "name": "gn_tp_sched_swi", "run_time_ns": 9000,
                   "run_cnt": 100, "pids": [{"pid": 41, "comm": "gpunoise"}]},
                  {"id": 8, "type": "tracepoint", "name": "other", "run_time_ns": 5, "run_cnt": 5,
                   "pids": [{"pid": 99, "comm": "someone"}]},
                  {"id": 9, "type": "raw_tracepoint", "name": "gn_tp_softirq", "run_time_ns": 1000,
                   "run_cnt": 100, "pids": [{"pid": 42, "comm": "gpunoise"}]},
                  {"id": 10, "type": "kprobe", "name": "unheld"}]"""

    def fake_proc(self):
        root = temp_dir(self)
        for pid, fds in ((41, {"3": "pos:\t0\nprog_type:\t17\nprog_id:\t7\n", "4": "pos:\t0\n"}),
                         (42, {"5": "link_type:\traw_tracepoint\nprog_id:\t9\n"})):
            os.makedirs(os.path.join(root, str(pid), "fdinfo"))
            for fd, text in fds.items():
                with open(os.path.join(root, str(pid), "fdinfo", fd), "w") as f:
                    f.write(text)
        return root

    def test_program_ids_come_from_the_tracers_fds(self):
        self.assertEqual(bpf_stats.program_ids_of([41, 42, 43], self.fake_proc()), {7, 9})

    def test_program_cost_keeps_only_the_tracers_programs(self):
        progs = bpf_stats.programs_of([41, 42], self.BPFTOOL, bpf_stats.program_ids_of([41, 42], self.fake_proc()))
        self.assertEqual([p.name for p in progs], ["gn_tp_sched_swi", "gn_tp_softirq"])
        self.assertEqual(progs[0].ns_per_run, 90)
        self.assertEqual(bpf_stats.total_ns_per_run(progs), 50)

    def test_program_cost_table_names_the_costliest_programs(self):
        c = cell("gpunoise", "w1", lost=0)
        c.programs = bpf_stats.programs_of([41, 42], self.BPFTOOL, {7, 9})
        c.program_events = 200
        row = report.program_cost_table([c])[2]
        self.assertIn("| 2 | 50 | 50 |", row)
        self.assertIn("`gn_tp_sched_swi` 90 × 100, `gn_tp_softirq` 10 × 100", row)

    def test_floor_count_is_parsed_and_absent_is_none(self):
        self.assertEqual(tracers.parse_floor_count("floor: attached 31 raw programs (count)\nfloor: events=1234\n"),
                         1234)
        self.assertIsNone(tracers.parse_floor_count("floor: attached 31 raw programs (count)\n"))

    def test_the_hooks_floor_stores_on_the_recorded_tracepoints_and_the_defaults_counting_hooks(self):
        recorded = ["sched:sched_switch", "irq:softirq_entry"]
        plain = tracers.Floor("/bin/floor", recorded, "raw", store=True)
        hooks = tracers.Floor("/bin/floor", recorded + tracers.GPUNOISE_DEFAULT_EXTRA_TRACEPOINTS, "raw",
                              store=True, hooks="-hooks")
        self.assertEqual(plain.key, "floor-store")
        self.assertEqual(hooks.key, "floor-store-hooks")
        self.assertNotEqual(plain.name, hooks.name)
        argv = hooks.argv("/tmp")
        self.assertEqual(argv[:4], ["/bin/floor", "--attach", "raw", "--store"])
        self.assertIn("napi:napi_poll", argv)
        # Packets per device come from the devices' statistics by default.
        self.assertNotIn("net:netif_receive_skb", argv)
        self.assertIn("sched:sched_switch", argv)
        self.assertNotIn("napi:napi_poll", plain.argv("/tmp"))

    def test_floor_share_target_divides_gpunoise_by_the_floor(self):
        results = [cell("gpunoise", w, ratio=0.90, lost=0) for w in ("w1", "w2udp", "w2tcp")]
        results += [cell("floor", w, ratio=1.0, lost=0) for w in ("w1", "w2udp")]
        line = report.targets_table(results, [])[-2]
        self.assertIn("W1: 0.900 / 1.000 = 0.900", line)
        self.assertIn("W2 TCP: not measured", line)
        self.assertIn(f"| {report.MISSED} (in part: some cells not measured) |", line)


    def test_recorder_share_divides_gpunoise_by_the_floor_that_stores_and_has_no_limit(self):
        results = [cell("gpunoise", w, ratio=0.90, lost=0) for w in ("w1", "w2udp", "w2tcp")]
        results += [cell("floor-store", w, ratio=0.95, lost=0) for w in ("w1", "w2udp")]
        results[0].programs = [bpf_stats.ProgramCost("gn_sched_switch", "tracing", runs=10, run_time_ns=2000)]
        results[0].program_events = 10
        results[3].programs = [bpf_stats.ProgramCost("floor_raw", "raw_tracepoint", runs=10, run_time_ns=1100)]
        results[3].program_events = 10
        line = report.targets_table(results, [])[-1]
        self.assertIn("W1: 0.900 / 0.950 = 0.947 (kernel program ns per event 200 against 110)", line)
        self.assertIn("W2 UDP: 0.900 / 0.950 = 0.947;", line)
        self.assertIn("W2 TCP: not measured", line)
        self.assertTrue(line.endswith("| figure (no limit) |"), line)
        self.assertTrue(report.targets_table([], [])[-1].endswith("| not measured |"))

    def test_net_group_table_sets_the_default_beside_the_run_without_net(self):
        results = [cell("gpunoise", "w2udp", ratio=0.60, lost=0, tracer_cpu=0.2),
                   cell("gpunoise-nonet", "w2udp", ratio=0.75, lost=0, tracer_cpu=0.15),
                   cell("gpunoise", "w1", ratio=0.85, lost=0)]
        table = report.net_group_table(results)
        self.assertEqual(len(table), 3)  # header, rule, W2 UDP only (W1 has no run without net)
        self.assertIn("| W2 UDP | 0.600 | 0.750 | 0.800 | 20.00, 15.00 |", table[2])
        self.assertEqual(report.net_group_table(results[2:]), [])

    def test_net_group_table_adds_the_per_packet_counters_where_they_ran(self):
        results = [cell("gpunoise", "w2udp", ratio=0.80, lost=0, tracer_cpu=0.2),
                   cell("gpunoise-nonet", "w2udp", ratio=0.85, lost=0, tracer_cpu=0.15),
                   cell("gpunoise-packet-counters", "w2udp", ratio=0.70, lost=0, tracer_cpu=0.25)]
        table = report.net_group_table(results)
        self.assertIn("`--net-packet-counters on`: ratio", table[0])
        self.assertIn("| W2 UDP | 0.800 | 0.850 | 0.700 | 0.941 | 20.00, 15.00, 25.00 |", table[2])

    def test_delivered_table_sets_what_the_receiver_got_traced_beside_untraced(self):
        results = [cell("gpunoise", "w2udp", ratio=0.8, base_delivered=0.995, traced_delivered=0.966),
                   cell("floor", "w2udp", ratio=0.9, base_delivered=0.996, traced_delivered=0.996),
                   cell("gpunoise", "w1", ratio=0.85)]
        table = report.delivered_table(results)
        self.assertEqual(table[2], "| gpunoise | 0.966 | 0.995 |")
        self.assertEqual(len(table), 4)  # header, rule, two W2 UDP rows; W1 has no such figure
        self.assertEqual(report.delivered_table(results[2:]), [])


class RunShTest(unittest.TestCase):
    def test_help_prints_run_py_help_without_installing_or_building(self):
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        with tempfile.TemporaryDirectory() as fake_bin:
            # Stand-ins that leave a mark if the script reaches for them.
            marker = os.path.join(fake_bin, "called")
            for tool in ("apt-get", "cmake", "ninja", "sudo"):
                path = os.path.join(fake_bin, tool)
                with open(path, "w") as f:
                    f.write(f"#!/bin/sh\necho {tool} >> {marker}\nexit 1\n")
                os.chmod(path, 0o755)
            env = dict(os.environ, PATH=fake_bin + os.pathsep + os.environ.get("PATH", ""))
            for flag in ("--help", "-h"):
                out = subprocess.run(["bash", os.path.join(root, "bench", "run.sh"), "--quick", flag], env=env,
                                     capture_output=True, text=True, timeout=60)
                self.assertEqual(out.returncode, 0, out.stderr)
                self.assertIn("usage: run.py", out.stdout)
                self.assertNotIn("bench: installing", out.stdout + out.stderr)
            self.assertFalse(os.path.exists(marker), "run.sh --help ran a tool: " +
                             (open(marker).read() if os.path.exists(marker) else ""))


if __name__ == "__main__":
    unittest.main()
