# Sourced by the GPU machine's scripts (scripts/gpu_check.sh, scripts/gpu_debt.sh): their step
# table and their build. Expects OUT (where logs go) and, for ctest_step and gtest_step, BUILD to be
# set; ROOT (the repository) is this script's checkout unless set.
#   record STEP RESULT DETAIL   a row of the step table, with the seconds since the previous row
#   skipping STEP [NEED_S]      true (and recorded as SKIP) when the step is to be left out: named in
#                               KSCOPE_GPU_CHECK_SKIP, or fewer than NEED_S seconds left before
#                               KSCOPE_GPU_TIME_LIMIT_S (seconds from the script's start), so that the
#                               table is still printed inside the device's limit on one command
#   ctest_step STEP "LABEL ARGS" LOG   ctest of $BUILD into $OUT/LOG, its result line recorded
#   gtest_step STEP PROGRAM FILTER TIMEOUT   one GPU test program of $BUILD/tests/gpu, its tests
#                               matching FILTER, into $OUT/STEP.log, its [result] lines shown
#   left_s MAX                  MAX seconds, or fewer so that the step table still prints inside
#                               KSCOPE_GPU_TIME_LIMIT_S
#   pytest_step STEP TIMEOUT FILE   the tests of FILE into $OUT/STEP.log, its result line recorded
#   print_sections DIR FILE:TITLE...   each non-empty DIR/FILE under its title
#   print_steps TITLE           the step table, last, with the GPU's name, driver and clocks
#   gpu_build BUILD LOG PYTHON [TARGET...]   configures (Release, sm_90, KSCOPE_BUILD_PYTHON=PYTHON)
#                               and builds BUILD with .carry's GoogleTest, nlohmann and CLI11
#                               (scripts/prepare_carry.sh): 0 built, 1 configuring failed, 2 a
#                               target failed (the build goes on past it, -k); KSCOPE_GPU_JOBS
#                               compiles at once (default 16, the GPU machine's cores)
#   baseline_prepare REV DIR    on a machine with git, before copying: REV's sources into DIR, its
#                               hash and subject in DIR/COMMIT
#   baseline_build SRC BUILD LOG PYTHON TARGET...   such a tree configured (no tests, no install)
#                               and TARGETs built
# Never changes clocks, power or modes.

# Sourced by hand too: without ROOT the build would look for /.carry and fail after a machine's start.
ROOT=${ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
SUMMARY=()
STEP_START=$SECONDS
record() {
  SUMMARY+=("$(printf '%-16s %-5s %4ss  %s' "$1" "$2" "$((SECONDS - STEP_START))" "$3")")
  STEP_START=$SECONDS
}

skipping() {
  if [[ " ${KSCOPE_GPU_CHECK_SKIP:-} " == *" $1 "* ]]; then
    record "$1" SKIP "left out (KSCOPE_GPU_CHECK_SKIP)"
    return 0
  fi
  local need=${2:-0} limit=${KSCOPE_GPU_TIME_LIMIT_S:-}
  if [[ -n $limit ]] && ((SECONDS + need > limit)); then
    record "$1" SKIP "left out: $((limit - SECONDS)) s left before the call's limit, it needs up to ${need} s"
    return 0
  fi
  return 1
}

ctest_step() {
  local name=$1 log=$3 rc line failed
  ctest --test-dir "$BUILD" $2 --timeout 300 --output-on-failure -V > "$OUT/$log" 2>&1
  rc=$?
  line="$(grep -E 'tests passed' "$OUT/$log" | tail -1), $(grep -c '(Skipped)' "$OUT/$log") skipped"
  failed=$(sed -n '/tests FAILED:/,/^Errors/p' "$OUT/$log" | grep -oE '[0-9]+ - [^ ]+' |
           sed 's/^[0-9]* - //' | paste -sd, -)
  [[ $rc -eq 0 ]] && record "$name" PASS "$line" || record "$name" FAIL "$line; failed: $failed"
}

gtest_step() {
  local step=$1 program=$2 filter=$3 rc line
  skipping "$step" 20 && return
  timeout "$(left_s "$4")" "$BUILD/tests/gpu/$program" --gtest_filter="$filter" > "$OUT/$step.log" 2>&1
  rc=$?
  grep -E '^\[result\]' "$OUT/$step.log"
  line=$(grep -E '^\[  PASSED  \]|^\[  FAILED  \] [0-9]+ test|^\[  SKIPPED \] [0-9]+ test' "$OUT/$step.log" | paste -sd' ' -)
  [[ $rc -eq 0 ]] && record "$step" PASS "$line" ||
    record "$step" FAIL "rc=$rc: $line; $(grep -E '^\[  FAILED  \] [A-Z]' "$OUT/$step.log" | sort -u | head -5 | paste -sd';' -)"
}

# left_s MAX: MAX seconds, or fewer so that the step table still prints inside the call's limit
left_s() {
  local left=$((${KSCOPE_GPU_TIME_LIMIT_S:-600} - SECONDS - 15))
  echo $((left < $1 ? left : $1))
}

# pytest_step STEP TIMEOUT FILE: the tests of FILE into $OUT/STEP.log, recorded with pytest's last line
pytest_step() {
  local rc line
  timeout "$(left_s "$2")" python3 -m pytest "$3" -q -rs -p no:cacheprovider > "$OUT/$1.log" 2>&1
  rc=$?
  line=$(grep -E '[0-9]+ (passed|failed|skipped)' "$OUT/$1.log" | tail -1)
  if [[ $rc -eq 0 ]]; then
    record "$1" PASS "$line"
  else
    record "$1" FAIL "rc=$rc: $line; $(grep -m4 -E '^(FAILED|E  )' "$OUT/$1.log" | paste -sd';' -)"
  fi
}

print_sections() {
  local dir=$1 section
  shift
  for section in "$@"; do
    if [[ -s $dir/${section%%:*} ]]; then
      echo "--- ${section#*:} ---"
      cat "$dir/${section%%:*}"
    fi
  done
}

print_steps() {
  echo
  echo "==================== $1 ===================="
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu \
    --format=csv,noheader 2>/dev/null | sed 's/^/GPU: /'
  printf '%-16s %-5s %5s  %s\n' "step" "result" "time" "key numbers"
  printf '%s\n' "${SUMMARY[@]}"
}

# baseline_prepare REV DIR: REV's sources into DIR (replacing it), for baseline_build on the GPU machine
baseline_prepare() {
  rm -rf "$2" && mkdir -p "$2" || return 1
  git archive "$1" | tar -x -C "$2" || return 1
  git log -1 --format='%h %s' "$1" > "$2/COMMIT"
  echo "baseline $(cut -c1-80 "$2/COMMIT") in $2 ($(du -sh "$2" | cut -f1))"
}

# baseline_build SRC BUILD LOG PYTHON TARGET...: another tree's sources (a baseline under .carry) configured
# without its tests and installation, and TARGETs built
baseline_build() {
  local src=$1 build=$2 log=$3 python=$4
  shift 4
  { cmake -S "$src" -B "$build" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DKSCOPE_BUILD_TESTS=OFF -DKSCOPE_BUILD_EXAMPLES=ON -DKSCOPE_INSTALL=OFF \
      -DKSCOPE_NLOHMANN_INCLUDE_DIR="$ROOT/.carry/include" -DKSCOPE_CLI11_INCLUDE_DIR="$ROOT/.carry/include" \
      -DKSCOPE_BUILD_PYTHON="$python" -DCMAKE_POLICY_VERSION_MINIMUM=3.5 &&
      cmake --build "$build" -j"${KSCOPE_GPU_JOBS:-16}" --target "$@"; } > "$log" 2>&1
}

# GoogleTest is built and installed from .carry first and found as a package: with
# -DKSCOPE_GTEST_SOURCE_DIR the top-level CMakeLists.txt re-creates the GTest::gtest_main alias
# that GoogleTest >= 1.11 already defines, and configuring fails.
gpu_build() {
  local build=$1 log=$2 python=$3
  shift 3
  local gtest_prefix=$build/googletest-install targets=() jobs=${KSCOPE_GPU_JOBS:-16}
  (($# > 0)) && targets=(--target "$@")
  {
    nvidia-smi || true
    cmake -S "$ROOT/.carry/googletest" -B "$build/googletest-build" -DCMAKE_BUILD_TYPE=Release \
      -DBUILD_GMOCK=OFF -DCMAKE_INSTALL_PREFIX="$gtest_prefix" -DCMAKE_POLICY_VERSION_MINIMUM=3.5 &&
      cmake --build "$build/googletest-build" -j"$jobs" --target install &&
      cmake -S "$ROOT" -B "$build" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_PREFIX_PATH="$gtest_prefix" \
        -DKSCOPE_NLOHMANN_INCLUDE_DIR="$ROOT/.carry/include" -DKSCOPE_CLI11_INCLUDE_DIR="$ROOT/.carry/include" \
        -DKSCOPE_BUILD_PYTHON="$python" -DCMAKE_POLICY_VERSION_MINIMUM=3.5
  } > "$log" 2>&1 || return 1
  # Keep going past a broken target: the steps whose programs did build still run, and say so.
  cmake --build "$build" -j"$jobs" "${targets[@]}" -- -k >> "$log" 2>&1 || return 2
}
