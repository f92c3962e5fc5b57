#!/usr/bin/env bash
# Sets up, builds and runs the main example: a saxpy sweep measured with CUPTI, printed as a table
# and written to saxpy.csv / saxpy.json. Exits 2 with a message on a machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/cuda/bin:$PATH"
if [ "${KSCOPE_SKIP_APT:-0}" != 1 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null &&
   ! dpkg -s nlohmann-json3-dev libcli11-dev cmake g++ >/dev/null 2>&1; then
  apt-get update -qq && apt-get install -y -qq --no-install-recommends cmake g++ make nlohmann-json3-dev libcli11-dev \
    >/dev/null ||
    echo "[kscope] could not install Debian packages; continuing with what is installed" >&2
fi
args=(-DCMAKE_BUILD_TYPE=Release -DKSCOPE_BUILD_TESTS=OFF)
[ -d .carry/include ] && args+=(-DKSCOPE_NLOHMANN_INCLUDE_DIR="$PWD/.carry/include" -DKSCOPE_CLI11_INCLUDE_DIR="$PWD/.carry/include")
cmake -S . -B build-example "${args[@]}" >/dev/null
cmake --build build-example -j"$(nproc)" --target saxpy
./build-example/examples/saxpy "$@"
