#!/usr/bin/env bash
# kscope's own cost on a GPU machine, in one run, as ratios against CUPTI's floor, Nsight Compute and
# a bare CUDA-events loop, each of issue 29's targets met or missed beside it (printed, not failed:
# timings are the machine's, not kscope's correctness).
#   counters, per profiled kernel   kscope: the slope of one profile() call's wall time from 200 to
#                                   400 runs (bench/counters_overhead --overhead); CUPTI's floor: its
#                                   range profiler called directly, 50 to 200 back-to-back launches
#                                   in one start/stop per pass, no flush (bench/counters_floor
#                                   floor); ncu: the slope from 5 to 25 launches in one process
#   counters, first result          kscope: a process's first profile() call, one metric, one run;
#                                   CUPTI's floor: the fewest CUPTI calls for that result, in a fresh
#                                   process of the same run (counters_floor first 1: initialise,
#                                   availability, config image, enable, one pass, decode, evaluate);
#                                   the target is <= 1.1x that floor; ncu: its fixed cost
#   counters, later call            the rest of a later call (the kept range profiler reused)
#   counters, the flush's ranges    counters_floor variant bench5 inside, then kscope: the 5-metric
#                                   set on a 16 MiB copy after the flush, CUPTI called directly with
#                                   the flush's memset and discard kernel launched one by one (inside
#                                   the ranges), and kscope's counters backend on the same runs:
#                                   ranges per run, ms per run, and each metric of the copy side by
#                                   side (the values must agree within 1%; bench/cost_table.py's
#                                   flush-variants table, which also takes counters_floor's other
#                                   variants: scripts/gpu_debt.sh call1)
#   durations (Python, cupti)       bench/durations_cost.py on the add of 2^20 floats: the fixed cost
#                                   of a call, and the wall time per cold run against the GPU's busy
#                                   time per run (the add's duration + kscope's L2 flush back to back,
#                                   bench/kscope_overhead --call-breakdown) and a bare events loop
# The table: bench/cost_table.py, from the outputs collected here.
# Usage: bench/cost_check.sh [BUILD_DIR]   (PYTHONPATH must reach the kscope package and torch for
# the durations rows; without them those rows say so). Never changes clocks: ncu runs with
# --clock-control none. Exit status: 0 measured (targets met or not), 1 a program failed, 2 no GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-${KSCOPE_BUILD_DIR:-build}}
bench="$build/bench"
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for program in counters_overhead counters_floor kscope_overhead; do
  [ -x "$bench/$program" ] || { echo "cost check: $bench/$program is missing: build first"; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HOME="$work"  # ncu's config, and kscope's configuration image cache, start empty
unset XDG_CACHE_HOME
failed=0
step() {  # name, command...: its output to $work/name.txt
  local name=$1
  shift
  "$@" > "$work/$name.txt" 2> "$work/$name.err" || { echo "cost check: $* failed:"; cat "$work/$name.err"; failed=1; }
}
step first_cold "$bench/counters_overhead" --first  # no configuration image on disk yet
step overhead "$bench/counters_overhead" --overhead  # its FIRST: a later process, the image from disk
step floor_first "$bench/counters_floor" first 1
step floor "$bench/counters_floor" floor 1 bench5
step variants "$bench/counters_floor" variant bench5 inside
step variants_kscope "$bench/counters_floor" variant bench5 kscope  # alone in its process
step durations_gpu "$bench/kscope_overhead" --call-breakdown
if python3 -c "import kscope, torch; assert torch.cuda.is_available()" 2> /dev/null; then
  step durations python3 bench/durations_cost.py
else
  echo "cost check: no kscope Python package with torch and CUDA here: the durations rows are not measured"
fi
if [ -x "$ncu" ]; then
  "$bench/counters_overhead" --sets > "$work/sets.txt"
  while read -r _ n set; do
    for launches in 5 25; do
      t0=$EPOCHREALTIME
      "$ncu" --clock-control none --cache-control all --log-file "$work/ncu.log" -f --metrics "$set" \
        -o "$work/overhead" "$bench/counters_overhead" --plain-overhead "$launches"
      echo "NCU $n $launches $t0 $EPOCHREALTIME" >> "$work/ncu_overhead.txt"
    done
  done < "$work/sets.txt"
else
  echo "cost check: ncu not found: its column stays empty"
fi
for f in "$work"/*.txt; do echo "## $(basename "$f")"; cat "$f"; done

python3 bench/cost_table.py "$work"
exit $failed
