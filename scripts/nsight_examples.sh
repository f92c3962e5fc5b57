#!/usr/bin/env bash
# Runs Nsight Python's own examples on kscope, each unchanged except for its import lines
# (`import nsight` -> `import kscope as nsight`, `from nsight[.x] import ...` -> `from kscope[.x]
# import ...`, `import nsight.x` -> `import kscope.x` plus the `nsight` name), and prints a table:
# example -> PASS/FAIL -> seconds -> files it wrote, then what each printed first (or its error).
#
#   bash scripts/nsight_examples.sh [EXAMPLES_DIR]     default: .carry/nsight-python/examples
#
# EXAMPLES_DIR is a checkout of github NVIDIA/nsight-python's examples/ (scripts/prepare_carry.sh
# puts one in .carry/). Environment: PYTHON (default python3) must import kscope and torch;
# TIMEOUT seconds per example (default 600); EXAMPLES, the numbers to run (default 00-11 and 13:
# 12 needs cuTile); OUT_DIR for each example's working directory, its output and the files it
# writes (default $OUT/nsight-examples when $OUT is set, else nsight-examples-out).
set -uo pipefail
cd "$(dirname "$0")/.."
examples_dir=${1:-.carry/nsight-python/examples}
PYTHON=${PYTHON:-python3}
TIMEOUT=${TIMEOUT:-600}
EXAMPLES=${EXAMPLES:-"00 01 02 03 04 05 06 07 08 09 10 11 13"}
OUT_DIR=${OUT_DIR:-${OUT:+$OUT/nsight-examples}}
OUT_DIR=${OUT_DIR:-nsight-examples-out}

if [[ ! -d $examples_dir ]]; then
  echo "no examples in $examples_dir: run scripts/prepare_carry.sh with a clone of NVIDIA/nsight-python," \
       "or pass a checkout of nsight-python's examples/ directory" >&2
  exit 2
fi
if ! "$PYTHON" -c "import kscope" 2>/dev/null; then
  echo "$PYTHON cannot import kscope: pip install --no-build-isolation . into it, or set" \
       "PYTHONPATH=<build dir>/python, or PYTHON=<an interpreter that has it>" >&2
  exit 2
fi
[[ -f $examples_dir/../COMMIT ]] && echo "nsight-python examples at $(cat "$examples_dir/../COMMIT")"
echo "kscope $("$PYTHON" -c 'import kscope; print(kscope.__version__, kscope.__file__)')"
mkdir -p "$OUT_DIR"
OUT_DIR=$(cd "$OUT_DIR" && pwd)

# Rewrites the import lines of one example; fails when it finds none (the example would then
# import the real nsight, or nothing).
rewrite_imports() {
  "$PYTHON" - "$1" "$2" <<'EOF'
import re, sys
source, target = sys.argv[1], sys.argv[2]
rules = [
    (r"^(\s*)import nsight\s*$", r"\1import kscope as nsight"),
    (r"^(\s*)import nsight as (\w+)", r"\1import kscope as \2"),
    (r"^(\s*)import nsight\.([\w.]+) as (\w+)", r"\1import kscope.\2 as \3"),
    (r"^(\s*)import nsight\.([\w.]+)\s*$", r"\1import kscope.\2; import kscope as nsight"),
    (r"^(\s*)from nsight(\.[\w.]+)? import ", r"\1from kscope\2 import "),
]
text, total = open(source).read(), 0
for pattern, replacement in rules:
    text, n = re.subn(pattern, replacement, text, flags=re.M)
    total += n
if total == 0:
    sys.exit(f"{source}: no nsight import found to rewrite")
open(target, "w").write(text)
EOF
}

declare -a rows details
passed=0 failed=0
for number in $EXAMPLES; do
  source=$(ls "$examples_dir"/"${number}"_*.py 2>/dev/null | head -1)
  if [[ -z $source ]]; then
    rows+=("$(printf '%-30s %-8s %6s  %s' "$number" MISSING - "no ${number}_*.py in $examples_dir")")
    failed=$((failed + 1))
    continue
  fi
  name=$(basename "$source" .py)
  work="$OUT_DIR/$name"
  rm -rf "$work" && mkdir -p "$work"
  if ! rewrite_imports "$source" "$work/$name.py" 2>"$work/stderr.txt"; then
    rows+=("$(printf '%-30s %-8s %6s  %s' "$name" FAIL - "$(tail -1 "$work/stderr.txt")")")
    failed=$((failed + 1))
    continue
  fi
  start=$SECONDS
  (cd "$work" && MPLBACKEND=Agg timeout "$TIMEOUT" "$PYTHON" "$name.py" >stdout.txt 2>stderr.txt)
  rc=$?
  seconds=$((SECONDS - start))
  case $rc in
    0) result=PASS; passed=$((passed + 1)) ;;
    124) result=TIMEOUT; failed=$((failed + 1)) ;;
    *) result="FAIL($rc)"; failed=$((failed + 1)) ;;
  esac
  written=$(cd "$work" && ls -1 | grep -v -x -e "$name.py" -e stdout.txt -e stderr.txt | tr '\n' ' ')
  written=${written:-(no files)}
  [[ $result == PASS ]] || written="$written | $(tail -1 "$work/stderr.txt" | cut -c1-140)"
  rows+=("$(printf '%-30s %-8s %6s  %s' "$name" "$result" "$seconds" "$written")")
  if [[ $result == PASS ]]; then
    details+=("== $name: first lines printed" "$(grep -v '^\s*$' "$work/stdout.txt" | head -12)")
  else
    details+=("== $name: $result, last lines of stderr" "$(tail -4 "$work/stderr.txt")")
  fi
done

echo
for detail in "${details[@]}"; do echo "$detail"; done
echo
printf '%-30s %-8s %6s  %s\n' example result s "files written"
for row in "${rows[@]}"; do echo "$row"; done
echo "$passed passed, $failed failed; outputs in $OUT_DIR/<example>/ (stdout.txt, stderr.txt, files)"
[[ $failed -eq 0 ]]
