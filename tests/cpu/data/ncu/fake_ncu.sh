#!/bin/sh
# A stand-in for Nsight Compute's ncu in kscope's CPU tests (no GPU). It answers --version from
# ncu_version.txt, answers --import with the recorded exports <FAKE_NCU_REPORT>_raw.csv and
# <FAKE_NCU_REPORT>_nvtx.csv (--print-nvtx-rename kernel), and for a profiling run copies a
# recorded log to --log-file, runs the program after "--export <stem>" as ncu would, and
# creates <stem>.ncu-rep. FAKE_NCU_MODE: "too_old" (version 2024.1.0), "permission" (the
# ERR_NVGPUCTRPERM log; the program does not run), "no_report" (runs it, writes no report).
data=$(dirname "$0")
report=${FAKE_NCU_REPORT:-saxpy}
case "$1" in
  --version)
    if [ "$FAKE_NCU_MODE" = too_old ]; then echo "Version 2024.1.0.0 (build 33681293) (public-release)"
    else cat "$data/ncu_version.txt"; fi
    exit 0 ;;
  --import)
    case " $* " in
      *" --print-nvtx-rename kernel "*) cat "$data/${report}_nvtx.csv" ;;
      *) cat "$data/${report}_raw.csv" ;;
    esac
    exit 0 ;;
esac
# A profiling run from inside a profiled program would re-run it without end: refuse it.
if [ -n "$FAKE_NCU_INSIDE" ]; then echo "fake_ncu.sh: nested profiling run refused" >&2; exit 99; fi
export FAKE_NCU_INSIDE=1
log=
stem=
while [ $# -gt 0 ]; do
  case "$1" in
    --log-file) log=$2; shift 2 ;;
    --export) stem=$2; shift 2; break ;;
    *) shift ;;
  esac
done
if [ "$FAKE_NCU_MODE" = permission ]; then cp "$data/log_permission.log" "$log"; exit 0; fi
cp "$data/log_ok.log" "$log"
"$@"
rc=$?
[ "$FAKE_NCU_MODE" = no_report ] || : > "$stem.ncu-rep"
exit $rc
