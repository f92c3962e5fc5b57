#!/usr/bin/env python3
"""Does each tuner choose one config in every process, and is it the fastest? With and without kscope.

Part triton: a Triton fp16 matmul (M = N = K = --size, the 18 configs of
scripts/triton_autotune_experiment.py), autotuned in fresh processes by @triton.autotune (Triton's
do_bench) and by @kscope.triton.autotune (cache_results=False: every process races). Part inductor:
torch.compile(mode="max-autotune-no-cudagraphs") of relu(a @ b + bias) (fp16, --mm-size), in fresh
processes with Inductor's own benchmarking and with kscope.torch.install(); Inductor's caches off, so
that every process tunes. Inductor compiles in the process itself (compile_threads = 1, --compile-threads):
a pool of compile workers costs each fresh process seconds of start-up that tune nothing, and Triton's
cache on disk makes every compile after the warm-up a hit; the candidates and their timing are unchanged.

Per way: distinct winners over the processes, the most common winner's share, whether the winners are
within the tie threshold of one another, ties the race declared, tuning wall time, and the chosen
config's long-run time against the best config's: Triton's configs each measured afterwards for
--long-run-ms with kscope (cold L2, median); for Inductor, each candidate of the matmul alone (a
reference process timing every candidate for --long-run-ms) and each process's compiled program
(matmul and epilogue) for --long-run-ms.

The processes are forked from a server that has imported torch and Triton (multiprocessing's
forkserver: each one a fresh process with its own CUDA context), ways taking turns, so that a
--deadline-s cut leaves every way about as many processes. Warm-ups (Triton's kernels compiled once,
Inductor's candidates once) and the references come first. Prints the table (and --json FILE).

    python3 scripts/tuner_choice_experiment.py [--parts triton,inductor] [--processes 20]
        [--size 4096] [--mm-size 4096] [--long-run-ms 500] [--deadline-s 540] [--compile-threads 1]
        [--json FILE]
"""

import argparse
import collections
import json
import multiprocessing
import os
import statistics
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from triton_autotune_experiment import build, compile_all  # noqa: E402  (the matmul and its 18 configs)

THRESHOLD = 1.02  # kscope's tie threshold, 2%
WAYS = {"triton": ("triton.autotune", "kscope.triton.autotune"),
        "inductor": ("max-autotune", "max-autotune + kscope.torch")}


# ---- in the fresh processes ----------------------------------------------------------------------

def triton_tune(way, size):
    """One autotuning of the matmul: the winner (its str) and the tuning time."""
    import torch
    import triton

    import kscope.triton

    matmul, configs, args, grid = build(size)
    if way == "triton.autotune":
        kernel = triton.autotune(configs=configs, key=["M", "N", "K"])(matmul)
    else:
        kernel = kscope.triton.autotune(configs=configs, key=["M", "N", "K"], cache_results=False)(matmul)
    started = time.perf_counter()
    kernel[grid](*args)
    torch.cuda.synchronize()
    out = {"winner": str(kernel.best_config), "tuning_s": kernel.bench_time, "wall_s": time.perf_counter() - started}
    for choice in getattr(kernel, "choices", {}).values():
        out["race_winner"] = str(choice.race.winner[0])
        out["ties"] = [str(c) for (c,) in choice.race.ties]
    return out


def triton_reference(size, long_run_ms):
    """Every config's long-run time (ms, median, cold L2)."""
    import kscope.triton

    matmul, configs, args, grid = build(size)
    return {str(config): kscope.triton.do_bench(lambda c=config: matmul[grid](*args, **c.all_kwargs()), warmup=100,
                                                rep=long_run_ms, return_mode="median") for config in configs}


def inductor_compile(way, size, long_run_ms, compile_threads, reference=False):
    """One max-autotune compile: each choice among candidates (Inductor's timings), the tuning time, and
    the compiled program's long-run time; with reference, every candidate timed for long_run_ms."""
    import torch
    import torch._inductor.config as inductor_config
    from torch._inductor import select_algorithm
    from torch._inductor.runtime import benchmarking

    import kscope.torch
    import kscope.triton

    inductor_config.fx_graph_cache = False
    inductor_config.autotune_local_cache = False
    inductor_config.max_autotune_gemm_backends = "ATEN,TRITON"
    inductor_config.compile_threads = compile_threads
    installation = None
    if reference:
        installation = kscope.torch.install(race=False)
        timed = benchmarking.benchmarker.benchmark_gpu

        def long_run(_callable, *args, **kwargs):
            return timed(_callable, *args, **{**kwargs, "warmup": 100, "rep": long_run_ms})

        benchmarking.benchmarker.benchmark_gpu = long_run
        if hasattr(benchmarking, "register_benchmarker"):  # else Benchmarker.benchmark calls benchmark_gpu
            benchmarking.register_benchmarker(
                "cuda", lambda self, f, *, warmup, rep, **kw: long_run(f, **kw), override=True)
    elif way != "max-autotune":
        installation = kscope.torch.install()
    selections = []
    choose = select_algorithm.AlgorithmSelectorCache.__dict__["benchmark_choices"]

    def observed(cls, choices, autotune_args, *args, **kwargs):
        started = time.perf_counter()
        timings = choose.__func__(cls, choices, autotune_args, *args, **kwargs)
        label = {c: f"{c.name} ({getattr(c, 'description', '')})" for c in timings}
        selections.append({"timings": {label[c]: t for c, t in timings.items()},
                           "chosen": label[min(timings, key=timings.__getitem__)],
                           "tuning_s": time.perf_counter() - started})
        return timings

    select_algorithm.AlgorithmSelectorCache.benchmark_choices = classmethod(observed)
    a = torch.randn(size, size, device="cuda", dtype=torch.float16)
    b = torch.randn(size, size, device="cuda", dtype=torch.float16)
    bias = torch.randn(size, device="cuda", dtype=torch.float16)
    compiled = torch.compile(lambda a, b, bias: torch.relu(a @ b + bias), mode="max-autotune-no-cudagraphs")
    started = time.perf_counter()
    compiled(a, b, bias)
    torch.cuda.synchronize()
    compile_s = time.perf_counter() - started
    out = {"selections": selections, "compile_s": compile_s}
    if installation is not None:
        installation.uninstall()
        raced = [d for d in installation.decisions if d.race is not None]
        out["ties"] = raced[0].ties if raced else []
    if not reference:
        out["program_ms"] = kscope.triton.do_bench(lambda: compiled(a, b, bias), warmup=100, rep=long_run_ms,
                                                   return_mode="median")
    return out


def run_in_child(task, answer):
    try:
        answer.send(("ok", globals()[task[0]](*task[1:])))
    except BaseException:
        answer.send(("error", traceback.format_exc()))
    answer.close()


# ---- the parent ----------------------------------------------------------------------------------

class Runner:
    """Fresh processes from a forkserver that has imported torch and Triton, within a deadline."""

    def __init__(self, deadline_s):
        self.context = multiprocessing.get_context("forkserver")
        self.context.set_forkserver_preload(["torch", "triton"])
        self.started = time.perf_counter()
        self.deadline_s = deadline_s

    def left_s(self):
        return self.deadline_s - (time.perf_counter() - self.started)

    def run(self, *task, timeout_s=300):
        """task[0] (a function of this script) of task[1:] in a fresh process: (its value, None) or (None, why not)."""
        reader, writer = self.context.Pipe(duplex=False)
        child = self.context.Process(target=run_in_child, args=(task, writer))
        child.start()
        writer.close()
        status, value = "error", f"{task[0]} did not answer in time"
        if reader.poll(max(1.0, min(timeout_s, self.left_s()))):
            try:
                status, value = reader.recv()
            except EOFError:
                child.join(30)
                value = f"{task[0]} exited with {child.exitcode} and no answer"
        child.join(30)
        if child.is_alive():
            child.kill()
            child.join()
        return (value, None) if status == "ok" else (None, value)


def summary(results, long_run, best_ms, chosen_ms_of):
    winners = [r["winner"] for r in results]
    counts = collections.Counter(winners)
    chosen = [chosen_ms_of(r) for r in results]
    ratios = [ms / best_ms for ms in chosen if ms is not None]
    distinct_ms = [long_run[w] for w in counts if w in long_run]
    return {
        "processes": len(results), "distinct_winners": len(counts),
        "top_share": counts.most_common(1)[0][1] / len(results) if results else 0.0,
        "winners": dict(counts),
        "winners_within_threshold": bool(distinct_ms) and max(distinct_ms) / min(distinct_ms) <= THRESHOLD,
        "ties_declared": sum(bool(r.get("ties")) for r in results),
        "tuning_s_median": statistics.median(r["tuning_s"] for r in results) if results else None,
        "chosen_vs_best_median": statistics.median(ratios) if ratios else None,
        "chosen_vs_best_worst": max(ratios) if ratios else None,
        "within_1pct": sum(r <= 1.01 for r in ratios),
    }


def take_turns(runner, ways, processes, task_of, reserve_s=0.0):
    """Each way's fresh processes, ways taking turns, while the deadline allows (the slowest way's
    process so far, plus reserve_s, must fit)."""
    results = {way: [] for way in ways}
    errors = []
    took = {way: [] for way in ways}
    for i in range(processes):
        for way in ways:
            need = max((max(t) for t in took.values() if t), default=30.0) + reserve_s
            if runner.left_s() < need:
                return results, errors, took
            started = time.perf_counter()
            value, error = runner.run(*task_of(way))
            took[way].append(time.perf_counter() - started)
            if error:
                errors.append(f"{way} #{i + 1}: {error}")
            else:
                results[way].append(value)
    return results, errors, took


def part_triton(runner, options, report):
    timing = {}
    started = time.perf_counter()
    value, error = runner.run("compile_configs", options.size)
    timing["warm-up (compile every config)"] = time.perf_counter() - started
    if error:
        report["errors"].append(f"triton warm-up: {error}")
        return
    started = time.perf_counter()
    long_run, error = runner.run("triton_reference", options.size, options.long_run_ms)
    timing["reference (every config, long run)"] = time.perf_counter() - started
    if error:
        report["errors"].append(f"triton reference: {error}")
        return
    best = min(long_run, key=long_run.get)
    reserve = options.inductor_reserve_s if "inductor" in options.parts else 0.0
    results, errors, took = take_turns(runner, WAYS["triton"], options.processes,
                                       lambda way: ("triton_tune", way, options.size), reserve)
    report["errors"] += errors
    for way in WAYS["triton"]:
        timing[f"{way}: a process (mean)"] = statistics.mean(took[way]) if took[way] else 0.0
    report["triton"] = {"best": best, "best_ms": long_run[best], "long_run_ms": long_run, "timing_s": timing,
                        "ways": {way: summary(results[way], long_run, long_run[best],
                                              lambda r: long_run.get(r["winner"]))
                                 for way in WAYS["triton"]},
                        "runs": results}


def compile_configs(size):
    compile_all(size)
    return True


def part_inductor(runner, options, report):
    timing = {}
    started = time.perf_counter()
    reference, error = runner.run("inductor_compile", "reference", options.mm_size, options.long_run_ms,
                                  options.compile_threads, True, timeout_s=420)
    timing["reference (warm-up; every candidate, long run)"] = time.perf_counter() - started
    if error:
        report["errors"].append(f"inductor reference: {error}")
        return
    candidates = reference["selections"][0]["timings"] if reference["selections"] else {}
    best = min(candidates, key=candidates.get) if candidates else None
    results, errors, took = take_turns(runner, WAYS["inductor"], options.processes,
                                       lambda way: ("inductor_compile", way, options.mm_size, options.long_run_ms,
                                                    options.compile_threads))
    report["errors"] += errors
    for way in WAYS["inductor"]:
        timing[f"{way}: a process (mean)"] = statistics.mean(took[way]) if took[way] else 0.0
        timing[f"{way}: its compile (mean)"] = (statistics.mean(r["compile_s"] for r in results[way])
                                                if results[way] else 0.0)
    flat = {}
    for way in WAYS["inductor"]:
        flat[way] = [{"winner": r["selections"][0]["chosen"] if r["selections"] else "(no choice)",
                      "tuning_s": sum(s["tuning_s"] for s in r["selections"]), "program_ms": r["program_ms"],
                      "compile_s": r["compile_s"], "ties": r.get("ties", [])} for r in results[way]]
    fastest_program = min((r["program_ms"] for rs in flat.values() for r in rs), default=None)
    report["inductor"] = {
        "best_candidate": best, "best_candidate_ms": candidates.get(best), "candidates_ms": candidates,
        "fastest_program_ms": fastest_program, "timing_s": timing,
        "ways": {way: {**summary(flat[way], candidates, candidates[best], lambda r: candidates.get(r["winner"])),
                       "program_ms_median": statistics.median(r["program_ms"] for r in flat[way]) if flat[way] else None,
                       "program_vs_fastest_worst": (max(r["program_ms"] for r in flat[way]) / fastest_program
                                                    if flat[way] else None)}
                 for way in WAYS["inductor"]},
        "runs": flat}


def show(report):
    gpu = report.get("gpu", "?")
    print(f"Tuners' choices over fresh processes on {gpu} (threshold {100 * (THRESHOLD - 1):.0f}%)")
    header = (f"{'way':<30}{'procs':>6}{'distinct':>9}{'top share':>10}{'in thr.':>8}{'ties':>6}{'tune s':>8}"
              f"{'chosen/best med':>16}{'worst':>8}{'<=1%':>6}")
    for part in ("triton", "inductor"):
        if part not in report:
            continue
        p = report[part]
        print(f"\n[{part}] best: {p.get('best') or p.get('best_candidate')} "
              f"({p.get('best_ms') or p.get('best_candidate_ms'):.4f} ms long-run)")
        print(header)
        for way, s in p["ways"].items():
            def num(v, f):
                return format(v, f) if v is not None else "-"
            print(f"{way:<30}{s['processes']:>6}{s['distinct_winners']:>9}{s['top_share']:>10.0%}"
                  f"{'yes' if s['winners_within_threshold'] else 'no':>8}{s['ties_declared']:>6}"
                  f"{num(s['tuning_s_median'], '.2f'):>8}{num(s['chosen_vs_best_median'], '.4f'):>16}"
                  f"{num(s['chosen_vs_best_worst'], '.4f'):>8}{s['within_1pct']:>6}")
            print(f"{'':<30}winners: {s['winners']}")
            if "program_ms_median" in s:
                print(f"{'':<30}compiled program: median {num(s['program_ms_median'], '.4f')} ms, worst "
                      f"{num(s['program_vs_fastest_worst'], '.4f')}x the fastest program of any process")
        print("  time: " + "; ".join(f"{k} {v:.1f} s" for k, v in p["timing_s"].items()))
    for error in report["errors"]:
        print(f"ERROR {error}")
    print(f"total {report['total_s']:.0f} s")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", default="triton,inductor")
    parser.add_argument("--processes", type=int, default=20, help="fresh processes per way")
    parser.add_argument("--size", type=int, default=4096, help="the Triton matmul's M = N = K")
    parser.add_argument("--mm-size", type=int, default=4096, help="torch.compile's matmul: M = N = K")
    parser.add_argument("--long-run-ms", type=float, default=500.0, help="each long-run measurement's duration")
    parser.add_argument("--deadline-s", type=float, default=540.0, help="no process starts that would end after it")
    parser.add_argument("--inductor-reserve-s", type=float, default=200.0,
                        help="of the deadline, kept for the inductor part while the triton part runs")
    parser.add_argument("--compile-threads", type=int, default=1,
                        help="Inductor's compile_threads in each process (1: no pool of compile workers)")
    parser.add_argument("--json")
    options = parser.parse_args()
    options.parts = [p for p in options.parts.split(",") if p]
    unknown = set(options.parts) - set(WAYS)
    if unknown:
        parser.error(f"--parts takes {', '.join(WAYS)}, not {', '.join(sorted(unknown))}")
    runner = Runner(options.deadline_s)
    import torch

    report = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "options": vars(options), "errors": []}
    try:
        import triton

        report["triton_version"] = triton.__version__
    except ImportError:
        pass
    if "triton" in options.parts:
        part_triton(runner, options, report)
    if "inductor" in options.parts:
        part_inductor(runner, options, report)
    report["total_s"] = time.perf_counter() - runner.started
    show(report)
    if options.json:
        with open(options.json, "w") as f:
            json.dump(report, f, indent=1, default=str)
    return 1 if report["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
