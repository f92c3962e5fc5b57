#!/usr/bin/env bash
# Issue 18 on the GPU machine: one process, and a torchrun of one process per GPU (at least two;
# shard='auto'; on a one-GPU machine both ranks share it), measure the same sweep of torch kernels
# (scripts/shard_check.py). Checks: rank 0's merged result has the single process's rows, each
# median within 20% + 2 us of it (shared or not, GPUs of one model agree that closely); every row
# names the GPU and host; `kscope merge` of the shards' files gives exactly rank 0's table. It also
# prints both wall times (a speed-up only means something with several GPUs). Last line: "shard
# check: PASS" or "shard check: FAIL (...)"; exit 0 or 1.
#
# Usage: PYTHONPATH=<kscope installed by pip> bash scripts/shard_check.sh KSCOPE_PROGRAM
set -uo pipefail
cd "$(dirname "$0")/.."
KSCOPE=${1:?the kscope program (pip's, or a CMake build's)}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# One process per GPU, at least two (on a one-GPU machine both share it).
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
processes=$(( gpus > 2 ? gpus : 2 ))
start=$EPOCHREALTIME
python3 scripts/shard_check.py single "$WORK" || { echo "shard check: FAIL (the single process did not measure)"; exit 1; }
single_s=$(python3 -c "print(f'{$EPOCHREALTIME - $start:.1f}')")
start=$EPOCHREALTIME
python3 -m torch.distributed.run --nnodes=1 --nproc-per-node=$processes --master-port=29517 \
  scripts/shard_check.py sharded "$WORK" || { echo "shard check: FAIL (torchrun did not finish)"; exit 1; }
sharded_s=$(python3 -c "print(f'{$EPOCHREALTIME - $start:.1f}')")
echo "wall time: one process ${single_s} s, torchrun with $processes processes on $gpus GPU(s) ${sharded_s} s" \
  "(each includes its processes' start-up)"
"$KSCOPE" merge "$WORK/cli_" "$WORK/sharded_elementwise-0-" > "$WORK/cli.txt" 2>&1 ||
  { cat "$WORK/cli.txt"; echo "shard check: FAIL (kscope merge)"; exit 1; }
tail -1 "$WORK/cli.txt"
ls "$WORK" | sed 's/^/  file: /'

python3 - "$WORK" <<'PYEOF'
import sys
import pandas as pd
import kscope

work = sys.argv[1]
single = kscope.load(f"{work}/single.json").to_dataframe()
merged_results = kscope.load(f"{work}/merged.json")
merged = merged_results.to_dataframe()
cli = kscope.load(f"{work}/cli_results.json").to_dataframe()
key = ["Annotation", "n", "op", "Metric"]
problems = []
if sorted(map(tuple, single[key].values.tolist())) != sorted(map(tuple, merged[key].values.tolist())):
    problems.append("the merged rows are not the single process's")
pd.testing.assert_frame_equal(cli, merged, check_exact=True)  # raises if kscope merge differs
print(f"{'op':4} {'n':>9} {'single ns':>11} {'merged ns':>11} {'diff':>7} {'limit':>7}  GPU / Host")
worst = 0.0
for _, m in merged.iterrows():
    s = single[(single.Annotation == m.Annotation) & (single.n == m.n) & (single.op == m.op)].iloc[0]
    limit = 0.20 * s.Median + 2000
    diff = m.Median - s.Median
    worst = max(worst, abs(diff) / limit)
    print(f"{m.op:4} {m.n:>9} {s.Median:>11.0f} {m.Median:>11.0f} {diff / s.Median:>+7.1%} {limit:>7.0f}  "
          f"{m.GPU} / {m.Host}")
    if not m.GPU or not m.Host:
        problems.append(f"row {m.op} {m.n} has no GPU or Host")
if worst > 1:
    problems.append(f"a median differs by {worst:.2f} of its limit")
print(f"rows {len(merged)} (single {len(single)}), shards merged {merged_results._core.shard_count()}, "
      f"kscope merge equal to rank 0's table; max |diff| {worst:.0%} of its limit")
print("shard check: " + ("PASS" if not problems else "FAIL (" + "; ".join(problems) + ")"))
sys.exit(1 if problems else 0)
PYEOF
