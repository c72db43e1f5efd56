#!/usr/bin/env bash
# Installs gpunoise's build dependencies (Debian 12 packages) and builds it
# into build/. Safe to run again: it installs only what is missing and
# rebuilds only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build pkg-config
  clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev libdeflate-dev
  libclang-rt-14-dev  # libFuzzer and clang's sanitizer runtimes (tools/test.sh --fuzz); clang only recommends it
  libfmt-dev libboost-program-options-dev libgtest-dev libgmock-dev libbenchmark-dev
  libprotobuf-dev protobuf-compiler
  libcpp-httplib-dev libmnl-dev
  libssl-dev libcrypt-dev libyaml-cpp-dev  # the monitor's web config: TLS, bcrypt (crypt(3)), YAML
  # What the tests and benchmarks call (as root a test whose tool is missing
  # fails, so every one that Debian packages is here):
  iproute2 ethtool util-linux mount procps  # ip netns/link, ethtool -g/-c, taskset/unshare, mount
  python3 python3-yaml  # the bench harness tests, JSON and manifest checks (PyYAML)
  shellcheck  # the Slurm health-check wrapper
  openssl  # test certificates for the monitor's TLS tests
  systemd  # systemd-analyze security: the shipped unit's sandboxing test (nothing is started)
  prometheus  # promtool (rule checks and tests) and a server for the monitor integration test
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $EUID -ne 0 ]]; then
    echo "setup: missing packages: ${missing[*]} (run as root to install them)" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The recorder mounts tracefs itself when it can; do it here too so the
# classic-tracepoint fallback and NIC tracepoint discovery work in tests.
if [[ $EUID -eq 0 && ! -d /sys/kernel/tracing/events ]]; then
  mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
fi

build_type=${GPUNOISE_BUILD_TYPE:-RelWithDebInfo}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="$build_type" ${GPUNOISE_CMAKE_ARGS:-} >/dev/null
ninja -C build
