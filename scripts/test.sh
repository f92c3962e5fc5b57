#!/usr/bin/env bash
# Builds kscope and runs every test. Without a GPU the GPU-labelled tests report themselves
# skipped ("no CUDA device: ..."); on a GPU machine they run for real.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${KSCOPE_BUILD_DIR:-build}
export PATH="/usr/local/cuda/bin:$PATH"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release ${KSCOPE_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j"$(nproc)"
status=0
ctest --test-dir "$build" --output-on-failure || status=$?
# ctest names a skipped test, not why: the tests that say why on a line of their own (tests/slurm).
grep -h '^SKIPPED: ' "$build/Testing/Temporary/LastTest.log" || true
exit $status
