#!/usr/bin/env bash
# The benchmark in one command: installs the tracers gpunoise is compared
# with (Debian packages: bpftrace, trace-cmd, bpfcc-tools, linux-perf) when
# they are missing, builds gpunoise and the benchmark tools (tools/setup.sh),
# then runs bench/run.py with the arguments given here.
#
#   sudo bench/run.sh            # full run: 3 pairs per cell; writes docs/performance.md and README.md
#   sudo bench/run.sh --quick    # smoke run: 1 pair, short loads; writes build/bench-quick.md
#   bench/run.sh --help          # run.py's options; installs, builds and needs nothing
set -euo pipefail
cd "$(dirname "$0")/.."
# Help first: nothing installed or built, and no root needed to read it.
for arg in "$@"; do
  case "$arg" in
    -h|--help) exec python3 bench/run.py --help ;;
  esac
done
if [[ $EUID -ne 0 ]]; then
  echo "bench: needs root (sudo bench/run.sh)" >&2
  exit 1
fi

# package:command pairs
wanted=(bpftrace:bpftrace trace-cmd:trace-cmd bpfcc-tools:softirqs-bpfcc linux-perf:perf)
missing=()
for w in "${wanted[@]}"; do
  command -v "${w#*:}" >/dev/null 2>&1 || missing+=("${w%%:*}")
done
if ((${#missing[@]})); then
  echo "bench: installing ${missing[*]}"
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
          --no-install-recommends "${missing[@]}" >/dev/null; }; then
    # Not fatal: a tracer that is missing reads "cannot run" in the table.
    echo "bench: could not install ${missing[*]}; their rows will say why they cannot run" >&2
  fi
fi

tools/setup.sh
export GPUNOISE_BENCH_COMMAND="sudo bench/run.sh${*:+ $*}"
exec python3 bench/run.py "$@"
