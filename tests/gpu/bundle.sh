#!/usr/bin/env bash
# Packs what tests/gpu/check.sh needs into one folder, for a GPU machine that
# has the CUDA toolkit and a driver but not this project's build tools
# (clang, bpftool, libbpf, protobuf): gpunoise, libgpunoise_cupti.so and
# gpu_trace_check, stripped, with the shared libraries they load that are not
# part of glibc or the compiler runtime (the GPU machine's own are newer).
# check.sh then runs with GPUNOISE_BUNDLE=DIR and builds nothing but the CUDA
# program.
#
# Usage: tests/gpu/bundle.sh OUT_DIR [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: tests/gpu/bundle.sh OUT_DIR [BUILD_DIR]}
build=${2:-build}

[[ -f $build/build.ninja ]] || { echo "bundle.sh: no build in $build (run tools/setup.sh first)" >&2; exit 2; }
ninja -C "$build" gpunoise gpunoise_cupti gpu_trace_check gpunoise-scale-model >/dev/null
binaries=("$build/tools/gpunoise/gpunoise" "$build/tools/gpunoise/libgpunoise_cupti.so"
          "$build/tests/gpu/gpu_trace_check" "$build/bench/gpunoise-scale-model")
rm -rf "$out"
mkdir -p "$out/lib"
for b in "${binaries[@]}"; do
  strip --strip-debug -o "$out/$(basename "$b")" "$b"
done

# glibc, libstdc++ and libgcc_s stay behind: a newer system's are compatible,
# an older one fails loudly at load, which check.sh reports.
system_runtime='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libutil|libstdc\+\+|libgcc_s)\.'
for b in "${binaries[@]}"; do
  ldd "$b" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  [[ $name =~ $system_runtime ]] && continue
  cp -L "$path" "$out/lib/$name"
done
echo "bundle in $out: $(du -sh "$out" | cut -f1)"
