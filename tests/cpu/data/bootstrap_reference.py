"""Reference intervals for test_significance.cpp: median_ratio_interval written again in Python.

std::mt19937_64 is implemented from the C++ standard's definition, so the intervals printed here
are what every conforming standard library must give. Run: /usr/bin/python3 bootstrap_reference.py
"""
import math

MASK = (1 << 64) - 1


class MT19937_64:
    def __init__(self, seed):
        self.state = [seed & MASK]
        for i in range(1, 312):
            prev = self.state[-1]
            self.state.append((6364136223846793005 * (prev ^ (prev >> 62)) + i) & MASK)
        self.index = 312

    def __call__(self):
        if self.index == 312:
            for i in range(312):
                y = (self.state[i] & ~0x7FFFFFFF & MASK) | (self.state[(i + 1) % 312] & 0x7FFFFFFF)
                self.state[i] = self.state[(i + 156) % 312] ^ (y >> 1) ^ (0xB5026F5AA96619E9 if y & 1 else 0)
            self.index = 0
        y = self.state[self.index]
        self.index += 1
        y ^= (y >> 29) & 0x5555555555555555
        y ^= (y << 17) & 0x71D67FFFEDA60000
        y ^= (y << 37) & 0xFFF7EEE000000000
        y ^= y >> 43
        return y


def draw_index(gen, n):
    limit = MASK - MASK % n
    while True:
        x = gen()
        if x < limit:
            return x % n


def median(values):
    v = sorted(values)
    half = len(v) // 2
    return v[half] if len(v) % 2 else (v[half - 1] + v[half]) / 2


def interval(baseline, candidate, confidence, resamples, seed):
    base, cand = sorted(baseline), sorted(candidate)
    gen = MT19937_64(seed)
    ratios = []
    for _ in range(resamples):
        b = median([base[draw_index(gen, len(base))] for _ in base])
        c = median([cand[draw_index(gen, len(cand))] for _ in cand])
        ratios.append(c / b)
    ratios.sort()
    tail = math.floor((resamples + 1) * (1 - confidence) / 2 + 1e-9)
    return ratios[tail - 1], ratios[resamples - tail]


if __name__ == "__main__":
    # The standard's check of mt19937_64: the 10000th output of the default seed.
    gen = MT19937_64(5489)
    for _ in range(9999):
        gen()
    assert gen() == 9981545732273789042
    baseline = [101.3, 99.8, 100.4, 102.9, 98.7, 100.1, 103.5, 99.2, 100.9]
    candidate = [104.2, 106.8, 103.1, 105.5, 107.9, 104.8, 103.9, 106.1, 105.0, 108.4]
    for seed, confidence, resamples in [(5489, 0.95, 2000), (7, 0.90, 999)]:
        lower, upper = interval(baseline, candidate, confidence, resamples, seed)
        print(f"seed {seed}, confidence {confidence}, resamples {resamples}: {lower!r} {upper!r}")
