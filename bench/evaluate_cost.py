"""What kscope.evaluate costs beyond measuring the two functions: at most 2x at 1,024 elements, at most
1.3x from 1,048,576 elements (between them, 2x).

Both columns measure the same configs with the same runs and warm-ups, fresh inputs every run and
the L2 flushed before every call; the baseline is the two functions measured alone, as a user
writes it by hand with kscope.analyze.kernel (one inputs() per run in the body, both functions on
them, one annotation each), without evaluate's drain after the candidate, the reference's own inputs
in the runs it reads, its checks and checksums. Each figure is the median wall time of REPEATS whole calls, both measured in this
process, alternately.

    python3 bench/evaluate_cost.py            # on the GPU: torch tensors on CUDA, backend cupti
    python3 bench/evaluate_cost.py --simulated # anywhere: NumPy arrays on the simulated backend
    python3 bench/evaluate_cost.py --breakdown # and where evaluate's host time went, per phase
    python3 bench/evaluate_cost.py --profile   # and the Python functions that took it (cProfile)

evaluate runs with its defaults: every warm-up run and a random subset of the recorded runs
checked (EvaluateOptions checked_runs); --checked-runs 0 checks every run, to see what that costs.
evaluate's floor, what it costs beyond its checks (the drain, the regions, its bookkeeping), is
--warmup-runs 0 --checked-runs 1: one run of 50 read. --drained adds a column (DRAINED lines, not
judged): the two alone with a wait for the GPU after the candidate, which evaluate keeps in every run
(its region then holds all the work the call caused); so how much of evaluate's cost that wait is
alone, and what evaluate costs beyond it.

Prints one line per size: EVAL <n> baseline_s X evaluate_s Y ratio Z PASS|FAIL <target>, then
EVAL worst_ratio Z.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import pstats
import statistics
import time
from typing import Any, Callable, Iterator

import kscope

RUNS, WARMUP, REPEATS = 50, 2, 5  # WARMUP: --warmup-runs's default, for both columns


def target(n: int) -> float:
    """The most evaluate may cost at n elements, as a multiple of the two functions alone."""
    return 1.3 if n >= 1 << 20 else 2.0


def torch_case(n: int) -> tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any]]:
    import torch

    def inputs(config: Any, seed: int) -> Any:
        g = torch.Generator(device="cuda").manual_seed(seed)
        return (torch.randn(config["n"], device="cuda", generator=g), torch.randn(config["n"], device="cuda", generator=g))

    def reference(a: Any, b: Any) -> Any:
        return a * 2.0 + b

    def candidate(a: Any, b: Any) -> Any:
        return torch.addcmul(b, a, torch.full((), 2.0, device="cuda"))

    return inputs, reference, candidate


def numpy_case(sim: Any) -> tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any]]:
    import numpy as np

    def inputs(config: Any, seed: int) -> Any:
        rng = np.random.default_rng(seed)
        return (rng.standard_normal(config["n"], dtype=np.float32), rng.standard_normal(config["n"], dtype=np.float32))

    def reference(a: Any, b: Any) -> Any:
        sim.launch("reference", 1000.0)
        return a * 2.0 + b

    def candidate(a: Any, b: Any) -> Any:
        sim.launch("candidate", 500.0)
        out = a * 2.0
        out += b
        return out

    return inputs, reference, candidate


def by_hand(inputs: Callable[..., Any], reference: Callable[..., Any], candidate: Callable[..., Any], n: int,
            warmup_runs: int, drain: Callable[[], None] | None = None) -> None:
    """The two functions measured alone; with `drain`, called in the candidate's region after its
    call, as evaluate waits there for the GPU to drain."""
    seeds = iter(range(10**9))

    @kscope.analyze.kernel(configs=[(n,)], runs=RUNS, warmup_runs=warmup_runs, replay_mode="range",
                           verbosity="silent")
    def pair(size: int) -> None:
        made = inputs({"n": size}, next(seeds))
        with kscope.annotate("candidate"):
            candidate(*made)
            if drain:
                drain()
        with kscope.annotate("reference"):
            reference(*made)

    pair()


def evaluated(inputs: Callable[..., Any], reference: Callable[..., Any], candidate: Callable[..., Any], n: int,
              verbosity: str = "silent", **options: Any) -> None:
    """options: evaluate's, warmup_runs among them."""
    kscope.evaluate(candidate, reference, inputs, [{"n": n}], runs=RUNS, verbosity=verbosity, **options)


def _timing(fn: Callable[..., Any], name: str, spent: dict[str, float]) -> Callable[..., Any]:
    """fn, adding the host time of its calls into spent[name]."""
    def timed_fn(*args: Any) -> Any:
        start = time.perf_counter()
        try:
            return fn(*args)
        finally:
            spent[name] = spent.get(name, 0.0) + time.perf_counter() - start
    return timed_fn


@contextlib.contextmanager
def _python_side_timed(spent: dict[str, float]) -> Iterator[None]:
    """kscope.evaluate's Python side timed into spent, as "kscope <what>": what the engine calls
    (the inputs' and outputs' views around the user's functions, the caller's stream); the rest of
    a phase's time is the engine's."""
    from kscope import _evaluate

    contest = _evaluate._Contest
    originals = {name: getattr(contest, name) for name in ("make_inputs", "candidate", "reference")}
    stream = _evaluate._caller_stream
    for name, fn in originals.items():
        setattr(contest, name, _timing(fn, f"kscope {name}", spent))
    _evaluate._caller_stream = _timing(stream, "kscope caller_stream", spent)
    try:
        yield
    finally:
        for name, fn in originals.items():
            setattr(contest, name, fn)
        _evaluate._caller_stream = stream


def timed(fn: Callable[[], None]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulated", action="store_true", help="NumPy on the simulated backend (no GPU)")
    parser.add_argument("--breakdown", action="store_true",
                        help="after each size, one more evaluation at verbosity 'debug': where its host time went")
    parser.add_argument("--profile", action="store_true",
                        help="after each size, one more evaluation under cProfile: the 25 functions with the most "
                             "time of their own (kscope._core.evaluate's is the engine's, in C++)")
    parser.add_argument("--checked-runs", type=int, default=None,
                        help="recorded runs checked per config (0: every run); default: evaluate's")
    parser.add_argument("--warmup-runs", type=int, default=WARMUP,
                        help=f"warm-up runs of both columns (default {WARMUP}); evaluate reads every one")
    parser.add_argument("--sizes", help="comma-separated element counts (default: the four, or three simulated)")
    parser.add_argument("--drained", action="store_true",
                        help="a third column, not judged: the two alone with a wait for the GPU after the "
                             "candidate (evaluate's drain), so what evaluate costs beyond that wait")
    args = parser.parse_args()
    options: dict[str, Any] = {"warmup_runs": args.warmup_runs}
    if args.checked_runs is not None:
        options["checked_runs"] = args.checked_runs
    # NumPy makes the simulated inputs on one host core: the largest sizes are the GPU's.
    sizes = [1 << 10, 1 << 14, 1 << 18] if args.simulated else [1 << 10, 1 << 16, 1 << 20, 1 << 24]
    if args.sizes:
        sizes = [int(n) for n in args.sizes.split(",")]
    worst = 0.0
    for n in sizes:
        with kscope.testing.simulated_backend() if args.simulated else contextlib.nullcontext() as sim:
            inputs, reference, candidate = numpy_case(sim) if args.simulated else torch_case(n)
            drain = None if args.simulated else _torch_synchronize  # the simulated backend has no GPU to wait for
            base, full, drained = [], [], []
            by_hand(inputs, reference, candidate, n, args.warmup_runs)  # JIT, allocator and CUPTI warmed before timing
            for _ in range(REPEATS):
                base.append(timed(lambda: by_hand(inputs, reference, candidate, n, args.warmup_runs)))
                full.append(timed(lambda: evaluated(inputs, reference, candidate, n, **options)))
                if args.drained:
                    drained.append(timed(lambda: by_hand(inputs, reference, candidate, n, args.warmup_runs, drain)))
            if args.breakdown:
                spent: dict[str, float] = {}
                with _python_side_timed(spent):
                    evaluated(_timing(inputs, "inputs", spent), _timing(reference, "reference", spent),
                              _timing(candidate, "candidate", spent), n, verbosity="debug", **options)
                print("EVAL the user's functions alone, within it: " +
                      ", ".join(f"{name} {1e3 * spent[name]:.3f} ms" for name in ("inputs", "candidate", "reference")) +
                      "; with kscope's Python around them (the views, the timers, the caller's stream): " +
                      ", ".join(f"{name} {1e3 * s:.3f} ms" for name, s in spent.items() if name.startswith("kscope")),
                      flush=True)
            if args.profile:
                profile = cProfile.Profile()
                profile.runcall(evaluated, inputs, reference, candidate, n, **options)
                report = io.StringIO()
                pstats.Stats(profile, stream=report).sort_stats("tottime").print_stats(25)
                print(f"EVAL profile of one evaluation at {n} elements:\n{report.getvalue()}", flush=True)
        b, f = statistics.median(base), statistics.median(full)
        worst = max(worst, f / b)
        verdict = "PASS" if f / b <= target(n) else "FAIL"
        print(f"EVAL {n} baseline_s {b:.4f} evaluate_s {f:.4f} ratio {f / b:.3f} {verdict} {target(n)}", flush=True)
        if drained:
            d = statistics.median(drained)
            print(f"DRAINED {n} drained_s {d:.4f} of_baseline {d / b:.3f} evaluate_of_drained {f / d:.3f} (not judged: "
                  f"the two alone with a wait for the GPU after the candidate)", flush=True)
    print(f"EVAL worst_ratio {worst:.3f}")


def _torch_synchronize() -> None:
    import torch

    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
