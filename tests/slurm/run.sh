#!/usr/bin/env bash
# ctest's slurm_recipe (label slurm): starts a one-node Slurm cluster (cluster.sh), runs docs/scaling-out.md's
# Slurm recipe on it (test_slurm.py), and stops the cluster at the end, also when a scenario fails
# or the run is interrupted. Where the cluster cannot start (not root; slurm-wlm or munge not
# installed) it says why and exits 77, which ctest reports as skipped.
# Usage: run.sh PYTHON KSCOPE_PROGRAM, with the kscope package on PYTHONPATH.
set -uo pipefail
python=${1:?usage: run.sh PYTHON KSCOPE_PROGRAM}
kscope=${2:?usage: run.sh PYTHON KSCOPE_PROGRAM}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/cluster.sh"

reason=$(slurm_cannot_start)
if [ -n "$reason" ]; then
  echo "SKIPPED: The Slurm recipe of docs/scaling-out.md is tested on a one-node Slurm cluster, which cannot start here: $reason"
  exit 77
fi

seconds_since() { awk -v now="$EPOCHREALTIME" -v then="$1" 'BEGIN { printf "%.1f", now - then }'; }
began=$EPOCHREALTIME
work=$(mktemp -d "${TMPDIR:-/tmp}/kscope-slurm.XXXXXX")
finish() {
  local stopping=$EPOCHREALTIME
  slurm_cluster_stop
  echo "Slurm cluster stopped in $(seconds_since "$stopping") s; the Slurm test took $(seconds_since "$began") s in all"
  rm -rf "$work"
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

starting=$EPOCHREALTIME
if ! slurm_cluster_start "$work/cluster"; then
  echo "FAILED: the one-node Slurm cluster did not start (its logs are above)"
  exit 1
fi
echo "Slurm cluster started in $(seconds_since "$starting") s (munged, slurmctld, slurmd; sinfo: node idle)"
# The jobs run in this environment (sbatch exports it): the kscope program on PATH; the package,
# and tests/python's sharded_workload, on PYTHONPATH.
cd "$work"
PATH="$(dirname "$kscope"):$PATH" PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$(dirname "$here")/python" \
  "$python" -m pytest "$here/test_slurm.py" -q -p no:cacheprovider --basetemp="$work/scenarios"
