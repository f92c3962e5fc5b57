"""Energy per run (README "Energy"): the metric names to ask for, and FLOP/J and bytes/J.

    @kscope.analyze.kernel(configs=[4096, 8192], metrics=kscope.energy_metrics(),
                           derive_metric=lambda ns, joules, watts, above_idle, n:
                               kscope.energy_efficiency(joules, flop=2 * n**3))
"""

from __future__ import annotations

from . import _core

__all__ = ["energy_efficiency", "energy_metrics"]


def energy_metrics() -> list[str]:
    """nvml__energy_per_run (J), nvml__average_power (W), nvml__energy_above_idle (J): measured
    from the GPU's energy counter beside the durations of the same runs."""
    return list(_core.energy_metrics())


def energy_efficiency(energy_j: float, flop: float = 0, bytes: float = 0) -> dict[str, tuple[float, str]]:
    """{'flop_per_joule': (value, 'FLOP/J'), 'bytes_per_joule': (value, 'B/J')} for the work
    given (flop, bytes per run; 0 leaves it out) and a run's energy in J: a derive_metric result."""
    return {name: (value, unit) for name, value, unit in _core.energy_efficiency(energy_j, flop, bytes)}
