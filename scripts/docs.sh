#!/usr/bin/env bash
# Builds the documentation site with warnings as errors: Doxygen's XML of the C++ public headers
# (an undocumented public name fails it), then Sphinx over docs/
# (MyST pages, autodoc over the built Python package, Breathe over the XML).
#
#   bash scripts/docs.sh [OUT_DIR]     the site in OUT_DIR/html (default docs/_build/html)
#
# Builds the Python package first (the _core target in $KSCOPE_BUILD_DIR, default build/) unless
# KSCOPE_PYTHON_PATH names a directory holding a built kscope package. Needs Debian's
# python3-sphinx, python3-myst-parser, furo, python3-breathe and doxygen.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/_build}
python=${KSCOPE_DOCS_PYTHON:-/usr/bin/python3}
source scripts/install_packages.sh
missing=$(kscope_missing_packages "$python" import:sphinx import:myst_parser import:furo import:breathe program:doxygen)
if [[ -n $missing ]]; then
  # ctest's docs_site passes KSCOPE_MISSING_TOOL_EXIT=77: skipped, saying why.
  [[ ${KSCOPE_MISSING_TOOL_EXIT:-1} == 77 ]] && echo -n "SKIPPED: "
  echo "the documentation site needs $missing: apt-get install $missing (bash scripts/test.sh does as root)"
  exit "${KSCOPE_MISSING_TOOL_EXIT:-1}"
fi
if [[ -z ${KSCOPE_PYTHON_PATH:-} ]]; then
  build=${KSCOPE_BUILD_DIR:-build}
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release ${KSCOPE_CMAKE_ARGS:-} >/dev/null
  cmake --build "$build" -j"$(nproc)" --target _core
  export KSCOPE_PYTHON_PATH=$PWD/$build/python
fi
mkdir -p "$out/doxygen"
out=$(cd "$out" && pwd)
KSCOPE_DOXYGEN_OUT=$out/doxygen KSCOPE_DOCS_PYTHON=$python doxygen docs/Doxyfile
KSCOPE_DOXYGEN_XML=$out/doxygen/xml PYTHONDONTWRITEBYTECODE=1 \
  "$python" -m sphinx -b html -E -W --keep-going -q -d "$out/doctrees" docs "$out/html"
echo "the site: $out/html/index.html"
