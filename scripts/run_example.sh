#!/usr/bin/env bash
# Sets up, builds and runs the main example: a saxpy sweep measured with CUPTI, printed as a table
# and written to saxpy.csv / saxpy.json (examples/saxpy.cu).
#
#   bash scripts/run_example.sh               on a machine with an NVIDIA GPU, its driver and the
#                                             CUDA toolkit (/usr/local/cuda, or nvcc on PATH)
#   bash scripts/run_example.sh --simulated   the same sweep on kscope's simulated backend, on any
#                                             machine: kscope's table, durations modelled
#
# As root on Debian/Ubuntu it first installs the build's packages (scripts/debian-packages.txt;
# KSCOPE_SKIP_APT=1 skips that). Without a GPU and its driver, or without the CUDA toolkit, it says
# so before building and exits with code 2.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/cuda/bin:$PATH"
simulated=0
if [ "${1:-}" = --simulated ]; then
  simulated=1
  shift
fi

# Why this machine cannot run the GPU example (nothing printed: it can).
no_gpu_reason() {
  if command -v nvidia-smi >/dev/null; then
    local listed
    listed=$(nvidia-smi -L 2>&1) || { echo "nvidia-smi fails: ${listed%%$'\n'*}"; return; }
    grep -q '^GPU ' <<<"$listed" || echo "nvidia-smi lists no GPU"
    return
  fi
  compgen -G '/dev/nvidia[0-9]*' >/dev/null || { echo "no NVIDIA GPU (no /dev/nvidia0, no nvidia-smi)"; return; }
  ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1' || echo "no NVIDIA driver (libcuda.so.1 is not installed)"
}

say() { echo "[kscope] $*" >&2; }
if (( ! simulated )); then
  reason=$(no_gpu_reason)
  if [ -n "$reason" ]; then
    say "the saxpy example measures a GPU, and this machine has none that can run it: $reason."
    say "bash scripts/run_example.sh --simulated shows kscope's table on the simulated backend instead."
    exit 2
  fi
  if ! command -v "${CUDACXX:-nvcc}" >/dev/null; then
    say "the saxpy example is CUDA code: building it needs the CUDA toolkit (nvcc and CUPTI), which is not"
    say "in /usr/local/cuda nor on PATH. Install CUDA 13 there (or set CUDACXX), or run with --simulated."
    exit 2
  fi
fi

source scripts/install_packages.sh
kscope_install_packages build
args=(-DCMAKE_BUILD_TYPE=Release -DKSCOPE_BUILD_TESTS=OFF -DKSCOPE_BUILD_PYTHON=OFF)
[ -d .carry/include ] && args+=(-DKSCOPE_NLOHMANN_INCLUDE_DIR="$PWD/.carry/include" -DKSCOPE_CLI11_INCLUDE_DIR="$PWD/.carry/include")
if (( simulated )); then
  build=build-example-simulated
  cmake -S . -B "$build" "${args[@]}" -DKSCOPE_ENABLE_CUDA=OFF >/dev/null
  cmake --build "$build" -j"$(nproc)" --target saxpy_simulated
  exec "./$build/examples/saxpy_simulated" "$@"
fi
build=build-example
cmake -S . -B "$build" "${args[@]}" >/dev/null
if ! grep -q '^KSCOPE_ENABLE_CUDA:BOOL=ON' "$build/CMakeCache.txt"; then
  say "CMake found nvcc but not a usable CUDA toolkit (CUPTI included): see $build/CMakeFiles/CMakeConfigureLog.yaml,"
  say "or run with --simulated."
  exit 2
fi
cmake --build "$build" -j"$(nproc)" --target saxpy
exec "./$build/examples/saxpy" "$@"
