#!/usr/bin/env bash
# Sets up, builds kscope and runs every test. As root on Debian/Ubuntu it first installs the
# packages of scripts/debian-packages.txt that are missing (KSCOPE_SKIP_APT=1 skips that). Without
# a GPU the GPU-labelled tests report themselves skipped ("no CUDA device: ..."); on a GPU machine
# they run for real. A test whose tool is missing is skipped naming the package that provides it.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/install_packages.sh
kscope_install_packages build test
build=${KSCOPE_BUILD_DIR:-build}
export PATH="/usr/local/cuda/bin:$PATH"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release ${KSCOPE_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j"$(nproc)"
status=0
ctest --test-dir "$build" --output-on-failure || status=$?
# ctest names a skipped test, not why: the lines where the tests say why (SKIPPED: from a script,
# SKIPPED [n] from pytest).
grep -h '^SKIPPED[: []' "$build/Testing/Temporary/LastTest.log" | sort | uniq || true
exit $status
