#!/usr/bin/env bash
# `kscope compare` on real measurements (issue 16's GPU acceptance), on the GPU machine. Three
# sessions of spin kernels of 20 us and 50 us and a 64 MiB copy (tests/gpu/spin_results.cu, 30
# runs each, backend cupti, L2 flushed): a baseline, the same kernels again, and variants 10%
# slower (22 us and 55 us spins, a 70.4 MiB copy). Expected:
#   kscope compare base.json same.json   -> every row `same`,   exit code 0
#   kscope compare base.json slower.json -> every row `slower`, exit code 1
# It prints both comparisons and a last line "compare check: PASS" or "compare check: FAIL (...)",
# and exits 0 or 1 accordingly (2 when the programs are missing).
#
# Usage: bash scripts/compare_check.sh [BUILD_DIR]   (a CUDA build; default build-gpu, gpu_check.sh's)
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-gpu}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
for program in "$BUILD/tests/gpu/spin_results" "$BUILD/kscope"; do
  if [[ ! -x $program ]]; then
    echo "compare check: FAIL ($program is missing: build with CUDA first, e.g. bash scripts/gpu_check.sh)"
    exit 2
  fi
done

for session in base:1.0 same:1.0 slower:1.1; do
  name=${session%%:*}
  if ! "$BUILD/tests/gpu/spin_results" "$WORK/$name.json" "${session#*:}" > "$WORK/$name.txt" 2>&1; then
    cat "$WORK/$name.txt"
    echo "compare check: FAIL (spin_results $name did not measure)"
    exit 1
  fi
done

problems=()
check() {  # candidate, expected exit code, expected verdict of every row
  local candidate=$1 expected_rc=$2 verdict=$3 rc verdicts
  echo "## kscope compare base.json $candidate.json"
  "$BUILD/kscope" compare "$WORK/base.json" "$WORK/$candidate.json"
  rc=$?
  echo "exit code $rc (expected $expected_rc)"
  echo
  verdicts=$("$BUILD/kscope" compare --json "$WORK/base.json" "$WORK/$candidate.json" |
             python3 -c 'import json, sys; print(" ".join(r["Verdict"] for r in json.load(sys.stdin)["rows"]))')
  [[ $rc -eq $expected_rc ]] || problems+=("$candidate: exit code $rc, expected $expected_rc")
  local v rows=0 other=0
  for v in $verdicts; do
    rows=$((rows + 1))
    [[ $v == "$verdict" ]] || other=$((other + 1))
  done
  [[ $rows -gt 0 && $other -eq 0 ]] || problems+=("$candidate: verdicts '$verdicts', expected all $verdict")
}
check same 0 same
check slower 1 slower

if [[ ${#problems[@]} -eq 0 ]]; then
  echo "compare check: PASS (same kernel: all same, exit 0; 10% slower kernel: all slower, exit 1)"
  exit 0
fi
joined=$(printf '%s; ' "${problems[@]}")
echo "compare check: FAIL (${joined%; })"
exit 1
