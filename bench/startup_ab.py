#!/usr/bin/env python3
"""Start-up of `gpunoise record`, two or more builds side by side.

Runs `BINARY record -d D -o FILE` for each variant in interleaved pairs (the
order flips every pair, so drift in the machine's load hits both alike) and
prints, per variant, the median and range of
  start-up: from exec to record's "recording ..." line (every collector
            loaded and attached, the gate about to open), and
  cpu:      user + system time of the whole run (start, D seconds, stop),
then each variant's per-pair ratio to the first. Root; each run is bounded by D.

usage: sudo bench/startup_ab.py [--pairs N] [--duration D] NAME=BINARY[,VAR=VALUE...] NAME=BINARY...
example:
  # this branch against main, 10 pairs
  sudo bench/startup_ab.py --pairs 10 main=/work/main/build/tools/gpunoise/gpunoise \\
      branch=build/tools/gpunoise/gpunoise
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def run_once(binary, env, duration, out):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.Popen([binary, 'record', '-d', str(duration), '-o', out], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    started, err = None, ''
    for line in p.stderr:
        err += line
        if started is None and line.startswith('gpunoise: recording '):
            started = time.monotonic()
    p.wait(timeout=duration + 60)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0 or started is None:
        sys.exit(f'startup_ab: {binary} failed (exit {p.returncode}): {err.strip()[-400:]}')
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return started - t0, cpu


def span(values, scale=1.0, fmt='{:.0f}'):
    return (f'{fmt.format(statistics.median(values) * scale)} '
            f'[{fmt.format(min(values) * scale)}-{fmt.format(max(values) * scale)}]')


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--pairs', type=int, default=8, help='interleaved runs per variant (default 8)')
    ap.add_argument('--duration', type=float, default=0.1, help='record -d, seconds (default 0.1)')
    ap.add_argument('variants', nargs='+', help='NAME=BINARY[,VAR=VALUE...]')
    args = ap.parse_args()
    if len(args.variants) < 2 or args.pairs < 1:
        ap.error('usage: give at least two variants and --pairs >= 1')
    variants = []
    for spec in args.variants:
        name, _, rest = spec.partition('=')
        fields = rest.split(',')
        if not name or not fields[0]:
            ap.error(f'usage: bad variant {spec!r} (NAME=BINARY[,VAR=VALUE...])')
        env = dict(os.environ)
        for kv in fields[1:]:
            k, _, v = kv.partition('=')
            env[k] = v
        variants.append((name, fields[0], env))
    results = {name: [] for name, _, _ in variants}
    with tempfile.TemporaryDirectory(prefix='gpunoise-startup-') as tmp:
        for i in range(args.pairs):
            for name, binary, env in (variants if i % 2 == 0 else variants[::-1]):
                out = os.path.join(tmp, f'{name}.pftrace')
                results[name].append(run_once(binary, env, args.duration, out))
                os.unlink(out)
    print(f'load average {open("/proc/loadavg").read().split()[0]}, {args.pairs} pairs, record -d {args.duration}')
    base = variants[0][0]
    for name, _, _ in variants:
        rows = results[name]
        print(f'{name}: start-up ms {span([r[0] for r in rows], 1000)}, cpu ms {span([r[1] for r in rows], 1000)}')
    for name, _, _ in variants[1:]:
        pairs = list(zip(results[base], results[name]))
        print(f'{name}/{base}: start-up {span([b[0] / a[0] for a, b in pairs], fmt="{:.3f}")}, '
              f'cpu {span([b[1] / a[1] for a, b in pairs], fmt="{:.3f}")}')


if __name__ == '__main__':
    main()
