#!/usr/bin/env bash
# The GPU plan (docs/gpu-checks.md) stays true where that can be checked without a GPU or a build:
#   - the GPU scripts parse (bash -n), and every script, program and build target they name exists;
#   - the calls `scripts/gpu_debt.sh list` prints are the page's, each step is in the page's tables
#     and has its code (a step_ function, or a step of scripts/gpu_check.sh), and each step row of
#     those tables is a step its call runs;
#   - calls 3-6 run every step scripts/gpu_check.sh can leave out, each once, and gpu_debt.sh's list
#     of those steps is gpu_check.sh's;
#   - bench/counters_floor knows every flush variant call 1 runs (the page names them), and calls the
#     older Profiler API's Enable/DisableProfiling only inside that API's own session (elsewhere
#     CUPTI refuses them);
#   - bench/cost_table.py reads the programs' lines: the cold-run ratio and a variant's verdict.
# Usage: check_gpu_plan.sh <source root>. Prints each discrepancy; fails if there is one.
set -u
root=${1:?usage: check_gpu_plan.sh <source root>}
cd "$root" || exit 2
status=0
problem() {
  echo "gpu plan: $*"
  status=1
}
debt=scripts/gpu_debt.sh
check=scripts/gpu_check.sh
page=docs/gpu-checks.md

for script in "$debt" "$check" scripts/gpu_steps.sh scripts/nsight_compat_check.sh scripts/nsight_examples.sh \
              scripts/compare_check.sh scripts/shard_check.sh scripts/prepare_carry.sh bench/cost_check.sh \
              tools/counters_gpu_check.sh; do
  [[ -f $script ]] || { problem "$script is missing"; continue; }
  bash -n "$script" || problem "$script does not parse (bash -n)"
done

# Sources the scripts run ($ROOT/...) and programs they run from the build ($BUILD/...), which
# must be CMake targets.
for path in $(grep -ohE '\$ROOT/(scripts|bench|tools|examples|tests)/[A-Za-z0-9_./-]+' "$debt" "$check" |
              sed 's|^\$ROOT/||' | sort -u); do
  [[ -e $path ]] || problem "$path, named in $debt or $check, does not exist"
done
targets=$( (grep -ohE '\$BUILD/(bench|tests/gpu|examples)/[A-Za-z0-9_]+' "$debt" "$check" | sed 's|.*/||'
            sed -nE 's/^COLD_TARGETS="(.*)"/\1/p' "$debt" | tr ' ' '\n') | sort -u)
for target in $targets; do
  grep -rqE --include=CMakeLists.txt "(add_executable|kscope_gpu_test|pybind11_add_module)\(${target}[ )]" . ||
    problem "$target, which $debt or $check runs or builds, is no CMake target"
done

# The calls: the script's list is the page's block, and each step is documented and has its code.
listed=$(bash "$debt" list) || problem "bash $debt list failed"
documented=$(sed -n '/^## The calls/,/^### /p' "$page" | sed -n '/^```$/,/^```$/p' | grep -v '^```$')
[[ $listed == "$documented" ]] ||
  problem "$page's block of calls differs from \`bash $debt list\`:"$'\n'"$(diff <(echo "$documented") <(echo "$listed"))"
skippable=$(grep -oE '^ *(if ! )?skipping [a-z_]+' "$check" | awk '{print $NF}' | sort)
[[ -n $skippable ]] || problem "no step of $check goes through \`skipping\`"
from_calls=""
while read -r call steps; do
  call=${call%:}
  for step in $steps; do
    [[ $step == gpu_check ]] && continue
    grep -qE "^\| ($call \| )?\`$step\` \|" "$page" || problem "$call's step $step has no row in $page's tables"
    if [[ $steps == gpu_check\ * ]]; then
      from_calls+="$step"$'\n'
    else
      grep -qE "^step_$step\(\)" "$debt" || problem "$call's step $step has no function step_$step in $debt"
    fi
  done
done <<< "$listed"
# ...and each step row of the page's call tables is a step its call runs (no row outlives its step).
while read -r call step; do
  [[ " $(sed -n "s/^$call: //p" <<< "$listed") " == *" $step "* ]] ||
    problem "$page has a row for $call's step $step, which \`bash $debt $call\` does not run"
done < <(awk '/^### call[0-9]:/ {call = substr($2, 1, 5); next} /^#/ {call = ""}
              call && /^\| `[a-z0-9_]+` \|/ {gsub(/`/, "", $2); print call, $2}
              /^\| call[0-9] \| `[a-z0-9_]+` \|/ {gsub(/`/, "", $4); print $2, $4}' "$page")
[[ $(sort <<< "${from_calls%$'\n'}") == "$skippable" ]] ||
  problem "calls 3-6 do not run each of $check's steps once:"$'\n'"$(diff <(echo "$skippable") <(sort <<< "${from_calls%$'\n'}"))"
all_steps=$(sed -n '/^GPU_CHECK_STEPS="/,/"$/p' "$debt" | tr -d '"' | sed 's/GPU_CHECK_STEPS=//' | tr -s ' \n' '\n' |
            grep -v '^$' | sort)
[[ $all_steps == "$skippable" ]] ||
  problem "GPU_CHECK_STEPS in $debt is not the list of $check's steps:"$'\n'"$(diff <(echo "$skippable") <(echo "$all_steps"))"

# Call 1's flush variants, known to bench/counters_floor and named in the page's row.
known=$(sed -n '/const std::vector<std::string> known{/,/};/p' bench/counters_floor.cu)
variants=$(sed -nE 's/^VARIANTS="(.*)"/\1/p' "$debt")
for variant in $variants; do
  grep -q "\"$variant\"" <<< "$known" || problem "call1's variant $variant is not one of bench/counters_floor's"
done
grep -qF "for V in \`$variants\`" "$page" || problem "$page's variants row does not name call1's variants: $variants"
# cuptiProfilerEnable/DisableProfiling (the bench's set_profiling) gate kernels only between that API's
# cuptiProfilerBeginSession and EndSession; on a range profiler's context CUPTI answers
# CUPTI_ERROR_INVALID_OPERATION.
outside=$(awk '/cuptiProfilerBeginSession\(/ {open = 1} /cuptiProfilerEndSession\(/ {open = 0}
               /(^|[^A-Za-z_])set_profiling\(/ && !/^void / && !open {print FILENAME ":" FNR ": " $0}' \
          bench/counters_floor.cu)
[[ -z $outside ]] ||
  problem "bench/counters_floor.cu gates profiling outside the older Profiler API's session:"$'\n'"$outside"

# bench/cost_table.py on lines as the programs print them.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
values="gpu__time_duration.sum=9376.000 dram__bytes_read.sum=16777984.000"
cat > "$work/durations.txt" <<'EOF'
PY bare_events_loop_us 37.36
PY kernel_ns 4100.0
PY cupti all per_run_us 42.070 fixed_ms 0.609
EOF
echo "HOST flush enqueue: one by one 11.02 us, graph 7.27 us; GPU: one by one 23.550 us, graph 26.930 us" \
  > "$work/durations_gpu.txt"
echo "VARIANT bench5  inside     passes=8 ranges_per_run=2.00 dropped=0 ms_per_run=19.6000 | $values" \
  > "$work/variants_inside.txt"
echo "VARIANT bench5  read_2x    passes=8 ranges_per_run=2.00 dropped=0 ms_per_run=11.5000 | ${values/9376/9400}" \
  > "$work/variants_read_2x.txt"
echo "VARIANT bench5  kernel     passes=8 ranges_per_run=1.00 dropped=0 ms_per_run=9.5000 | ${values/9376/9600}" \
  > "$work/variants_kernel.txt"
: > "$work/variants_legacy.txt"
echo "counters_floor: cuptiProfilerBeginSession failed" > "$work/variants_legacy.err"
table=$(python3 bench/cost_table.py "$work" 2>&1) || problem "bench/cost_table.py failed: $table"
grep -q '^cold run ratio 1.36x: 42.07 us a run against 31.03 us' <<< "$table" ||
  problem "bench/cost_table.py gave no cold run ratio of 42.07 / (4.10 + 26.93) us:"$'\n'"$table"
grep -qE '^  read_2x .* meets the target' <<< "$table" ||
  problem "bench/cost_table.py: read_2x (11.5 ms, 0.26% off) should meet the target:"$'\n'"$table"
grep -qE '^  kernel .* does not meet the target.*MORE THAN 1% apart' <<< "$table" ||
  problem "bench/cost_table.py: kernel (2.4% off) should not meet the target:"$'\n'"$table"
grep -qE '^  legacy +printed no VARIANT line: counters_floor: cuptiProfilerBeginSession failed' <<< "$table" ||
  problem "bench/cost_table.py: legacy's error should be in the table:"$'\n'"$table"
exit $status
