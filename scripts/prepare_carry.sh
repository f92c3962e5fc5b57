#!/usr/bin/env bash
# Run on the CPU machine before scripts/gpu_check.sh: the GPU machine cannot download anything,
# so this copies what its build needs into .carry/ (git-ignored; name it in the run's carry):
#   .carry/googletest  GoogleTest sources (-DKSCOPE_GTEST_SOURCE_DIR)
#   .carry/include     nlohmann/json headers (-DKSCOPE_NLOHMANN_INCLUDE_DIR) and CLI11's (CLI/,
#                      -DKSCOPE_CLI11_INCLUDE_DIR), both header-only
#   .carry/nsight-python/examples  Nsight Python's examples, for scripts/nsight_examples.sh, from
#                      the bare mirror of github NVIDIA/nsight-python that the session's fetch
#                      tool made (NSIGHT_PYTHON_MIRROR; skipped with a note when it is absent)
set -euo pipefail
cd "$(dirname "$0")/.."
for needed in /usr/src/googletest /usr/include/nlohmann/json.hpp /usr/include/CLI/CLI.hpp; do
  [[ -e $needed ]] || { echo "missing $needed: apt-get install libgtest-dev nlohmann-json3-dev libcli11-dev" >&2; exit 1; }
done
rm -rf .carry/googletest .carry/include .carry/nsight-python
mkdir -p .carry/include
cp -r /usr/src/googletest .carry/googletest
cp -r /usr/include/nlohmann .carry/include/nlohmann
cp -r /usr/include/CLI .carry/include/CLI
mirror=${NSIGHT_PYTHON_MIRROR:-/work/.mirror/NVIDIA+nsight-python/repo}
if git --git-dir "$mirror" rev-parse --verify -q HEAD >/dev/null 2>&1; then
  mkdir -p .carry/nsight-python
  git --git-dir "$mirror" archive HEAD examples | tar -x -C .carry/nsight-python
  git --git-dir "$mirror" log -1 --format='%h %cs %s' HEAD >.carry/nsight-python/COMMIT
  echo "nsight-python examples at $(cat .carry/nsight-python/COMMIT)"
else
  echo "note: no nsight-python mirror at $mirror (fetch github:NVIDIA/nsight-python, or set" \
       "NSIGHT_PYTHON_MIRROR): .carry/nsight-python left out, scripts/nsight_examples.sh needs it" >&2
fi
du -sh .carry
