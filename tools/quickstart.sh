#!/usr/bin/env bash
# One command on a fresh Debian 12 node, as root: install what gpunoise
# needs, build it, and record 10 seconds of this node into a Perfetto trace.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
out=${1:-gpunoise-$(hostname)-$(date +%Y%m%d-%H%M%S).pftrace}
build/tools/gpunoise/gpunoise record -d 10 -o "$out"
echo "open $out at https://ui.perfetto.dev"
