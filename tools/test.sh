#!/usr/bin/env bash
# Runs every test: unit tests always; integration tests load real eBPF
# programs and need root (as root they must run: a skip is a failure).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
if [[ $EUID -eq 0 ]]; then
  export GPUNOISE_REQUIRE_ROOT_TESTS=1
fi
ctest --test-dir build --output-on-failure --timeout 600 "$@"
