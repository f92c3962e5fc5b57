"""A sweep whose durations depend only on the config and how often it ran (deterministic, so a
resumed sweep must reproduce an uninterrupted one exactly), for the tests that kill or interrupt
it. Run as a script, it profiles the sweep in a child process for a test to kill or interrupt:

    python3 durable_workload.py PREFIX CONFIGS DELAY_S [resume] [long:N]

It prints one JSON line: what the call returned or raised. With long:N, config N's first call
prints "long config started" and sleeps for a minute (a long config after quick ones).
"""

import json
import sys
import time

import kscope


def make(sim, prefix, configs, resume=False, delay_s=0.0, long_config=None, **options):
    """The profiled function `durable` over n = 1..configs, and the list of its body calls."""
    calls = []
    per_config = {}

    @kscope.analyze.kernel(configs=[(n,) for n in range(1, configs + 1)], runs=3, output_prefix=prefix,
                           resume=resume, verbosity=0, **options)
    def durable(n):
        k = per_config.get(n, 0)
        per_config[n] = k + 1
        calls.append(n)
        if delay_s:
            time.sleep(delay_s)
        if n == long_config and k == 0:
            print("long config started", flush=True)
            time.sleep(60)
        with kscope.annotate("k"):
            sim.launch("kern", 100.0 * n + k % 5)

    return durable, calls


if __name__ == "__main__":
    prefix, configs, delay_s = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    with kscope.testing.simulated_backend() as sim:
        long_config = next((int(a[5:]) for a in sys.argv[4:] if a.startswith("long:")), None)
        f, calls = make(sim, prefix, configs, resume="resume" in sys.argv[4:], delay_s=delay_s, long_config=long_config)
        try:
            rows = len(f().to_dataframe())
            print(json.dumps({"outcome": "finished", "rows": rows, "calls": len(calls)}), flush=True)
        except kscope.SweepInterrupted as e:
            print(json.dumps({"outcome": type(e).__name__, "keyboard_interrupt": isinstance(e, KeyboardInterrupt),
                              "rows": len(e.partial_results.to_dataframe()), "calls": len(calls),
                              "message": str(e)}), flush=True)
