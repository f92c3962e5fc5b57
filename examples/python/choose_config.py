"""Choosing a config with kscope.tune: how many pieces should a vector add be split into?

Each config launches its own kernels (more pieces: more, shorter kernels, and a gap between
them), timed as one range. kscope.tune races the configs: those clearly slower after 10 runs are
dropped, the rest race on, and the finalists run interleaved; the answer is a winner, the configs
within 2% of it (ties), and what the race cost against measuring every config 100 times.

Run: python examples/python/choose_config.py
"""

import kscope
from kscope.testing import workloads

N = 1 << 24


def split_add(pieces):
    x, y = workloads.vectors(N)  # outside the region: not measured
    with kscope.annotate("add"):
        workloads.split_add(x, y, pieces)


def main():
    race = kscope.tune(split_add, configs=[1, 2, 4, 8, 16, 32, 64], runs=100)
    print(race)
    print(f"winner: {race.winner}, ties: {race.ties}, confidence {race.confidence:.0%}; "
          f"{race.cost['runs']} runs of the exhaustive sweep's {race.cost['exhaustive_runs']}")
    return race


if __name__ == "__main__":
    main()
