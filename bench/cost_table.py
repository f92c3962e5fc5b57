"""kscope's own cost as a table of issue 29's targets, from the outputs bench/cost_check.sh collects
in one folder (each figure's program and how it is measured: cost_check.sh's header). Rows whose
outputs are absent are left out, so a part of the measurements (scripts/gpu_debt.sh's) gives its
part of the table.

    python3 bench/cost_table.py WORK_DIR

Reads from WORK_DIR: overhead.txt, first_cold.txt (bench/counters_overhead), floor.txt,
floor_first.txt (bench/counters_floor floor / first), ncu_overhead.txt (cost_check.sh's ncu
timings), durations.txt (bench/durations_cost.py), durations_gpu.txt (bench/kscope_overhead
--call-breakdown) and variants*.txt (bench/counters_floor variant, one variant a file; a
variants_<name>.err beside it says why a variant printed nothing).
Prints, each only when measured: the target table; "cold run ratio ..." (the durations row's
ratio); where a durations call's time went; the flush variants against "inside".
"""

from __future__ import annotations

import glob
import math
import os
import re
import sys

EIGHT_PASS_MS = 12.0  # the 8-pass target, ms per kernel
VALUES_PCT = 1.0  # a flush variant's values must stay this close to inside's
COLD_RUN_RATIO = 1.3  # durations: a cold run's wall time against the GPU's busy time
FIRST_RESULT_RATIO = 1.1  # the first result against CUPTI's own fewest calls, in the same run
nan = float("nan")


def known(x) -> bool:
    return x is not None and not math.isnan(x)


def fmt(x, digits=3) -> str:
    return f"{x:.{digits}f}" if known(x) else "-"


def ratio(a, b) -> float:
    return a / b if known(a) and known(b) and b else nan


class Outputs:
    def __init__(self, work: str):
        self.work = work

    def lines(self, name: str) -> list[str]:
        path = os.path.join(self.work, name)
        return open(path).read().splitlines() if os.path.exists(path) else []

    def first(self, name: str) -> float:
        found = [float(line.split()[1]) for line in self.lines(name) if line.startswith("FIRST ")]
        return found[0] if found else nan


def counters_rows(out: Outputs, row) -> dict[str, float]:
    ours, grow = {}, {}
    for line in out.lines("overhead.txt"):
        f = line.split()
        if f[0] == "GROW":
            grow[f[1]] = float(f[2])
        if f[0] == "OVERHEAD" and f[1] != "0":
            ours[f[1]] = (int(f[2]), float(f[3]), float(f[4]))
    floor = {}
    for line in out.lines("floor.txt"):  # FLOOR raw copy <set> <passes> ... | ... | per_kernel | setup
        f = line.split()
        if f[:3] == ["FLOOR", "raw", "copy"]:
            floor[{"1": "1", "bench5": "5"}[f[3]]] = float(line.split("|")[2])
    first_floor = nan
    minimal = ("initialize", "chip", "availability", "config_host", "add_metrics", "config_image", "passes", "enable",
               "data_size", "image_init", "set_config", "start", "launch", "stop", "decode", "range_info", "evaluate")
    for line in out.lines("floor_first.txt"):
        if line.startswith("FIRST fresh"):
            steps = dict((k, float(v)) for k, v in re.findall(r" (\w+)=([0-9.]+)", line) if k in minimal)
            first_floor = sum(steps.values())
    walls, ncu, ncu_fixed = {}, {}, {}
    for line in out.lines("ncu_overhead.txt"):
        _, n, launches, t0, t1 = line.split()
        walls.setdefault(n, {})[int(launches)] = float(t1) - float(t0)
    for n, w in walls.items():
        if 5 in w and 25 in w:
            ncu[n] = 1e3 * (w[25] - w[5]) / 20
            ncu_fixed[n] = 1e3 * w[5] - 5 * ncu[n]

    for n, label in (("5", "5 metrics, 8 passes, ms per kernel"), ("1", "1 metric, ms per kernel")):
        if n not in ours:
            continue
        _, per_kernel, _ = ours[n]
        fl = floor.get(n, nan)
        if n == "5":
            row(label, per_kernel, fl, ncu.get(n), None, f"<= {EIGHT_PASS_MS:g} ms and <= 1.25x floor",
                per_kernel <= EIGHT_PASS_MS and not (known(fl) and per_kernel > 1.25 * fl))
        else:
            row(label, per_kernel, fl, ncu.get(n), None, "<= 0.2 ms", per_kernel <= 0.2)
    ncu_first = ncu_fixed["1"] + ncu["1"] if "1" in ncu else None  # its fixed cost and one kernel
    for label, ms in (("first result (1 metric, 1 run), ms", out.first("overhead.txt")),
                      ("  the same, first process on the machine", out.first("first_cold.txt"))):
        if known(ms):
            row(label, ms, first_floor, ncu_first, None, f"<= {FIRST_RESULT_RATIO:g}x CUPTI's fewest calls (floor)",
                ms <= FIRST_RESULT_RATIO * first_floor if known(first_floor) else None)
    if "1" in ours:
        row("later counters call, fixed ms (1 metric)", ours["1"][2], None, None, None, "<= 150 ms", ours["1"][2] <= 150)
    if "5" in ours:
        row("later counters call, fixed ms (8 passes)", ours["5"][2], None, None, None, "(no target)", None)
    return grow


def durations_rows(out: Outputs, row) -> tuple[str | None, list[str]]:
    """The durations rows; returns the cold run's line and the debug log's splits."""
    py, splits = {}, []
    for line in out.lines("durations.txt"):
        f = line.split()
        if not f or f[0] != "PY":
            continue
        if f[1] == "split":
            splits.append(" ".join(f[2:]))
        elif len(f) == 3:
            py[f[1]] = float(f[2])
        else:
            py[(f[1], f[2])] = (float(f[4]), float(f[6]))
    flush_us = nan
    for line in out.lines("durations_gpu.txt"):
        m = re.search(r"GPU: one by one [0-9.]+ us, graph ([0-9.]+) us", line)
        if m:
            flush_us = float(m.group(1))
    cupti = py.get(("cupti", "all"))
    if not cupti:
        if out.lines("durations.txt") or out.lines("durations_gpu.txt"):
            row("durations (cupti), Python", nan, None, None, None, "not measured here", None)
        return None, splits
    per_run_us, fixed_ms = cupti
    add_us = py.get("kernel_ns", nan) / 1e3
    busy_us = add_us + flush_us
    met = per_run_us <= COLD_RUN_RATIO * busy_us
    row("durations (cupti), fixed ms per Python call", fixed_ms, None, None, None, "<= 2 ms", fixed_ms <= 2)
    row("durations, us per cold run (add 2^20)", per_run_us, busy_us, None, py.get("bare_events_loop_us"),
        f"<= {COLD_RUN_RATIO:g}x GPU busy (floor column)", met if known(busy_us) else None)
    cold = (f"cold run ratio {fmt(ratio(per_run_us, busy_us), 2)}x: {per_run_us:.2f} us a run against {fmt(busy_us, 2)} us "
            f"of GPU busy time (the add {fmt(add_us, 2)} us + the L2 flush {fmt(flush_us, 2)} us), target "
            f"<= {COLD_RUN_RATIO:g}x ({'met' if met else 'MISSED'})")
    return cold, splits


def print_targets(rows) -> None:
    print()
    print("kscope's own cost on this GPU (issue 29). floor: CUPTI alone (counters) or the GPU's busy time per")
    print("run, the add's duration + the L2 flush (durations); events: a bare event-timed loop, warm, no flush")
    print(f"{'what':<46} {'kscope':>10} {'floor':>10} {'/floor':>7} {'ncu':>10} {'ncu/ks':>7} {'events':>9} "
          f"{'/events':>8}  target")
    for what, value, fl, theirs, events, target, met in rows:
        print(f"{what:<46} {fmt(value):>10} {fmt(fl):>10} {fmt(ratio(value, fl), 2):>7} {fmt(theirs):>10} "
              f"{fmt(ratio(theirs, value), 1):>7} {fmt(events, 2):>9} {fmt(ratio(value, events), 2):>8}  {target}: {met}")


def read_variants(out: Outputs) -> dict[str, tuple[dict, dict] | str]:
    """Per variant: (its head fields, its metric values), or why it has none."""
    variants = {}
    for path in sorted(glob.glob(os.path.join(out.work, "variants*.txt"))):
        name = os.path.basename(path)
        found = False
        # VARIANT <set> <name> passes=.. ranges_per_run=.. dropped=.. ms_per_run=.. | m=v ...
        # or VARIANT <set> <name> failed: <why>
        for line in out.lines(name):
            if not line.startswith("VARIANT "):
                continue
            found = True
            fields = line.split()
            if len(fields) > 3 and fields[3] == "failed:":
                variants[fields[2]] = "failed: " + line.split("failed:", 1)[1].strip()
            elif "|" in line:
                head, values = line.split("|", 1)
                variants[fields[2]] = (dict(re.findall(r"(\S+)=(\S+)", head)), dict(re.findall(r"(\S+)=(\S+)", values)))
        if not found:
            err = out.lines(name[:-len(".txt")] + ".err")
            why = err[-1] if err else "no output"
            variants[name[len("variants_"):-len(".txt")] if name != "variants.txt" else "inside"] = \
                f"printed no VARIANT line: {why}"
    return variants


def percent_apart(value: str, reference: str) -> float:
    try:
        return 100 * (float(value) - float(reference)) / float(reference)
    except (ValueError, ZeroDivisionError):
        return nan


def print_variants(variants) -> None:
    if "inside" not in variants or isinstance(variants["inside"], str):
        if variants:
            print()
            print(f"flush variants: no 'inside' row to compare with ({variants.get('inside', 'not run')})")
        return
    inside_head, inside = variants["inside"]
    print()
    print("flush variants: 5 metrics on a 16 MiB copy after the L2 flush, median over 50 runs (bench/counters_floor")
    print(f"variant), against inside. A variant meets the 8-pass target at <= {EIGHT_PASS_MS:g} ms a run with every value "
          f"within {VALUES_PCT:g}% of inside's")
    print(f"  {'variant':<10} {'passes':>6} {'ranges/run':>10} {'ms/run':>9} {'largest |diff|':>14}  verdict")
    names = ["inside"] + sorted(n for n in variants if n != "inside")
    for name in names:
        if isinstance(variants[name], str):
            print(f"  {name:<10} {variants[name]}")
            continue
        head, values = variants[name]
        diffs = [abs(percent_apart(values.get(m, "-"), v)) for m, v in inside.items()]
        worst = max(diffs) if diffs and all(known(d) for d in diffs) else nan
        ms = float(head.get("ms_per_run", "nan"))
        if name == "inside":
            verdict = "the reference"
        else:
            fast = ms <= EIGHT_PASS_MS
            close = known(worst) and worst <= VALUES_PCT
            verdict = (f"{'meets' if fast and close else 'does not meet'} the target: {fmt(ms, 2)} ms a run "
                       f"{'<=' if fast else '>'} {EIGHT_PASS_MS:g}, values "
                       + ("not all comparable" if not known(worst) else "within 1%" if close else "MORE THAN 1% apart"))
        print(f"  {name:<10} {head.get('passes', '-'):>6} {head.get('ranges_per_run', '-'):>10} {fmt(ms):>9} "
              f"{(fmt(worst, 2) + '%') if name != 'inside' else '-':>14}  {verdict}")
    measured = [n for n in names if not isinstance(variants[n], str)]
    print(f"  {'metric':<52} " + " ".join(f"{n:>12}" for n in measured))
    for metric, reference in inside.items():
        cells = [reference] + [f"{percent_apart(variants[n][1].get(metric, '-'), reference):+.2f}%"
                               if known(percent_apart(variants[n][1].get(metric, '-'), reference)) else "-"
                               for n in measured[1:]]
        print(f"  {metric:<52} " + " ".join(f"{c:>12}" for c in cells))


def main() -> None:
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.exit("usage: python3 bench/cost_table.py WORK_DIR (the folder of bench/cost_check.sh's outputs)")
    out = Outputs(sys.argv[1])
    rows = []  # what, kscope, floor, ncu, events, target text, met

    def row(what, value, floor_value, ncu_value, events_value, target, met):
        rows.append((what, value, floor_value, ncu_value, events_value, target,
                     "-" if met is None else ("met" if met else "MISSED")))

    grow = counters_rows(out, row)
    cold, splits = durations_rows(out, row)
    if rows:
        print_targets(rows)
    if cold:
        print(cold)
    if splits:
        print()
        print("where a 1000-run durations call's time went, per run in us (kscope's debug log, bench/durations_cost.py):")
        for split in splits:
            print("  " + split)
    print_variants(read_variants(out))
    for n, ms in grow.items():
        print(f"(a {n}-metric call of 400 runs after the first result, growing the kept profiler to 512 ranges: {ms:.1f} ms)")


if __name__ == "__main__":
    main()
