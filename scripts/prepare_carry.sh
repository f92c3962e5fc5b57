#!/usr/bin/env bash
# For a GPU machine without network access: run it on a machine with one before copying the
# checkout over, then run scripts/gpu_check.sh there. It copies what the GPU machine's build needs
# into .carry/ (git-ignored; copy it along with the checkout):
#   .carry/googletest  GoogleTest sources (-DKSCOPE_GTEST_SOURCE_DIR)
#   .carry/include     nlohmann/json headers (-DKSCOPE_NLOHMANN_INCLUDE_DIR) and CLI11's (CLI/,
#                      -DKSCOPE_CLI11_INCLUDE_DIR), both header-only
#   .carry/nsight-python/examples  Nsight Python's examples, for scripts/nsight_examples.sh, from a
#                      git clone of https://github.com/NVIDIA/nsight-python (bare or not), given as
#                      the argument or in NSIGHT_PYTHON_CHECKOUT; left out with a note without one
# usage: scripts/prepare_carry.sh [NSIGHT_PYTHON_CHECKOUT]
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
nsight=${1:-${NSIGHT_PYTHON_CHECKOUT:-}}
if [[ -z $nsight ]]; then
  echo "note: no nsight-python checkout given (git clone https://github.com/NVIDIA/nsight-python, then" \
       "pass its path or set NSIGHT_PYTHON_CHECKOUT): .carry/nsight-python left out," \
       "scripts/nsight_examples.sh needs it" >&2
elif git -C "$nsight" rev-parse --verify -q HEAD >/dev/null 2>&1; then
  mkdir -p .carry/nsight-python
  git -C "$nsight" archive HEAD examples | tar -x -C .carry/nsight-python
  git -C "$nsight" log -1 --format='%h %cs %s' HEAD >.carry/nsight-python/COMMIT
  echo "nsight-python examples at $(cat .carry/nsight-python/COMMIT)"
else
  echo "$nsight is no git clone of nsight-python (git clone https://github.com/NVIDIA/nsight-python)" >&2
  exit 1
fi
du -sh .carry
