"""Compares kscope's line shares with Nsight Compute's source counters on the same kernel
(scripts/lines_check.sh runs it): the top-5 lines must rank alike (lines whose ncu shares differ by
less than 2 points may swap) and each line's share must be within 5 points.

    python3 scripts/lines_ncu_compare.py KSCOPE_CSV NCU_SOURCE_CSV

KSCOPE_CSV is bench/lines_cost's `lines` output (line,samples,share_pct,dominant) with its .pcs
beside it (pc_offset,line: where each instruction's code is); NCU_SOURCE_CSV is
`ncu -i REPORT --page source --csv --print-source sass`, whose per-instruction "Warp Stall Sampling
(All Samples)" is summed per line through the .pcs map. Exit 0 when both hold, 1 otherwise, 2 when
the ncu export cannot be read (its header is printed to adapt this script)."""

import csv
import sys
from collections import defaultdict

TOP = 5
SHARE_POINTS = 5.0
TIE_POINTS = 2.0


def kscope_shares(path):
    with open(path) as f:
        return {int(r["line"]): float(r["share_pct"]) for r in csv.DictReader(f)}


def pc_lines(path):
    with open(path) as f:
        return {int(r["pc_offset"]): int(r["line"]) for r in csv.DictReader(f)}


def number(text):
    text = (text or "").replace(",", "").strip()
    if not text:
        return 0.0
    return float(int(text, 16)) if text.lower().startswith("0x") else float(text)


def ncu_shares(path, lines_of_pc):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header_at = next((i for i, r in enumerate(rows) if any(c.startswith("Warp Stall Sampling (All") for c in r)), None)
    if header_at is None:
        print("ncu export: no 'Warp Stall Sampling (All Samples)' column; its first lines:")
        for r in rows[:5]:
            print("  ", r)
        sys.exit(2)
    header = rows[header_at]
    samples_at = next(i for i, c in enumerate(header) if c.startswith("Warp Stall Sampling (All"))
    address_at = next((i for i, c in enumerate(header) if "Address" in c), None)
    if address_at is None:
        print("ncu export: no Address column; header:", header)
        sys.exit(2)
    per_pc = defaultdict(float)
    for r in rows[header_at + 1:]:
        if len(r) <= max(samples_at, address_at) or not r[address_at].strip():
            continue
        try:
            per_pc[int(number(r[address_at]))] += number(r[samples_at])
        except ValueError:
            continue
    if not per_pc:
        print("ncu export: no instruction rows")
        sys.exit(2)
    # Offsets from the function's start, or absolute addresses (the function starts at its first instruction).
    start = min(per_pc) if min(per_pc) >= 1 << 20 else 0
    per_line, unmapped = defaultdict(float), 0.0
    for pc, samples in per_pc.items():
        line = lines_of_pc.get(pc - start)
        if line is None:
            unmapped += samples
        else:
            per_line[line] += samples
    total = sum(per_line.values()) + unmapped
    return {line: 100.0 * s / total for line, s in per_line.items()}, 100.0 * unmapped / total if total else 0.0


def main():
    kscope_csv, ncu_csv = sys.argv[1], sys.argv[2]
    ours = kscope_shares(kscope_csv)
    theirs, unmapped = ncu_shares(ncu_csv, pc_lines(kscope_csv + ".pcs"))
    top = sorted(theirs, key=theirs.get, reverse=True)[:TOP]
    print(f"{'line':>6} {'ncu %':>7} {'kscope %':>9} {'diff':>6}   (ncu samples on no known line: {unmapped:.1f}%)")
    ok = bool(top)  # nothing of ncu's on a known line compares nothing: a failure, not a pass
    if not ours:
        print(f"kscope's CSV {kscope_csv} has no lines (see lines_cost's log: the kernel it looked for was not sampled)")
    elif not top:
        print("no ncu sample falls on an instruction of kscope's line map (.pcs): the addresses do not match")
    for line in top:
        diff = ours.get(line, 0.0) - theirs[line]
        print(f"{line:>6} {theirs[line]:7.1f} {ours.get(line, 0.0):9.1f} {diff:+6.1f}")
        ok = ok and abs(diff) <= SHARE_POINTS
    # The ranking: kscope's order of ncu's top lines, where ncu's shares are told apart by more than TIE_POINTS.
    ranked = sorted(top, key=lambda l: ours.get(l, 0.0), reverse=True)
    for a, b in zip(top, ranked):
        if a != b and abs(theirs[a] - theirs[b]) > TIE_POINTS:
            print(f"ranking differs: ncu puts line {a} where kscope puts line {b}")
            ok = False
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
