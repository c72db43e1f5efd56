#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, build-fuzz/, -DGPUNOISE_FUZZ=ON), makes
# their seed corpora, and runs each target for GPUNOISE_FUZZ_SECONDS (default
# 20) from its seeds. A target fails the run when it crashes (ASan, UBSan, a
# leak, a timeout, or memory beyond -rss_limit_mb: the input is kept under
# build-fuzz/fuzz/artifacts/) or when its coverage (libFuzzer's `cov:`, edges
# reached) ends below its floor in tests/fuzz/coverage_floors.txt.
#
# Seeds: tests/fuzz/seeds.cc writes the made ones (the project's writers,
# known-bad inputs, text shaped like the real files); this script adds real
# ones where the machine has them: a `gpunoise record` of one second (root),
# a GPU fragment from fake_cuda_app, /proc/interrupts, /proc/cmdline and
# tracefs format files.
#
#   tools/fuzz_tests.sh                 every target
#   tools/fuzz_tests.sh trace_reader    one (the target's name without _fuzzer)
#   GPUNOISE_FUZZ_SECONDS=600 tools/fuzz_tests.sh trace_reader   a longer hunt
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${GPUNOISE_FUZZ_SECONDS:-20}
start=$SECONDS
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DGPUNOISE_FUZZ=ON -DGPUNOISE_BUILD_TESTS=OFF ${GPUNOISE_CMAKE_ARGS:-} >/dev/null
ninja -C build-fuzz ${GPUNOISE_NINJA_ARGS:-} fuzzers
built=$SECONDS

work=build-fuzz/fuzz
rm -rf "$work/seeds" "$work/corpus"
mkdir -p "$work/seeds" "$work/corpus" "$work/artifacts" "$work/logs"
build-fuzz/tests/fuzz/fuzz_seeds "$work/seeds"

# Real inputs from this machine, where it has them.
cp /proc/interrupts "$work/seeds/irq_names/proc-interrupts" 2>/dev/null || true
cp /proc/cmdline "$work/seeds/kernel_cmdline/proc-cmdline" 2>/dev/null || true
cp tests/blackbox/data/ftrace-trace-6.18.txt "$work/seeds/text_dump/" 2>/dev/null || true
for event in sched/sched_switch sched/sched_waking irq/irq_handler_entry napi/napi_poll \
             net/netif_receive_skb net/net_dev_xmit skb/kfree_skb; do
  f=/sys/kernel/tracing/events/$event/format
  [[ -r $f ]] && cp "$f" "$work/seeds/tracefs_format/${event//\//-}" || true
done
gpunoise=build/tools/gpunoise/gpunoise
if [[ $EUID -eq 0 && -x $gpunoise ]]; then
  for compress in none zlib; do
    out="$work/recording-$compress.pftrace"
    if "$gpunoise" record -d 1 --compress "$compress" -o "$out" -- sleep 0.5 >/dev/null 2>&1; then
      for corpus in trace_reader trace_merger; do cp "$out" "$work/seeds/$corpus/"; done
    else
      echo "fuzz: note: a one-second recording failed; the trace targets start from the made seeds only" >&2
    fi
    rm -f "$out"
  done
fi
lib=build/tools/gpunoise/libgpunoise_cupti.so fake_app=build/tests/cupti/fake_cuda_app
fake_cupti=build/tests/cupti/libfake_cupti.so
if [[ -x $fake_app && -f $lib && -f $fake_cupti ]]; then
  gpu_dir=$(mktemp -d)
  CUDA_INJECTION64_PATH=$PWD/$lib GPUNOISE_GPU_DIR=$gpu_dir GPUNOISE_CUPTI_PATH=$PWD/$fake_cupti \
    GPUNOISE_GPU_FLUSH_MS=100 "$fake_app" --seconds 0.3 2>/dev/null || true
  for f in "$gpu_dir"/*; do
    [[ -f $f ]] || continue
    for corpus in trace_reader trace_merger; do cp "$f" "$work/seeds/$corpus/gpu-fragment-$(basename "$f")"; done
  done
  rm -rf "$gpu_dir"
fi

declare -A floor
while read -r name value _; do
  [[ -z $name || $name == \#* ]] && continue
  floor[$name]=$value
done < tests/fuzz/coverage_floors.txt

targets=("$@")
if ((${#targets[@]} == 0)); then
  for bin in build-fuzz/tests/fuzz/*_fuzzer; do targets+=("$(basename "${bin%_fuzzer}")"); done
fi
rc=0
summary=()
for t in "${targets[@]}"; do
  bin=build-fuzz/tests/fuzz/${t}_fuzzer
  [[ -x $bin ]] || { echo "fuzz: no target $t" >&2; rc=1; continue; }
  mkdir -p "$work/corpus/$t" "$work/seeds/$t"
  log=$work/logs/$t.log
  # New inputs go to corpus/T; seeds/T is read only. -seed fixes the
  # mutation order; -max_len bounds inputs (the seeds are smaller).
  status=0
  "$bin" -seed=1 -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$work/artifacts/$t-" \
    "$work/corpus/$t" "$work/seeds/$t" >"$log" 2>&1 || status=$?
  cov=$(grep -oE '(INITED|DONE|pulse|NEW|REDUCE|RELOAD) +cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+$' || echo 0)
  runs=$(grep -oE 'stat::number_of_executed_units: [0-9]+' "$log" | grep -oE '[0-9]+$' || echo '?')
  want=${floor[$t]:-}
  line="$t: cov $cov (floor ${want:-none}), $runs runs"
  if ((status != 0)); then
    line+=", FAILED (exit $status): $(ls "$work/artifacts/$t-"* 2>/dev/null | head -1)"
    echo "fuzz: $t failed; the end of $log:" >&2
    tail -n 40 "$log" >&2
    rc=1
  elif [[ -z $want ]]; then
    line+=", FAILED: no floor in tests/fuzz/coverage_floors.txt"
    rc=1
  elif ((cov < want)); then
    line+=", FAILED: below its floor"
    rc=1
  fi
  summary+=("$line")
done
echo "fuzz: ${seconds} s per target; build $((built - start)) s, total $((SECONDS - start)) s"
printf '  %s\n' "${summary[@]}"
exit "$rc"
