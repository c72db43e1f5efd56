#!/usr/bin/env bash
# What GPU capture costs a training step, on a machine with an NVIDIA GPU and
# PyTorch: tests/gpu/torch_workload.py's median step time untraced, with the
# injection library alone (`gpunoise env`), with every API call recorded, with
# NVTX left alone, and under a full `gpunoise record -- ...` (root). Rounds are
# interleaved and each variant is reported as a ratio to the untraced run of
# the same round, never as an absolute time.
#
# Usage: bench/gpu/capture_cost.sh [ROUNDS] [STEPS]        (default 2 300)
#        GPUNOISE_BUNDLE=DIR bench/gpu/capture_cost.sh    (tests/gpu/bundle.sh output)
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-2}
steps=${2:-300}
if [[ -n ${GPUNOISE_BUNDLE:-} ]]; then
  bin=$(cd "$GPUNOISE_BUNDLE" && pwd)
  libs=$bin/lib
else
  bin=$PWD/build/tools/gpunoise
  libs=
fi
gn() { LD_LIBRARY_PATH=$libs "$bin/gpunoise" "$@"; }
python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 3)' 2>/dev/null ||
  { echo "capture_cost: needs PyTorch with a CUDA GPU" >&2; exit 2; }

frag=$(mktemp -d)
trap 'rm -rf "$frag"' EXIT
capture_env=$(gn env "$frag")
workload=(python3 tests/gpu/torch_workload.py --steps "$steps")

median_ms() { sed -n 's/.*median \([0-9.]*\) ms\/step.*/\1/p' | tail -1; }
run() {
  case $1 in
    untraced) "${workload[@]}" ;;
    capture) (eval "$capture_env"; exec "${workload[@]}") ;;
    capture-all-api) (eval "$capture_env"; export GPUNOISE_GPU_API=all; exec "${workload[@]}") ;;
    capture-no-nvtx) (eval "$capture_env"; unset NVTX_INJECTION64_PATH; exec "${workload[@]}") ;;
    record) gn record -d 300 -o "$frag/record.pftrace" -- env -u LD_LIBRARY_PATH "${workload[@]}" ;;
  esac 2>&1 | median_ms
  rm -f "$frag"/*
}

variants=(capture capture-all-api capture-no-nvtx)
[[ $EUID -eq 0 ]] && variants+=(record)
printf '%-16s' round untraced "${variants[@]}"; echo
for ((r = 1; r <= rounds; r++)); do
  base=$(run untraced)
  printf '%-16s%-16s' "$r" "$base ms"
  for v in "${variants[@]}"; do
    ms=$(run "$v")
    printf '%-16s' "$(awk -v a="$ms" -v b="$base" 'BEGIN { if (a == "" || b == "") print "failed"; else printf "%.3f", a / b }')"
  done
  echo
done
echo "(ratios: median step time of the variant / untraced median of the same round; lower is better, 1.000 = free)"
