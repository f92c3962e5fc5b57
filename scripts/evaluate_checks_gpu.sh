#!/usr/bin/env bash
# evaluate()'s device checks on the GPU machine in the least device time (about 3 minutes on a fresh
# machine): builds evaluate's C++ GPU tests and bench/evaluate_device_cost.cu (no Python), runs the
# tests (the device's checks against the host's bit for bit, every attack, the honest cases), then the
# checks' GPU time against a copy of the same bytes. With a baseline prepared (.carry/checks-baseline,
# another commit's sources), its checks' GPU time too, on the same GPU, between two runs of this tree's:
# how a change to the device checks moved their cost, whatever card the machine has. For a session short
# of device time; the whole evaluate check is scripts/evaluate_cost_check.sh. Never changes clocks,
# power or modes.
#   BASELINE=main bash scripts/evaluate_checks_gpu.sh prepare   before copying the checkout (needs git)
#   bash scripts/evaluate_checks_gpu.sh                         on the GPU machine
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BASE_SRC=$ROOT/.carry/checks-baseline
if [[ ${1:-} == prepare ]]; then
  source "$ROOT/scripts/gpu_steps.sh"
  baseline_prepare "${BASELINE:-main}" "$BASE_SRC"
  exit
fi
export OUT=${OUT:-$ROOT/evaluate-checks-out}
export KSCOPE_GPU_TIME_LIMIT_S=${KSCOPE_GPU_TIME_LIMIT_S:-300}
mkdir -p "$OUT"
source "$ROOT/scripts/gpu_steps.sh"
BUILD=$ROOT/build-debt
TITLE="evaluate's device checks on the GPU (scripts/evaluate_checks_gpu.sh)"

# Configured as the other evaluate scripts configure build-debt (Python on), so that one machine runs
# them one after the other without building anything twice.
gpu_build "$BUILD" "$OUT/build.log" ON kscope_evaluate_gpu_tests evaluate_device_cost
case $? in
  0) record build PASS "$BUILD: kscope_evaluate_gpu_tests and evaluate_device_cost, Release, sm_90" ;;
  *) record build FAIL "first error: $(grep -m1 -E 'error:|Error ' "$OUT/build.log")"
     print_steps "$TITLE"; exit 1 ;;
esac
gtest_step gpu_tests kscope_evaluate_gpu_tests '*' 150
if ! skipping checks_cost 20; then
  timeout "$(left_s 40)" "$BUILD/bench/evaluate_device_cost" > "$OUT/checks_cost.log" 2>&1
  cat "$OUT/checks_cost.log"
  record checks_cost INFO "see checks_cost.log"
fi
if [[ ! -f $BASE_SRC/COMMIT ]]; then
  record checks_baseline SKIP "no baseline: 'bash scripts/evaluate_checks_gpu.sh prepare' before copying"
elif ! skipping checks_baseline 150; then
  if baseline_build "$BASE_SRC" "$ROOT/build-checks-baseline" "$OUT/build_checks_baseline.log" OFF evaluate_device_cost; then
    for run in baseline again; do
      program=$BUILD/bench/evaluate_device_cost
      [[ $run == baseline ]] && program=$ROOT/build-checks-baseline/bench/evaluate_device_cost
      echo "--- checks' cost, $run ($([[ $run == baseline ]] && cut -c1-60 "$BASE_SRC/COMMIT" || echo this tree)) ---"
      timeout "$(left_s 40)" "$program" > "$OUT/checks_cost_$run.log" 2>&1
      cat "$OUT/checks_cost_$run.log"
    done
    record checks_baseline INFO "$(cut -c1-60 "$BASE_SRC/COMMIT"), then this tree again: checks_cost_{baseline,again}.log"
  else
    record checks_baseline FAIL "first error: $(grep -m1 -E 'error:|Error ' "$OUT/build_checks_baseline.log")"
  fi
fi
print_steps "$TITLE"
printf '%s\n' "${SUMMARY[@]}" | grep -q ' FAIL ' && exit 1
exit 0
