#!/usr/bin/env bash
# The tuners on the GPU machine (Triton 3.6, torch 2.11): kscope.triton.autotune, kscope.triton.do_bench
# under triton.autotune, kscope.torch.install() with torch.compile's max-autotune. Two device calls:
#   bash scripts/tuners_gpu.sh tests        # builds the Python package (Release, sm_90, in place: no pip) and
#                                           # runs tests/python/test_triton_gpu.py and test_torch_gpu.py;
#                                           # about 4-6 min on a fresh machine, 2-3 on a warm one
#   bash scripts/tuners_gpu.sh experiment   # scripts/tuner_choice_experiment.py on that build, within
#                                           # KSCOPE_TUNERS_DEADLINE_S (540 s) of its start
# Logs and tuners.json go to $OUT; the step table comes last. Needs .carry/ from scripts/prepare_carry.sh.
# Extra arguments after "experiment" go to the experiment (--parts triton, --processes 10, ...).
# Never changes clocks, power or modes.
set -uo pipefail
source "$(dirname "$0")/gpu_steps.sh"  # its ROOT: this checkout
cd "$ROOT"
export OUT=${OUT:-$ROOT/tuners-gpu-out} KSCOPE_GPU_TIME_LIMIT_S=${KSCOPE_GPU_TIME_LIMIT_S:-570}
mkdir -p "$OUT"
BUILD=$ROOT/build-debt  # gpu_quick.sh's folder: a warm machine finds it built
step=${1:-tests}
shift || true

case $step in
  tests)
    gpu_build "$BUILD" "$OUT/build.log" ON _core
    case $? in
      0) record build PASS "$BUILD, Release, sm_90, the Python package in place" ;;
      *) record build FAIL "first error: $(grep -m1 -E 'error:|Error ' "$OUT/build.log")"
         print_steps "Tuners on the GPU (scripts/tuners_gpu.sh tests)"; exit 1 ;;
    esac
    if ! skipping pytest_tuners 240; then
      PYTHONPATH=$BUILD/python timeout 420 python3 -m pytest tests/python/test_triton_gpu.py \
        tests/python/test_torch_gpu.py -m gpu -q -rs -p no:cacheprovider > "$OUT/pytest_tuners.log" 2>&1
      rc=$?
      line=$(grep -E '[0-9]+ (passed|failed)' "$OUT/pytest_tuners.log" | tail -1)
      [[ $rc -eq 0 ]] && record pytest_tuners PASS "$line" ||
        record pytest_tuners FAIL "rc=$rc: $line; $(grep -m3 '^FAILED' "$OUT/pytest_tuners.log" | paste -sd';' -)"
      tail -25 "$OUT/pytest_tuners.log"
    fi
    print_steps "Tuners on the GPU (scripts/tuners_gpu.sh tests)"
    ;;
  experiment)
    PYTHONPATH=$BUILD/python python3 scripts/tuner_choice_experiment.py \
      --deadline-s "${KSCOPE_TUNERS_DEADLINE_S:-540}" --json "$OUT/tuners.json" "$@" 2>"$OUT/experiment.err"
    rc=$?
    [[ $rc -eq 0 ]] && record experiment PASS "$OUT/tuners.json" ||
      record experiment FAIL "rc=$rc; $(tail -3 "$OUT/experiment.err" | paste -sd';' -)"
    print_steps "Tuners on the GPU (scripts/tuners_gpu.sh experiment)"
    ;;
  *) echo "usage: bash scripts/tuners_gpu.sh tests|experiment [experiment arguments]" >&2; exit 2 ;;
esac
