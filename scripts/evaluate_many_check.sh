#!/usr/bin/env bash
# kscope.evaluate_many on the GPU machine in one call of about 6-9 minutes (less on a warm machine):
# builds the Python package and the kscope program in place (build-debt/, as gpu_quick.sh), checks that
# the CMake build's `kscope evaluate` reaches Python, checks in this process that short work on a side
# stream nobody joins is found (and joined or synchronized side streams are not), runs evaluate_many's
# GPU tests (tests/python/test_evaluate_many_gpu.py: a fault, hangs, memory exhausted, aborts, unjoined
# and synchronized side streams, a standby worker with no CUDA context until needed...) and the throughput benchmark (bench/evaluate_throughput.py: 100
# candidates, two batches, each batch's breakdown of where its time went), then, if time is
# left, the benchmark again in a fresh directory (step throughput_again), one CUDA build alone and
# ten together (builds_1, builds_10: the first batch's floor) and the CPU tests of
# evaluate_many on this machine's torch and pandas. Logs to $OUT, the step
# table last. Needs .carry/ from scripts/prepare_carry.sh. Never changes clocks, power or modes.
# A step that would not finish inside KSCOPE_GPU_TIME_LIMIT_S is left out (SKIP, saying so): a second
# call on the warm machine finds the build and runs it, the others left out by name:
#   bash scripts/evaluate_many_check.sh
#   KSCOPE_GPU_CHECK_SKIP="pytest_gpu pytest_cpu" bash scripts/evaluate_many_check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export OUT=${OUT:-$ROOT/evaluate-many-out}
export KSCOPE_GPU_TIME_LIMIT_S=${KSCOPE_GPU_TIME_LIMIT_S:-560}
mkdir -p "$OUT"
source "$ROOT/scripts/gpu_steps.sh"
BUILD=$ROOT/build-debt  # gpu_quick.sh's and gpu_debt.sh's folder: a warm machine finds it built
export PYTHONPATH=$BUILD/python KSCOPE_BUILD_DIR=$BUILD

gpu_build "$BUILD" "$OUT/build.log" ON _core kscope_cli
case $? in
  0) record build PASS "$BUILD: _core and the kscope program, Release, sm_90" ;;
  *) record build FAIL "first error: $(grep -m1 -E 'error:|Error ' "$OUT/build.log")"
     print_steps "evaluate_many on the GPU (scripts/evaluate_many_check.sh)"; exit 1 ;;
esac

"$BUILD/kscope" evaluate --help > "$OUT/cli.log" 2>&1
help_rc=$?
"$BUILD/kscope" evaluate "$OUT/no-such-directory" >> "$OUT/cli.log" 2>&1
missing_rc=$?
if [[ $help_rc -eq 0 && $missing_rc -eq 64 ]]; then
  record cli PASS "kscope evaluate --help: 0; a missing directory: 64"
else
  record cli FAIL "--help rc=$help_rc, a missing directory rc=$missing_rc (want 0, 64): $(tail -1 "$OUT/cli.log")"
fi

# Short work on a side stream nobody joins, in this process (the workers' tests below check it there).
skipping unjoined 40 || pytest_step unjoined 90 \
  tests/python/test_evaluate_gpu.py::test_short_work_on_an_unjoined_stream_is_found_and_joined_or_synchronized_side_streams_are_not

skipping pytest_gpu 150 || pytest_step pytest_gpu 300 tests/python/test_evaluate_many_gpu.py

# throughput_step STEP TITLE ROW [NAME=VALUE...]: the benchmark into $OUT/STEP with the environment
# given, its THROUGHPUT lines under TITLE, its tables where the device tool brings them back (not too
# deep), and its row in the step table: the first line matching ROW, or why it failed.
throughput_step() {
  local step=$1 title=$2 row=$3 rc batch
  shift 3
  env "$@" timeout "$(left_s 330)" python3 bench/evaluate_throughput.py --dir "$OUT/$step" > "$OUT/$step.log" 2>&1
  rc=$?
  echo "--- $title ---"
  grep '^THROUGHPUT' "$OUT/$step.log" || tail -20 "$OUT/$step.log"
  for batch in first second; do
    cp "$OUT/$step/$batch/results.csv" "$OUT/${step}_$batch.csv" 2>/dev/null
  done
  [[ $rc -eq 0 ]] && record "$step" PASS "$(grep -m1 "$row" "$OUT/$step.log" | cut -c1-110)" ||
    record "$step" FAIL "rc=$rc: $(grep -E 'FAIL|Error' "$OUT/$step.log" | head -2 | paste -sd';' - | cut -c1-200)"
}

skipping throughput 200 ||
  throughput_step throughput "kscope.evaluate_many's throughput (bench/evaluate_throughput.py)" 'second batch (built)'
# Again, in a fresh directory and with a Triton cache of its own (so its first batch compiles as much
# as the first run's did): how much one machine's first batch varies.
skipping throughput_again 200 ||
  throughput_step throughput_again "the throughput benchmark again (fresh directory and Triton cache)" \
    'first batch (compiling)' TRITON_CACHE_DIR="$OUT/throughput_again/triton-cache"

# The first batch's floor whatever the order: one CUDA build alone, then the mix's ten together.
for builds in 1 10; do
  step=builds_$builds
  skipping "$step" 100 && continue
  timeout "$(left_s 150)" python3 bench/evaluate_throughput.py --builds "$builds" --dir "$OUT/$step" > "$OUT/$step.log" 2>&1
  rc=$?
  grep '^THROUGHPUT' "$OUT/$step.log" || tail -5 "$OUT/$step.log"
  [[ $rc -eq 0 ]] && record "$step" INFO "$(grep -m1 '^THROUGHPUT builds' "$OUT/$step.log" | cut -c20-150)" ||
    record "$step" FAIL "rc=$rc: $(tail -1 "$OUT/$step.log" | cut -c1-200)"
done

skipping pytest_cpu 90 || pytest_step pytest_cpu 150 tests/python/test_evaluate_many.py

grep -E '^(FAILED|E  )' "$OUT/pytest_gpu.log" 2>/dev/null | head -20
print_steps "evaluate_many on the GPU (scripts/evaluate_many_check.sh)"
printf '%s\n' "${SUMMARY[@]}" | grep -q ' FAIL ' && exit 1
exit 0
