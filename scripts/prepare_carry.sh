#!/usr/bin/env bash
# Run on the CPU machine before scripts/gpu_check.sh: the GPU machine cannot download anything,
# so this copies what its build needs into .carry/ (git-ignored; name it in the run's carry):
#   .carry/googletest  GoogleTest sources (-DKSCOPE_GTEST_SOURCE_DIR)
#   .carry/include     nlohmann/json headers (-DKSCOPE_NLOHMANN_INCLUDE_DIR)
set -euo pipefail
cd "$(dirname "$0")/.."
for needed in /usr/src/googletest /usr/include/nlohmann/json.hpp; do
  [[ -e $needed ]] || { echo "missing $needed: apt-get install libgtest-dev nlohmann-json3-dev" >&2; exit 1; }
done
rm -rf .carry/googletest .carry/include
mkdir -p .carry/include
cp -r /usr/src/googletest .carry/googletest
cp -r /usr/include/nlohmann .carry/include/nlohmann
du -sh .carry
