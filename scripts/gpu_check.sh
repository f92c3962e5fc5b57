#!/usr/bin/env bash
# The whole GPU check, on the GPU machine: configure and build (Release, sm_90), CPU tests, GPU
# tests, the saxpy example, the Python package and its tests, the benchmarks, and kscope against
# ncu. Logs go to $OUT (8 files at most); a summary table is printed last.
#
# Needs .carry/ from scripts/prepare_carry.sh (GoogleTest sources, nlohmann and CLI11 headers).
# Locally (no GPU) it still builds and runs; GPU tests then skip and the GPU steps fail.
# Never changes clocks, power or modes: ncu always runs with --clock-control none.
#
# Every step after the build can be left out, to split the check across calls of the device's
# 10 minutes (scripts/gpu_debt.sh calls 3 to 6 do; docs/gpu-checks.md): KSCOPE_GPU_CHECK_SKIP="cpu
# gpu example pytest overhead compare shard adaptive evaluate energy ncu counters cost stages
# checkpoint matmul roofline doctor nsight" names the steps to leave out. The package is
# pip-installed only when a step that needs it is left in. KSCOPE_GPU_TIME_LIMIT_S=N leaves out a
# step that could end after N seconds from the start (each step's bound is its second argument to
# `skipping`, above what it took on an H200 where that was timed), so the table still comes back.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu-check-out}
BUILD=$ROOT/build-gpu
WORK=$(mktemp -d)
NCU_REPS=5
# kscope cupti against ncu's gpu__time_duration.sum, per kernel: 5% of the kernel, for the run-to-run
# variation of a DRAM-bound kernel with a cold L2, plus 5 us: the two timers differ by a fixed part
# per kernel (ncu's <= 3 us, CUPTI's less), and a spin measured in two runs by up to one
# %globaltimer update (<= 2 us): tests/gpu/spin_bounds.hpp. On a 20 us spin 5% alone is 1 us, while
# ncu's fixed part is ~0.9 us more than CUPTI's: spin20 measured -4.19% against a 5% limit.
NCU_TOLERANCE_PCT=5
NCU_FIXED_NS=5000
mkdir -p "$OUT"
rm -f "$OUT"/{build,cpu_tests,gpu_tests,example,bench,ncu}.log  # an earlier run's: the steps append to them
source "$ROOT/scripts/gpu_steps.sh"
PYTHON_STEPS="pytest shard adaptive evaluate energy cost matmul roofline doctor nsight"

print_summary() {  # the result sections, then the step table last (a reply's tail holds the end)
  print_sections "$WORK" "results.txt:measured" "overhead.txt:overhead per region" \
    "compare.txt:kscope compare: spin kernel again, and 10% slower" \
    "shard.txt:sharded sweep: one process vs a two-process torchrun on the one GPU" \
    "adaptive.txt:adaptive sampling" \
    "evaluate.txt:kscope.evaluate against the two functions measured alone" \
    "energy.txt:energy per run from NVML's counter (scripts/energy_check.py)" \
    "ncu_table.txt:kscope cupti vs ncu" "counters_table.txt:kscope counters vs ncu" \
    "cost_table.txt:kscope's own cost against CUPTI's floor, ncu and a bare events loop" \
    "counter_stages.txt:counter backend run, call by call" \
    "checkpoint.txt:CUPTI checkpoint save/restore against a replay pass" \
    "torch_matmul.txt:kscope counters vs ncu, torch matmul" \
    "roofline.txt:kscope roofline without counters (cupti + declared work) vs the counters" \
    "torch_vs_triton.txt:python example torch vs Triton" \
    "ncu_backend.txt:backend ncu vs counters, kscope doctor" \
    "nsight_compat.txt:Nsight Python compatibility (issue 30)"
  print_steps "kscope GPU check summary"
}

# --- build --------------------------------------------------------------------------------
gpu_build "$BUILD" "$OUT/build.log" OFF
case $? in
  0) record build PASS "Release, sm_90" ;;
  1) record configure FAIL "see build.log: $(grep -m1 -E 'Error' "$OUT/build.log")"
     print_summary
     exit 1 ;;
  *) record build FAIL "first error: $(grep -m1 -E 'error:|Error ' "$OUT/build.log")" ;;
esac

# --- tests --------------------------------------------------------------------------------
skipping cpu 120 || ctest_step "cpu tests" "-LE gpu" cpu_tests.log
if ! skipping gpu 150; then  # 38 s for 28 tests on an H200; more tests since
  ctest_step "gpu tests" "-L gpu" gpu_tests.log
  grep -h '\[result\]' "$OUT/gpu_tests.log" | sed 's/^.*\[result\] //' | sort -u > "$WORK/results.txt"
fi

# --- example ------------------------------------------------------------------------------
if ! skipping example 30; then
  (cd "$WORK" && "$BUILD/examples/saxpy") > "$OUT/example.log" 2>&1
  example_rc=$?
  cp "$WORK"/saxpy.csv "$OUT"/ 2>/dev/null  # with example.log, torch_vs_triton.png and 5 logs: 8 files
  if [[ $example_rc -eq 0 && -s $WORK/saxpy.csv && -s $WORK/saxpy.json ]]; then
    record example PASS "saxpy: $(($(wc -l < "$WORK/saxpy.csv") - 1)) summary rows in saxpy.csv"
  else
    record example FAIL "saxpy rc=$example_rc (see example.log)"
  fi
fi

# --- Python package: pip install, then its GPU tests (examples included) -------------------
# Its log joins example.log: $OUT returns 8 files at most.
PY_SITE=$WORK/site
needs_package() {  # true when a step left in uses the pip-installed package
  local step
  for step in $PYTHON_STEPS; do [[ " ${KSCOPE_GPU_CHECK_SKIP:-} " == *" $step "* ]] || return 0; done
  return 1
}
if ! needs_package; then
  record python SKIP "no step left in needs the pip-installed package"
else
  {  # 68 s on an H200
    echo "## python: pip install --no-build-isolation --target $PY_SITE ."
    KSCOPE_CMAKE_ARGS="-DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_POLICY_VERSION_MINIMUM=3.5" \
      python3 -m pip install -q --no-build-isolation --no-deps --no-index --target "$PY_SITE" "$ROOT"
    echo "pip_rc=$?"
  } >> "$OUT/example.log" 2>&1
  if ! skipping pytest 240; then  # the Python suite: 82 s on an H200, then the example
    {
      echo "## python: pytest tests/python (the CPU tests too: they check the installed extension)"
      (cd "$ROOT" && PYTHONPATH=$PY_SITE python3 -m pytest tests/python -q -rs -p no:cacheprovider)
      echo "pytest_rc=$?"
    } >> "$OUT/example.log" 2>&1
    # Issue #3's acceptance run: torch vs Triton, TFLOP/s, normalize, plot, profiled twice; the PNG comes back.
    {
      echo "## python: examples/python/torch_vs_triton.py"
      PYTHONPATH=$PY_SITE timeout 300 python3 "$ROOT/examples/python/torch_vs_triton.py" "$WORK/py_example"
      echo "torch_vs_triton_rc=$?"
    } > "$WORK/torch_vs_triton.txt" 2>&1
    cat "$WORK/torch_vs_triton.txt" >> "$OUT/example.log"
    cp "$WORK/py_example/torch_vs_triton.png" "$OUT/" 2>/dev/null
    py_line=$(grep -E '^[0-9]+ (passed|failed)|^=+ .*(passed|failed)' "$OUT/example.log" | tail -1)
    if grep -q '^pip_rc=0' "$OUT/example.log" && grep -q '^pytest_rc=0' "$OUT/example.log" &&
       grep -q '^torch_vs_triton_rc=0' "$OUT/example.log"; then
      record python PASS "pip install; pytest: $py_line"
    else
      record python FAIL "pip/pytest failed: ${py_line:-see example.log}"
    fi
  elif grep -q '^pip_rc=0' "$OUT/example.log"; then
    record python PASS "pip install"
  else
    record python FAIL "pip install failed (see example.log)"
  fi
fi

# --- overhead benchmark (its output opens bench.log) ---------------------------------------
if ! skipping overhead 90; then
  "$BUILD/bench/kscope_overhead" >> "$OUT/bench.log" 2>&1
  bench_rc=$?
  sed -n '/^kernel /,$p' "$OUT/bench.log" > "$WORK/overhead.txt"
  [[ $bench_rc -eq 0 ]] && record overhead PASS "2000 regions per case" ||
    record overhead FAIL "rc=$bench_rc (see bench.log)"
fi

# --- kscope compare on real measurements (scripts/compare_check.sh; its log joins bench.log) ---
if ! skipping compare 90; then
  bash "$ROOT/scripts/compare_check.sh" "$BUILD" > "$WORK/compare.txt" 2>&1
  compare_rc=$?
  { echo "## scripts/compare_check.sh (rc=$compare_rc)"; cat "$WORK/compare.txt"; } >> "$OUT/bench.log"
  [[ $compare_rc -eq 0 ]] && record "kscope compare" PASS "$(tail -1 "$WORK/compare.txt")" ||
    record "kscope compare" FAIL "rc=$compare_rc: $(tail -1 "$WORK/compare.txt")"
fi

# --- a sharded sweep: one process vs a two-process torchrun (scripts/shard_check.sh) ----------
if ! skipping shard 90; then  # 18 s on an H200
  if [[ -x $PY_SITE/bin/kscope ]]; then
    PYTHONPATH=$PY_SITE timeout 400 bash "$ROOT/scripts/shard_check.sh" "$PY_SITE/bin/kscope" > "$WORK/shard.txt" 2>&1
    shard_rc=$?
    { echo "## scripts/shard_check.sh (rc=$shard_rc)"; cat "$WORK/shard.txt"; } >> "$OUT/bench.log"
    [[ $shard_rc -eq 0 ]] && record shard PASS "$(grep -m1 '^rows ' "$WORK/shard.txt")" ||
      record shard FAIL "rc=$shard_rc: $(tail -1 "$WORK/shard.txt")"
  else
    record shard FAIL "no pip-installed kscope (the python step failed)"
  fi
fi

# --- adaptive sampling vs fixed runs, do_bench and adaptive_autorange (its log joins bench.log)
if ! skipping adaptive 180; then
  PYTHONPATH=$PY_SITE timeout 300 python3 "$ROOT/bench/adaptive_vs_peers.py" > "$WORK/adaptive.txt" 2>&1
  adaptive_rc=$?
  { echo "## bench/adaptive_vs_peers.py (rc=$adaptive_rc)"; cat "$WORK/adaptive.txt"; } >> "$OUT/bench.log"
  [[ $adaptive_rc -eq 0 ]] && record adaptive PASS "see the adaptive table" ||
    record adaptive FAIL "rc=$adaptive_rc: $(tail -1 "$WORK/adaptive.txt")"
fi

# --- kscope.evaluate's cost against the two functions measured alone (target <= 1.3x) ---------
if ! skipping evaluate 180; then
  PYTHONPATH=$PY_SITE timeout 300 python3 "$ROOT/bench/evaluate_cost.py" > "$WORK/evaluate.txt" 2>&1
  evaluate_rc=$?
  { echo "## bench/evaluate_cost.py (rc=$evaluate_rc)"; cat "$WORK/evaluate.txt"; } >> "$OUT/bench.log"
  [[ $evaluate_rc -eq 0 ]] && record evaluate PASS "$(tail -1 "$WORK/evaluate.txt")" ||
    record evaluate FAIL "rc=$evaluate_rc: $(tail -1 "$WORK/evaluate.txt")"
fi

# --- the energy metrics: linearity, twice as long, a GEMM's power vs NVML, two sessions ------
# scripts/energy_check.py (~70 s; its log and kscope's stderr join bench.log). Reads NVML only.
if ! skipping energy 120; then  # 52 s on an H200
  if [[ -d $PY_SITE/kscope ]]; then
    PYTHONPATH=$PY_SITE timeout 240 python3 "$ROOT/scripts/energy_check.py" > "$WORK/energy.txt" 2> "$WORK/energy.err"
    energy_rc=$?
    { echo "## scripts/energy_check.py (rc=$energy_rc)"; cat "$WORK/energy.txt" "$WORK/energy.err"; } >> "$OUT/bench.log"
    case $energy_rc in
      0) record energy PASS "$(tail -1 "$WORK/energy.txt")" ;;
      77) record energy SKIP "$(grep -m1 '^SKIP:' "$WORK/energy.txt")" ;;
      *) record energy FAIL "rc=$energy_rc: $(tail -1 "$WORK/energy.txt") $(tail -1 "$WORK/energy.err")" ;;
    esac
  else
    record energy FAIL "no pip-installed kscope (the python step failed)"
  fi
fi

# --- kscope cupti against ncu -------------------------------------------------------------
if ! skipping ncu 120; then
  NCU_CMD=(ncu --clock-control none --cache-control all --metrics gpu__time_duration.sum --csv
           --print-units base "$BUILD/tests/gpu/ncu_compare" --plain "$NCU_REPS")
  {
    echo "## kscope: ncu_compare --measure"
    "$BUILD/tests/gpu/ncu_compare" --measure > "$WORK/kscope.txt" 2> "$WORK/kscope.err"
    echo "rc=$?"
    cat "$WORK/kscope.txt" "$WORK/kscope.err"
    echo "## ${NCU_CMD[*]}"
    "${NCU_CMD[@]}" > "$WORK/ncu.csv" 2> "$WORK/ncu.err"
    echo "rc=$?"
    cat "$WORK/ncu.csv" "$WORK/ncu.err"
    echo "## comparison"
    python3 - "$WORK/kscope.txt" "$WORK/ncu.csv" "$NCU_REPS" "$NCU_TOLERANCE_PCT" "$NCU_FIXED_NS" <<'EOF' | tee "$WORK/ncu_table.txt"
import csv, statistics, sys
kscope_path, ncu_path, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
tolerance, fixed_ns = float(sys.argv[4]), float(sys.argv[5])
kscope = [line.split(maxsplit=3) for line in open(kscope_path) if line.startswith("KSCOPE ")]
rows = list(csv.DictReader(line for line in open(ncu_path) if line.startswith('"')))
# The buffers' fill kernels run before the measured ones; only spin and copy are compared.
values = [(int(r["ID"]), r["Metric Unit"], float(r["Metric Value"].replace(",", "")))
          for r in rows if r.get("Metric Name") == "gpu__time_duration.sum"
          and "fill_kernel" not in r.get("Kernel Name", "")]
values.sort()
if not kscope or len(values) != reps * len(kscope):
    print(f"FAIL: {len(kscope)} kscope kernels, {len(values)} ncu values (expected {reps} each)")
    sys.exit(1)
scale = {"ns": 1.0, "nsecond": 1.0, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6}
print(f"{'kernel':<12} {'kscope cupti us':>16} {'ncu us':>10} {'diff %':>8} {'limit %':>8}")
worst = 0.0  # the largest |diff| as a fraction of its kernel's limit
for i, (_, label, median_ns, *_) in enumerate(kscope):
    mine = values[i * reps:(i + 1) * reps]
    ncu_ns = statistics.median(v * scale[u] for _, u, v in mine)
    diff = 100.0 * (float(median_ns) - ncu_ns) / ncu_ns
    limit = tolerance + 100.0 * fixed_ns / ncu_ns
    worst = max(worst, abs(diff) / limit)
    print(f"{label:<12} {float(median_ns) / 1e3:16.3f} {ncu_ns / 1e3:10.3f} {diff:+8.2f} {limit:8.2f}")
verdict = "PASS" if worst <= 1 else "FAIL"
print(f"max |diff| {100 * worst:.0f}% of its limit ({tolerance:g}% + {fixed_ns / 1e3:g} us per kernel): {verdict}")
sys.exit(0 if worst <= 1 else 1)
EOF
    echo "compare_rc=${PIPESTATUS[0]}"
  } > "$OUT/ncu.log" 2>&1
  if grep -q '^compare_rc=0' "$OUT/ncu.log"; then
    record "ncu compare" PASS "$(grep -m1 'max |diff|' "$WORK/ncu_table.txt")"
  else
    record "ncu compare" FAIL "$(grep -m1 -E 'max \|diff\||FAIL' "$WORK/ncu_table.txt" 2>/dev/null || echo 'see ncu.log')"
  fi
fi

# --- kscope counters against ncu (tools/counters_gpu_check.sh; its log joins ncu.log) -----
if ! skipping counters 180; then
  bash "$ROOT/tools/counters_gpu_check.sh" "$BUILD" > "$WORK/counters.log" 2>&1
  counters_rc=$?
  { echo "## tools/counters_gpu_check.sh (rc=$counters_rc)"; cat "$WORK/counters.log"; } >> "$OUT/ncu.log"
  sed -n '/^kernel /,$p' "$WORK/counters.log" > "$WORK/counters_table.txt"
  [[ $counters_rc -eq 0 ]] && record "counters/ncu" PASS "$(tail -1 "$WORK/counters.log")" ||
    record "counters/ncu" FAIL "rc=$counters_rc: $(tail -1 "$WORK/counters.log")"
fi

# --- kscope's own cost: CUPTI's floor, ncu and a bare events loop beside it (issue 29's targets;
# bench/cost_check.sh, about two minutes; its log joins bench.log) ---------------------------
if ! skipping cost 240; then
  PYTHONPATH=$PY_SITE timeout 600 bash "$ROOT/bench/cost_check.sh" "$BUILD" > "$WORK/cost.txt" 2>&1
  cost_rc=$?
  { echo "## bench/cost_check.sh (rc=$cost_rc)"; cat "$WORK/cost.txt"; } >> "$OUT/bench.log"
  sed -n "/^kscope's own cost/,\$p" "$WORK/cost.txt" > "$WORK/cost_table.txt"
  if [[ $cost_rc -eq 0 ]]; then
    record cost PASS "targets: $(grep -c ': met$' "$WORK/cost_table.txt") met, $(grep -c ': MISSED$' "$WORK/cost_table.txt") missed (see the cost table)"
  else
    record cost FAIL "rc=$cost_rc: $(tail -1 "$WORK/cost.txt")"
  fi
fi

# --- the counter backend's run, call by call (its log joins bench.log) ----------------------
if ! skipping stages 90; then
  "$BUILD/bench/counters_stages" > "$WORK/counter_stages.txt" 2>&1
  stages_rc=$?
  { echo "## bench/counters_stages (rc=$stages_rc)"; cat "$WORK/counter_stages.txt"; } >> "$OUT/bench.log"
  [[ $stages_rc -eq 0 ]] && record "counter stages" PASS "see the stage table" ||
    record "counter stages" FAIL "rc=$stages_rc: $(tail -1 "$WORK/counter_stages.txt")"
fi

# --- CUPTI's checkpoint API against a replay pass (issue 14; its log joins bench.log) ----------
if ! skipping checkpoint 60; then
  if [[ -x $BUILD/bench/checkpoint_cost ]]; then
    "$BUILD/bench/checkpoint_cost" > "$WORK/checkpoint.txt" 2>&1
    checkpoint_rc=$?
    { echo "## bench/checkpoint_cost (rc=$checkpoint_rc)"; cat "$WORK/checkpoint.txt"; } >> "$OUT/bench.log"
    [[ $checkpoint_rc -eq 0 ]] && record checkpoint PASS "see the checkpoint table" ||
      record checkpoint FAIL "rc=$checkpoint_rc: $(tail -1 "$WORK/checkpoint.txt")"
  else
    record checkpoint SKIP "bench/checkpoint_cost not built (CUPTI's libcheckpoint not found)"
  fi
fi

# --- kscope counters against ncu on a torch matmul (its log joins ncu.log) -------------------
if ! skipping matmul 180; then
  PYTHONPATH=$PY_SITE timeout 300 python3 "$ROOT/bench/torch_matmul_vs_ncu.py" > "$WORK/torch_matmul.txt" 2>&1
  matmul_rc=$?
  { echo "## bench/torch_matmul_vs_ncu.py (rc=$matmul_rc)"; cat "$WORK/torch_matmul.txt"; } >> "$OUT/ncu.log"
  [[ $matmul_rc -eq 0 ]] && record "matmul/ncu" PASS "$(tail -1 "$WORK/torch_matmul.txt")" ||
    record "matmul/ncu" FAIL "rc=$matmul_rc: $(tail -1 "$WORK/torch_matmul.txt")"
fi

# --- kscope's roofline without counters against the counters (issue 27; its log joins ncu.log) ---
# Copy, FMA loop, cuBLAS fp16 GEMM, flash attention: DRAMRoofPct / ComputeRoofPct / Bound from cupti
# durations and declared work against dram__throughput, the FMA or tensor pipe and speed_of_light().
# rc 1 is a measured disagreement (DIFF: the table and docs/roofline.md say why), not a broken check.
if ! skipping roofline 180; then
  PYTHONPATH=$PY_SITE timeout 300 python3 "$ROOT/bench/roofline_vs_counters.py" > "$WORK/roofline.txt" 2>&1
  roofline_rc=$?
  { echo "## bench/roofline_vs_counters.py (rc=$roofline_rc)"; cat "$WORK/roofline.txt"; } >> "$OUT/ncu.log"
  case $roofline_rc in
    0) record roofline PASS "$(tail -1 "$WORK/roofline.txt")" ;;
    1) record roofline DIFF "$(tail -1 "$WORK/roofline.txt")" ;;
    *) record roofline FAIL "rc=$roofline_rc: $(tail -1 "$WORK/roofline.txt")" ;;
  esac
fi

# --- backend ncu and kscope doctor (issue #6) ------------------------------------------------
# (a) kscope doctor, text and JSON; (b) a three-config sweep through Backend::ncu against the
# counter backend (gpu__time_duration.sum within 5% + 3 us, same table shape, the report opens with
# ncu --import): from C++ (tests/gpu/test_ncu_backend.cu, already run by "gpu tests"; its lines
# are taken from gpu_tests.log, or those tests run here alone when that step was left out) and
# from a Python script. Backend::ncu always passes --clock-control none here (ClockControl::none,
# the default). Its log joins ncu.log.
if ! skipping doctor 240; then
  [[ -s $OUT/gpu_tests.log ]] ||
    ctest --test-dir "$BUILD" -R '^NcuBackend\.' --timeout 300 --output-on-failure -V > "$OUT/gpu_tests.log" 2>&1
  {
    echo "## kscope doctor"
    "$BUILD/kscope" doctor
    echo "doctor_rc=$?"
    echo "## kscope doctor --json"
    "$BUILD/kscope" doctor --json > "$WORK/doctor.json"
    echo "doctor_json_rc=$?"
    cat "$WORK/doctor.json"
    echo "## kscope doctor, the console command pip installed ($PY_SITE/bin/kscope)"
    PYTHONPATH=$PY_SITE "$PY_SITE/bin/kscope" doctor
    echo "console_doctor_rc=$?"
    echo "## C++: NcuBackend tests (from gpu_tests.log)"
    grep -E '\[ncu vs counters\]|\[ncu report\]|\[unknown metric message\]|NcuBackend\.[A-Za-z]+ .*(Passed|Failed|Skipped|\*\*\*)' \
      "$OUT/gpu_tests.log"
    echo "## Python: backend='ncu' vs 'counters'"
    cat > "$WORK/ncu_python_check.py" <<'PYEOF'
"""kscope GPU check: backend='ncu' from a Python script (re-run under ncu by kscope) against
backend='counters', gpu__time_duration.sum within 5% + 3 us, same table shape, and the report opens.
Exit 0 pass, 1 fail, 77 skip."""
import glob
import os
import subprocess
import sys

import kscope

try:
    import torch
except ImportError:
    print("SKIP: torch is not installed")
    sys.exit(77)

METRIC = "gpu__time_duration.sum"
# Medians of 5 runs agree within 5% of the kernel (run-to-run variation of a DRAM-bound kernel with
# a cold L2) plus 3 us, the bound on the counter's fixed part per kernel (launch to first instruction,
# exit to completion: 1.2-1.5 us measured; tests/gpu/spin_bounds.hpp), which the two tools' launches
# may move. On the 9 us kernel, 5% alone is 0.45 us: less than ncu's own run-to-run spread on a
# 4 us kernel (4006-4275 ns) plus the tools' usual 0.1-0.2 us offset.
TOLERANCE_PCT, FIXED_NS = 5.0, 3000.0


def sweep(backend, **options):
    # From 9 us up: on a 4 us kernel (1 << 20 floats) ncu's own value moved 4006-4275 ns between
    # runs of this check, more than the 5% compared.
    @kscope.analyze.kernel(configs=[(1 << 22,), (1 << 24,), (1 << 26,)], runs=5, backend=backend,
                           metrics=[METRIC], verbosity=kscope.VerbosityLevel.SILENT, **options)
    def scale(n):
        x = torch.ones(n, device="cuda")
        with kscope.annotate("scale"):
            x.mul_(2.0)
    return scale()


try:
    ncu = sweep("ncu", ncu_sections=["SpeedOfLight"]).to_dataframe()  # first: the re-run child profiles it and exits
except kscope.ConfigError as e:
    if "backend" in str(e):
        print(f"SKIP: the Python package does not offer backend='ncu' yet: {e}")
        sys.exit(77)
    raise
counters = sweep("counters").to_dataframe()
ok = list(ncu.columns) == list(counters.columns) and len(ncu) == len(counters) == 3
print(f"table shape: ncu {ncu.shape}, counters {counters.shape}, same columns: {list(ncu.columns) == list(counters.columns)}")
for (_, a), (_, b) in zip(ncu.iterrows(), counters.iterrows()):
    limit = TOLERANCE_PCT / 100 * b["Median"] + FIXED_NS
    ok = ok and abs(a["Median"] - b["Median"]) <= limit
    print(f"[python ncu vs counters] n={a.get('n')}: ncu {a['Median']:.1f} ns, counters {b['Median']:.1f} ns, "
          f"ratio {a['Median'] / b['Median']:.4f}, |diff| {abs(a['Median'] - b['Median']):.0f} ns (limit {limit:.0f})")
reports = sorted(glob.glob(os.path.join(os.environ["TMPDIR"], "kscope-ncu-*", "ncu_report.ncu-rep")), key=os.path.getmtime)
if not reports:
    print("FAIL: no ncu report under TMPDIR")
    sys.exit(1)
imported = subprocess.run(["ncu", "--import", reports[-1], "--csv", "--page", "raw"], capture_output=True)
details = subprocess.run(["ncu", "--import", reports[-1], "--page", "details", "--section", "SpeedOfLight"],
                         capture_output=True, text=True)
has_section = details.returncode == 0 and "Speed Of Light" in details.stdout
print(f"[python ncu report] {reports[-1]}: ncu --import rc={imported.returncode}, "
      f"section SpeedOfLight in it: {has_section}")
sys.exit(0 if ok and imported.returncode == 0 and has_section else 1)
PYEOF
    mkdir -p "$WORK/py_tmp"
    (cd "$WORK" && TMPDIR=$WORK/py_tmp PYTHONPATH=$PY_SITE timeout 600 python3 "$WORK/ncu_python_check.py")
    echo "python_ncu_rc=$?"
    echo "## Python -c (no script to re-run): expect a clear error pointing to backend='counters'"
    PYTHONPATH=$PY_SITE timeout 120 python3 -c '
import kscope
@kscope.analyze.kernel(configs=[(1,)], backend="ncu")
def f(n):
    pass
try:
    f()
except kscope.ProfilerException as e:
    print("interactive error:", e)
'
    echo "python_c_rc=$?"
  } >> "$OUT/ncu.log" 2>&1
  doctor_rc=$(grep -m1 -oE '^doctor_rc=[0-9]+' "$OUT/ncu.log" | cut -d= -f2)
  grep -E '^Verdict:' "$OUT/ncu.log" | head -1 > "$WORK/ncu_backend.txt"
  grep -hE '\[ncu vs counters\]|\[python ncu vs counters\]|\[python ncu report\]|^SKIP:|interactive error:' \
    "$OUT/ncu.log" | sort -u >> "$WORK/ncu_backend.txt"
  if [[ $doctor_rc == 0 || $doctor_rc == 1 ]] && python3 -m json.tool "$WORK/doctor.json" > /dev/null 2>&1; then
    record doctor PASS "exit code $doctor_rc: $(grep -m1 -E '^Verdict:' "$OUT/ncu.log")"
  else
    record doctor FAIL "exit code ${doctor_rc:-none} (see ncu.log)"
  fi
  console_rc=$(grep -m1 -oE '^console_doctor_rc=[0-9]+' "$OUT/ncu.log" | cut -d= -f2)
  if [[ -n $console_rc && $console_rc == "$doctor_rc" ]]; then
    record "pip kscope" PASS "console command: kscope doctor exit code $console_rc, as build's kscope"
  else
    record "pip kscope" FAIL "console command: kscope doctor exit code ${console_rc:-none}, build's ${doctor_rc:-none}"
  fi
  cpp_ncu=$(grep -E 'NcuBackend\.[A-Za-z]+ ' "$OUT/gpu_tests.log" | grep -cE 'Passed')
  cpp_ncu_bad=$(grep -E 'NcuBackend\.[A-Za-z]+ ' "$OUT/gpu_tests.log" | grep -cE 'Failed|\*\*\*')
  [[ $cpp_ncu -ge 3 && $cpp_ncu_bad -eq 0 ]] && record "ncu backend C++" PASS "$cpp_ncu NcuBackend tests passed" ||
    record "ncu backend C++" FAIL "$cpp_ncu passed, $cpp_ncu_bad failed (see gpu_tests.log)"
  py_ncu_rc=$(grep -m1 -oE '^python_ncu_rc=[0-9]+' "$OUT/ncu.log" | cut -d= -f2)
  case $py_ncu_rc in
    0) record "ncu backend py" PASS "$(grep -c '\[python ncu vs counters\]' "$OUT/ncu.log") configs within 5% + 3 us, report opens" ;;
    77) record "ncu backend py" SKIP "$(grep -m1 '^SKIP:' "$OUT/ncu.log")" ;;
    *) record "ncu backend py" FAIL "rc=${py_ncu_rc:-none} (see ncu.log)" ;;
  esac
fi
# --- end of: backend ncu and kscope doctor ---------------------------------------------------

# --- Nsight Python code on kscope (issue 30): range replay vs ncu, counters units vs ncu's, the
# cupti span, the Nsight-style GPU tests, Nsight's examples with and without KSCOPE_TOOL=ncu
# (scripts/nsight_compat_check.sh, about 4 minutes; its log joins ncu.log) ------------------------
if ! skipping nsight 300; then
  timeout 600 bash "$ROOT/scripts/nsight_compat_check.sh" "$BUILD" "$PY_SITE" "$WORK/nsight_compat.txt" \
    > "$WORK/nsight_compat_full.txt" 2>&1
  nsight_rc=$?
  { echo "## scripts/nsight_compat_check.sh (rc=$nsight_rc)"; cat "$WORK/nsight_compat_full.txt"; } >> "$OUT/ncu.log"
  parts=$(grep -cE '^[a-d]\. .* (PASS|FAIL|SKIP) ' "$WORK/nsight_compat.txt")
  failed_parts=$(grep -E '^[a-d]\. .* FAIL ' "$WORK/nsight_compat.txt" | cut -c1-34 | sed 's/ *$//' | paste -sd, -)
  skipped_parts=$(grep -E '^[a-d]\. .* SKIP ' "$WORK/nsight_compat.txt" | cut -c1-34 | sed 's/ *$//' | paste -sd, -)
  if [[ $nsight_rc -eq 0 ]]; then
    record "nsight compat" PASS "$parts parts: range vs ncu, units, cupti span, pytest, examples 00-11 x2${skipped_parts:+; skipped: $skipped_parts}"
  else
    record "nsight compat" FAIL "rc=$nsight_rc; failed: ${failed_parts:-see ncu.log}"
  fi
fi

print_summary
printf '%s\n' "${SUMMARY[@]}" | grep -q ' FAIL ' && exit 1
exit 0
