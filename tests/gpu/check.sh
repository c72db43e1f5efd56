#!/usr/bin/env bash
# GPU capture, checked on a machine with an NVIDIA GPU and driver (run as
# root: the kernel side loads eBPF programs). Builds gpunoise and a small
# CUDA program (tests/gpu/gpu_workload.cu: two kernels on two streams fed by
# two threads, host<->device copies, NVTX ranges), records it with
# `gpunoise record -- ...`, and checks with gpu_trace_check that every kernel
# appears exactly once, inside the recording window, on one stream track
# per stream, with a flow from the launch call on the thread that launched
# it, and that this thread is in the kernel-side scheduling data; copies and
# NVTX ranges are counted too, and NVML counters must be there.
#
# Usage: tests/gpu/check.sh [BUILD_DIR]   (default: build-gpu-check)
#        GPUNOISE_BUNDLE=DIR tests/gpu/check.sh   (binaries packed by
#        tests/gpu/bundle.sh elsewhere; nothing but the CUDA program is built)
# Artifacts (trace, manifest, verdict) go to $OUT if set, else to a temp dir.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-gpu-check}
cuda=${CUDA_HOME:-/usr/local/cuda}
export PATH="$cuda/bin:$PATH"

fail() { echo "check.sh: $*" >&2; exit 2; }
[[ $EUID -eq 0 ]] || fail "run as root (the kernel side loads eBPF programs)"
command -v nvidia-smi >/dev/null || fail "no nvidia-smi: this needs an NVIDIA driver"
nvidia-smi -L | grep -q '^GPU ' || fail "nvidia-smi lists no GPU"
command -v nvcc >/dev/null || fail "no nvcc under $cuda/bin (set CUDA_HOME)"
nvidia-smi -L

echo "== kernel $(uname -r); BTF: $([[ -r /sys/kernel/btf/vmlinux ]] && echo yes || echo NO)"
if [[ -n ${GPUNOISE_BUNDLE:-} ]]; then
  bundle=$(cd "$GPUNOISE_BUNDLE" && pwd)
  gpunoise=$bundle/gpunoise
  trace_check=$bundle/gpu_trace_check
  export LD_LIBRARY_PATH="$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  missing=$(ldd "$gpunoise" "$trace_check" | grep 'not found' || true)
  [[ -z $missing ]] || fail "the bundle's binaries miss libraries here: $missing"
else
  echo "== build ($build)"
  if [[ ! -f $build/build.ninja ]]; then
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUNOISE_BUILD_TESTS=ON \
      -DCUDAToolkit_ROOT="$cuda" >/dev/null
  fi
  ninja -C "$build" gpunoise gpunoise_cupti gpu_trace_check
  gpunoise=$build/tools/gpunoise/gpunoise
  trace_check=$build/tests/gpu/gpu_trace_check
fi
[[ -f $(dirname "$gpunoise")/libgpunoise_cupti.so ]] || fail "libgpunoise_cupti.so was not built (CUPTI not found?)"

# The injection library dlopens libcupti by soname, then by the path it was
# built against; a toolkit laid out differently is found here instead.
if ! ldconfig -p | grep -q 'libcupti\.so' && [[ ! -e $cuda/lib64/libcupti.so.13 ]]; then
  cupti=$(find "$cuda"/ /usr/local/cuda*/ /opt -name 'libcupti.so*' -type f 2>/dev/null | sort | tail -1 || true)
  [[ -n $cupti ]] || fail "no libcupti.so under $cuda or /opt"
  export GPUNOISE_CUPTI_PATH=$cupti
  echo "== CUPTI from $cupti"
fi

work=$(mktemp -d /tmp/gpunoise-gpu-check-XXXXXX)
chmod 1777 "$work"  # under sudo the workload runs as the invoking user
keep_artifacts() {
  if [[ -n ${OUT:-} ]]; then
    cp "$work"/{run.pftrace,manifest.txt,record.txt,verdict.txt,scale_model.md} "$OUT"/ 2>/dev/null || true
    echo "artifacts in $OUT"
  fi
  rm -rf "$work"
}
trap keep_artifacts EXIT
echo "== nvcc gpu_workload"
arch=(-arch=native)
nvcc -O2 -std=c++17 "${arch[@]}" -o "$work/gpu_workload" tests/gpu/gpu_workload.cu 2>/dev/null ||
  nvcc -O2 -std=c++17 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_75,code=compute_75 \
    -o "$work/gpu_workload" tests/gpu/gpu_workload.cu

echo "== record"
record_status=0
"$gpunoise" record -d 120 -o "$work/run.pftrace" -- \
  "$work/gpu_workload" --iterations 50 --manifest "$work/manifest.txt" 2>&1 |
  tee "$work/record.txt" || record_status=$?
[[ $record_status -eq 0 ]] || fail "gpunoise record exited with status $record_status"
echo "expect nvml" >> "$work/manifest.txt"

echo "== check"
status=0
"$trace_check" "$work/run.pftrace" "$work/manifest.txt" 2>&1 | tee "$work/verdict.txt" || status=$?

# The recorder's scale model (docs/performance.md) wants a machine with CPUs
# to spare for its drain threads; this is one. About a minute; GPUNOISE_SCALE_MODEL=0 skips it.
scale_model=${gpunoise%/tools/gpunoise/gpunoise}/bench/gpunoise-scale-model
[[ -n ${GPUNOISE_BUNDLE:-} ]] && scale_model=$bundle/gpunoise-scale-model
if [[ ${GPUNOISE_SCALE_MODEL:-1} != 0 && -x $scale_model ]]; then
  echo "== scale model"
  producers=$(( $(nproc) > 8 ? $(nproc) - 4 : 1 ))
  timeout 240 "$scale_model" --rings 64,256 --threads 1,4 --rates 8000,32000,128000 --seconds 2 \
    --producers "$producers" 2>&1 | tee "$work/scale_model.md" || echo "scale model: exit $?"
  # One drain thread with record's lanes and deflate thread (--drain-threads,
  # --deflate-thread): where that one thread stops now.
  for lanes in 2 4; do
    timeout 120 "$scale_model" --rings 256 --threads 1 --lanes "$lanes" --deflate-thread \
      --rates 32000,64000,128000 --seconds 2 --producers "$producers" 2>&1 | tee -a "$work/scale_model.md" ||
      echo "scale model (lanes $lanes): exit $?"
  done
fi
exit "$status"
