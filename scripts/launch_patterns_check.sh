#!/usr/bin/env bash
# Launch patterns on the GPU, in one call of at most ~9 minutes on a fresh machine, step by step:
#   build      this tree: the Python package in place, the launch-pattern GPU tests, kscope_overhead
#   gpu_tests  the C++ launch-pattern GPU tests (kscope_launch_patterns_gpu_tests)
#   baseline   the baseline's Python package (.carry/baseline: the commit before the L2 flush was
#              ordered with side streams)
#   cold       before (baseline) and after (this tree), on this GPU: the cold run's cost against the
#              GPU's busy time (bench/durations_cost.py --cold + bench/cost_table.py, target <= 1.3x)
#              and the side-stream table (bench/side_streams.py: torch.add of 2^24 floats on the
#              default stream, a side stream, and one joined both ways)
#   pytest     the Python launch-pattern GPU tests (tests/python/test_launch_patterns_gpu.py)
# then a compact summary last. A step that would end past KSCOPE_GPU_TIME_LIMIT_S is left out (SKIP):
# run the script again on the warm machine (the builds are kept) with the steps done in
# KSCOPE_GPU_CHECK_SKIP. Logs to $OUT. Never changes clocks, power or modes.
#   bash scripts/launch_patterns_check.sh prepare   on a machine with git, before copying the
#                                                    checkout: .carry/baseline from BASELINE
#   bash scripts/launch_patterns_check.sh            on the GPU machine (needs .carry/ from
#                                                    scripts/prepare_carry.sh and the prepare step)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
BASELINE=${BASELINE:-b96e6c0}

if [[ ${1:-} == prepare ]]; then
  source "$ROOT/scripts/gpu_steps.sh"
  baseline_prepare "$BASELINE" .carry/baseline
  exit
fi

export OUT=${OUT:-$ROOT/launch-patterns-out}
export KSCOPE_GPU_TIME_LIMIT_S=${KSCOPE_GPU_TIME_LIMIT_S:-540}
mkdir -p "$OUT"
source "$ROOT/scripts/gpu_steps.sh"
BUILD=$ROOT/build-launch
BASE_SRC=$ROOT/.carry/baseline
BASE_BUILD=$ROOT/build-baseline
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

summary() {
  echo
  echo "--- the cold run, before (baseline $(cat "$BASE_SRC/COMMIT" 2>/dev/null)) and after ---"
  for side in before after; do
    [[ -s $WORK/$side/table.txt ]] && sed -n "s/^cold run ratio/$side: cold run ratio/p" "$WORK/$side/table.txt"
  done
  for side in before after; do
    if [[ -s $WORK/side_$side.txt ]]; then
      echo "--- torch.add 2^24 floats, median ns (30 runs), $side ---"
      grep -v '^PY ' "$WORK/side_$side.txt"
    fi
  done
  echo "--- [result] lines of the GPU tests ---"
  grep -h '^\[result\]' "$OUT/gpu_tests.log" "$OUT/pytest.log" 2>/dev/null | cut -c1-160
  grep -hE '^\[  FAILED  \]|^FAILED ' "$OUT/gpu_tests.log" "$OUT/pytest.log" 2>/dev/null | sort -u | head -20
  print_steps "launch patterns (scripts/launch_patterns_check.sh)"
  printf '%s\n' "${SUMMARY[@]}" | grep -q ' FAIL ' && exit 1
  exit 0
}

gpu_build "$BUILD" "$OUT/build.log" ON _core kscope_launch_patterns_gpu_tests gpu_spinner kscope_overhead
case $? in
  0) record build PASS "$BUILD, Release, sm_90" ;;
  1) record build FAIL "configuring failed: $(grep -m1 -E 'Error' "$OUT/build.log")"; summary ;;
  *) record build FAIL "first error: $(grep -m1 -E 'error:|Error ' "$OUT/build.log")" ;;
esac

skipping gpu_tests 200 || {
  timeout 300 "$BUILD/tests/gpu/kscope_launch_patterns_gpu_tests" > "$OUT/gpu_tests.log" 2>&1
  rc=$?
  line=$(grep -E '^\[  (PASSED|FAILED|SKIPPED) \]' "$OUT/gpu_tests.log" | paste -sd' ' -)
  [[ $rc -eq 0 ]] && ! grep -q '^\[  SKIPPED \]' "$OUT/gpu_tests.log" &&
    record gpu_tests PASS "$line" || record gpu_tests FAIL "rc=$rc: $line"
}

if skipping baseline 200; then
  :
elif [[ ! -f $BASE_SRC/CMakeLists.txt ]]; then
  record baseline SKIP "no .carry/baseline: run 'bash scripts/launch_patterns_check.sh prepare' before copying"
else
  baseline_build "$BASE_SRC" "$BASE_BUILD" "$OUT/build_baseline.log" ON _core &&
    record baseline PASS "$(cat "$BASE_SRC/COMMIT")" ||
    record baseline FAIL "first error: $(grep -m1 -E 'error:|Error ' "$OUT/build_baseline.log")"
fi

# The cold run and the side-stream table, before (baseline) and after (this tree), on this GPU. The
# flush's GPU time comes from this tree's kscope_overhead (the flush is the same work in both).
if ! skipping cold 150; then
  timeout 120 "$BUILD/bench/kscope_overhead" --call-breakdown > "$WORK/durations_gpu.txt" 2>&1
  for side in before after; do
    python_dir=$BUILD/python
    [[ $side == before ]] && python_dir=$BASE_BUILD/python
    [[ -d $python_dir/kscope ]] || continue
    mkdir -p "$WORK/$side"
    cp "$WORK/durations_gpu.txt" "$WORK/$side/"
    PYTHONPATH=$python_dir timeout 180 python3 bench/durations_cost.py --cold > "$WORK/$side/durations.txt" 2> "$WORK/$side/durations.err"
    python3 bench/cost_table.py "$WORK/$side" > "$WORK/$side/table.txt" 2>&1
    PYTHONPATH=$python_dir timeout 90 python3 bench/side_streams.py > "$WORK/side_$side.txt" 2>&1
    { echo "## $side"; cat "$WORK/$side"/{durations.txt,durations.err,table.txt} "$WORK/side_$side.txt"; } >> "$OUT/cold.log"
  done
  after=$(sed -nE 's/^cold run ratio ([0-9.]+)x.*/\1/p' "$WORK/after/table.txt" 2>/dev/null)
  before=$(sed -nE 's/^cold run ratio ([0-9.]+)x.*/\1/p' "$WORK/before/table.txt" 2>/dev/null)
  # "PY side_stream <cache> <launch> median_ns X"
  side_of() {  # the side stream against the default stream, cache_control all, in percent
    awk '$3 == "all" && $4 == "side" {s = $6} $3 == "all" && $4 == "default" {d = $6}
         END {if (d) printf "%+.1f", 100 * (s / d - 1)}' "$1" 2>/dev/null
  }
  side_before=$(side_of "$WORK/side_before.txt")
  side=$(side_of "$WORK/side_after.txt")
  figures="cold run ${before:-?}x before, ${after:-not measured}x after (<= 1.3x); side stream vs default"
  figures+=" ${side_before:-?}% before, ${side:-?}% after (within 2%)"
  if [[ -n $after && -n $side ]] && awk -v r="$after" -v d="$side" 'BEGIN {exit !(r <= 1.3 && d <= 2 && d >= -2)}'; then
    record cold PASS "$figures"
  else
    record cold FAIL "$figures; see cold.log"
  fi
fi

skipping pytest 150 || {
  PYTHONPATH=$BUILD/python timeout $((KSCOPE_GPU_TIME_LIMIT_S - SECONDS - 10)) python3 -m pytest \
    tests/python/test_launch_patterns_gpu.py -m gpu -q -rs -s -p no:cacheprovider > "$OUT/pytest.log" 2>&1
  rc=$?
  line=$(grep -E '[0-9]+ (passed|failed)' "$OUT/pytest.log" | tail -1)
  [[ $rc -eq 0 ]] && record pytest PASS "$line" || record pytest FAIL "rc=$rc: $line"
}

summary
