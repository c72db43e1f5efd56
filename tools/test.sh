#!/usr/bin/env bash
# Runs every test: unit tests always; integration tests load real eBPF
# programs and need root (as root they must run: a skip is a failure, except
# for what no Debian package gives, such as trace_processor_shell or an
# NVIDIA GPU). After ctest's own summary it lists the tests that skipped, with
# their reasons.
#
#   tools/test.sh [CTEST_ARGS...]        the suite (build/)
#   tools/test.sh --sanitize --fuzz      instead: the unit tests built with
#       ASan+UBSan (build-asan/, tools/sanitize_tests.sh) and the fuzz targets
#       from their seeds to their coverage floors (build-fuzz/,
#       tools/fuzz_tests.sh); either flag alone runs that part only.
set -euo pipefail
cd "$(dirname "$0")/.."
sanitize=0 fuzz=0
while [[ $# -gt 0 && ( $1 == --sanitize || $1 == --fuzz ) ]]; do
  [[ $1 == --sanitize ]] && sanitize=1 || fuzz=1
  shift
done
start=$SECONDS
tools/setup.sh
built=$SECONDS
if ((sanitize || fuzz)); then
  rc=0
  if ((sanitize)); then tools/sanitize_tests.sh "$@" || rc=1; fi
  if ((fuzz)); then tools/fuzz_tests.sh || rc=1; fi
  exit "$rc"
fi
if [[ $EUID -eq 0 ]]; then
  export GPUNOISE_REQUIRE_ROOT_TESTS=1
  # ip netns exec and private tmpfs mounts need "/" to be a mount point.
  if ! awk '$5 == "/" { found = 1 } END { exit !found }' /proc/self/mountinfo; then
    echo "test: / is not a mount point (chroot?): the network-namespace and tmpfs tests will fail;" \
         "bind-mount the root onto itself (mount --bind ROOT ROOT) before chroot" >&2
  fi
fi
junit="$PWD/build/ctest-junit.xml"
rm -f "$junit"
rc=0
# Unit tests run in parallel; integration tests are RUN_SERIAL (alone).
ctest --test-dir build --output-on-failure --timeout 600 -j"$(nproc)" --output-junit "$junit" "$@" || rc=$?
echo "test: setup and build $((built - start)) s, tests $((SECONDS - built)) s"
if [[ -f $junit ]]; then
  python3 - "$junit" <<'PY' || true
import re, sys
import xml.etree.ElementTree as ET

skips = []
for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    s = case.find("skipped")
    # "Not Run" (no executable) is marked skipped too, but ctest counts it as a failure.
    if s is None or s.get("message") != "SKIP_REGULAR_EXPRESSION_MATCHED":
        continue
    out = case.findtext("system-out") or ""
    m = re.search(r"^\S+:\d+: Skipped\n(.*?)\n?\[  SKIPPED \]", out, re.S | re.M)
    reason = " ".join(m.group(1).split()) if m and m.group(1).strip() else "(no reason given)"
    skips.append((case.get("name"), reason))
if skips:
    print(f"\ntest: {len(skips)} skipped (as root only what no Debian package gives may skip):")
    for name, reason in skips:
        print(f"  {name}: {reason}")
else:
    print("\ntest: no test skipped")
PY
fi
exit "$rc"
