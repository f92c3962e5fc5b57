#!/usr/bin/env bash
# docs/install.md's Python install, run as written in a scratch copy of this checkout: a venv that sees
# the system's packages (Debian's pandas, numpy, pybind11), `pip install --no-build-isolation
# --no-deps .` (nothing downloaded), then `import kscope` from another directory and the console
# command `kscope` (--version, a closed pipe, `kscope evaluate` in Python). Built without CUDA to save minutes: `kscope doctor`
# must then say so.
# usage: tests/install/pip_venv.sh [PYTHON]   (ctest: pip_venv_install, label install)
set -euo pipefail
python=${1:-/usr/bin/python3}
src=$(cd "$(dirname "$0")/../.." && pwd)
source "$src/scripts/install_packages.sh"
missing=$(kscope_missing_packages "$python" import:venv import:ensurepip import:setuptools import:wheel program:git)
if [[ -n $missing ]]; then
  echo "SKIPPED: the venv install needs $missing: apt-get install $missing (bash scripts/test.sh does as root)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# What a fresh clone holds, plus new files not yet committed; no build directories.
git -C "$src" ls-files -z --cached --others --exclude-standard |
  (cd "$src" && tar --null --files-from=- --ignore-failed-read -cf - 2>/dev/null) |
  (mkdir "$work/kscope" && tar -C "$work/kscope" -xf -)

cd "$work/kscope"
cmake_args="-DKSCOPE_ENABLE_CUDA=OFF"
if command -v ccache >/dev/null; then  # faster reruns here; paths under $work hashed relative to it
  cmake_args+=" -DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
  export CCACHE_BASEDIR=$work
fi
start=$SECONDS
"$python" -m venv --system-site-packages .venv
KSCOPE_CMAKE_ARGS=$cmake_args .venv/bin/pip install -q --no-build-isolation --no-deps .
echo "venv and pip install: $((SECONDS - start)) s"

cd "$work"  # away from the source tree: the installed package must be the one imported
installed=$("$work/kscope/.venv/bin/python" -c 'import kscope; print(kscope.__version__, kscope.__file__)')
echo "import kscope: $installed"
[[ $installed == *"/kscope/.venv/lib/"* ]] || { echo "FAIL: kscope was not imported from the venv"; exit 1; }

rc=0
out=$("$work/kscope/.venv/bin/kscope" doctor 2>&1) || rc=$?
echo "kscope doctor (exit code $rc): $out"
if [[ $rc -ne 2 || $out != *"built without CUDA"* ]]; then
  echo "FAIL: without CUDA, the console command must say so and exit with 2"
  exit 1
fi
version=$("$work/kscope/.venv/bin/kscope" --version)
echo "kscope --version: $version"
[[ $version == "kscope "* ]] || { echo "FAIL: kscope --version printed '$version'"; exit 1; }
# A reader that is gone ends the command by SIGPIPE, as the CMake build's program and Unix tools:
# the console script is Python, which ignores SIGPIPE, and must not pass that on to the program.
closed_pipe=$("$work/kscope/.venv/bin/python" -c '
import os, subprocess, sys
read, write = os.pipe()
os.close(read)
print(subprocess.call([sys.argv[1], "compare", "--help"], stdout=write, stderr=subprocess.DEVNULL))
' "$work/kscope/.venv/bin/kscope")
echo "kscope compare --help into a closed pipe: $closed_pipe (-13: SIGPIPE)"
[[ $closed_pipe == -13 ]] || { echo "FAIL: the console command did not end by SIGPIPE"; exit 1; }
# `kscope evaluate` is Python's: the console command runs it in the venv's interpreter, and so does the
# bundled program, which finds the package beside it.
for program in "$work/kscope/.venv/bin/kscope" "$("$work/kscope/.venv/bin/python" -c 'import kscope, os; print(os.path.join(os.path.dirname(kscope.__file__), "bin", "kscope"))')"; do
  rc=0
  out=$("$program" evaluate "$work/no-such-directory" 2>&1) || rc=$?
  echo "$program evaluate (exit code $rc): $out"
  [[ $rc -eq 64 && $out == *"is not a directory"* ]] || { echo "FAIL: kscope evaluate did not reach Python"; exit 1; }
done
echo "PASS"
