#!/usr/bin/env bash
# bench/compare_kernel_variants.cu on the GPU machine (about 30 s): what bounds kscope's device
# comparison, for docs/evaluate.md. Output to $OUT/compare_variants.txt. Never changes clocks.
#   bash scripts/compare_variants_gpu.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/compare-variants-out}
mkdir -p "$OUT"
nvcc -std=c++20 -O3 -arch=sm_90 --fmad=false -I include -I src bench/compare_kernel_variants.cu \
  -o "$OUT/compare_kernel_variants" 2> "$OUT/build.log" || { tail -5 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/compare_variants.txt"
timeout 120 "$OUT/compare_kernel_variants" | tee -a "$OUT/compare_variants.txt"
