"""What a PyTorch side stream does to a kernel's measured duration: torch.add of 2^24 floats inside
kscope.annotate, 30 runs, the median of cupti__kernel_duration, launched on the default stream, on a
side stream (`with torch.cuda.stream(s)`: a non-blocking stream), and on a side stream joined both
ways, with cache_control all and none. A kernel that runs beside kscope's L2 flush reads slow.

Prints one line per figure, then the table:
  PY side_stream <cache_control> <launch> median_ns X
Needs torch with CUDA and the kscope package on PYTHONPATH.
"""

from __future__ import annotations

import torch

import kscope

N = 1 << 24
RUNS = 30
a = torch.ones(N, device="cuda")
b = torch.ones(N, device="cuda")
c = torch.empty(N, device="cuda")
side = torch.cuda.Stream()


def default() -> None:
    torch.add(a, b, out=c)


def side_stream() -> None:
    with torch.cuda.stream(side):
        torch.add(a, b, out=c)


def joined() -> None:
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.add(a, b, out=c)
    torch.cuda.current_stream().wait_stream(side)


LAUNCHES = {"default": default, "side": side_stream, "joined": joined}


def median_ns(launch, cache: str) -> float:
    @kscope.analyze.kernel(configs=[(N,)], runs=RUNS, backend="cupti", cache_control=cache, verbosity="silent")
    def f(n):
        with kscope.annotate("add"):
            launch()

    return float(f().to_dataframe()["Median"].iloc[0])


def main() -> None:
    default()
    torch.cuda.synchronize()
    table = {}
    for cache in ("all", "none"):
        for name, launch in LAUNCHES.items():
            table[cache, name] = median_ns(launch, cache)
            print(f"PY side_stream {cache} {name} median_ns {table[cache, name]:.0f}", flush=True)
    print(f"{'cache_control':<14}" + "".join(f"{name:>16}" for name in LAUNCHES))
    for cache in ("all", "none"):
        base = table[cache, "default"]
        cells = "".join(f"{table[cache, n]:>9.0f} ({100 * (table[cache, n] / base - 1):+4.1f}%)" for n in LAUNCHES)
        print(f"{cache:<14}{cells}")


if __name__ == "__main__":
    main()
