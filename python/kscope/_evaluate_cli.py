"""`kscope evaluate PROBLEMS`: kscope.evaluate_many from the command line. The `kscope` program runs
it in Python (pip's `kscope` command directly; the CMake build's program as `python -m kscope
evaluate`), with the same exit statuses as its other commands."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .errors import ConfigError, ProfilerException

USAGE_ERROR, IO_ERROR, FAILED, INTERRUPTED = 64, 74, 1, 130

_DESCRIPTION = """\
Evaluates every candidate of a directory of problems against its reference, each in a worker
process (compiled ahead on the CPU, measured one at a time per GPU), and writes one table: a row per
candidate and config with its verdict, speedup and interval, errors, findings, compile and GPU time.
A problem is a directory holding a KernelBench reference (Model, get_inputs, get_init_inputs; its
candidates define ModelNew) or a GPU MODE reference.py (ref_kernel, generate_input; its task.yml;
its candidates define custom_kernel). The table streams to OUT/results.jsonl as candidates finish
(OUT/results.csv at the end); --resume after a kill evaluates only the rest."""

_EPILOG = """\
verdicts: faster, slower, same, incorrect, suspect (kscope.evaluate's), crashed (the candidate killed
its worker, made its GPU unusable, called sys.exit or ran out of memory), timed_out, compile_failed,
error (the reference or its inputs failed).

exit status:
  0   the batch finished (whatever the verdicts)
  1   the batch could not go on (no GPU, workers that cannot start)
  64  bad command line or problems directory
  74  the output directory cannot be written
  130 interrupted (Ctrl-C): what finished is in OUT; --resume goes on"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"kscope evaluate: {message}\n")
        sys.exit(USAGE_ERROR)


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="kscope evaluate", description=_DESCRIPTION, epilog=_EPILOG,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("problems", help="the directory of problems (one directory per problem)")
    p.add_argument("-o", "--output", default="kscope-evaluate", metavar="OUT",
                   help="the output directory (default: kscope-evaluate)")
    again = p.add_mutually_exclusive_group()
    again.add_argument("--resume", action="store_true", help="evaluate only the candidates OUT lacks")
    again.add_argument("--overwrite", action="store_true", help="start OUT again (its builds are kept)")
    p.add_argument("--runs", type=int, default=20, help="recorded runs per config (default: 20)")
    p.add_argument("--warmup-runs", type=int, default=1, help="warm-up runs per config (default: 1)")
    p.add_argument("--checked-runs", type=int, default=8,
                   help="recorded runs per config whose tensors are read (0: every run; default: 8)")
    p.add_argument("--rtol", type=float, help="relative tolerance (default: per dtype)")
    p.add_argument("--atol", type=float, help="absolute tolerance (default: rtol x the reference output's typical magnitude)")
    p.add_argument("--threshold-pct", type=float, default=2.0, help="the band of 'same' (default: 2)")
    p.add_argument("--confidence", type=float, default=0.95, help="of the speedup's interval (default: 0.95)")
    p.add_argument("--seed", type=int, default=0, help="mixed into every run's seed (default: 0)")
    p.add_argument("--timeout", type=float, default=120.0, metavar="S",
                   help="seconds a candidate may take to load, and again to be measured (default: 120)")
    p.add_argument("--compile-timeout", type=float, default=900.0, metavar="S",
                   help="seconds a candidate may take to compile (default: 900)")
    p.add_argument("--gpus", help="comma-separated indices of the visible GPUs to use (default: all)")
    p.add_argument("--workers-per-gpu", type=int, default=2, help="measuring workers per GPU (default: 2)")
    p.add_argument("--compile-workers", type=int, help="CPU compile workers (default: the cores left)")
    p.add_argument("--build-dir", help="where candidates' extensions are built (default: OUT/build)")
    p.add_argument("--gpumode-configs", choices=("benchmarks", "tests"), default="benchmarks",
                   help="which list of a GPU MODE task.yml gives the configs (default: benchmarks)")
    p.add_argument("-q", "--quiet", action="store_true", help="no line per candidate")
    return p


def main(argv: Sequence[str]) -> int:
    args = parser().parse_args(list(argv))
    try:
        gpus = None if args.gpus is None else [int(g) for g in args.gpus.split(",") if g.strip()]
    except ValueError:
        parser().error(f"--gpus takes comma-separated GPU indices, e.g. 0,1; not {args.gpus!r}")
    from ._evaluate_many import evaluate_many

    try:
        table = evaluate_many(
            args.problems, args.output, runs=args.runs, warmup_runs=args.warmup_runs,
            checked_runs=args.checked_runs, rtol=args.rtol, atol=args.atol, threshold_pct=args.threshold_pct,
            confidence=args.confidence, seed=args.seed,
            timeout_s=args.timeout, compile_timeout_s=args.compile_timeout, gpus=gpus,
            workers_per_gpu=args.workers_per_gpu, compile_workers=args.compile_workers, build_dir=args.build_dir,
            gpumode_configs=args.gpumode_configs, resume=args.resume, overwrite=args.overwrite,
            verbosity="silent" if args.quiet else "info")
    except ConfigError as e:
        sys.stderr.write(f"kscope evaluate: {e}\n")
        return USAGE_ERROR
    except OSError as e:
        sys.stderr.write(f"kscope evaluate: {e}\n")
        return IO_ERROR
    except ProfilerException as e:
        sys.stderr.write(f"kscope evaluate: {e}\n")
        return FAILED
    except KeyboardInterrupt:
        sys.stderr.write(f"kscope evaluate: interrupted; what finished is in {args.output}: --resume goes on\n")
        return INTERRUPTED
    verdicts = ", ".join(f"{n} {v}" for v, n in table["Verdict"].value_counts().items())
    print(f"kscope evaluate: {table['Candidate'].nunique()} candidates, {len(table)} rows ({verdicts or 'none'}); "
          f"the table: {args.output}/results.csv")
    return 0
