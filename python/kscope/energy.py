"""Energy per run (docs/energy.md): the metric names to ask for, and FLOP/J and bytes/J.

    @kscope.analyze.kernel(configs=[4096, 8192], metrics=kscope.energy_metrics(),
                           derive_metric=lambda ns, joules, watts, above_idle, n:
                               kscope.energy_efficiency(joules, flop=2 * n**3))
"""

from __future__ import annotations

import numbers

from . import _core
from .errors import ConfigError

__all__ = ["energy_efficiency", "energy_metrics"]


def energy_metrics() -> list[str]:
    """nvml__energy_per_run (J), nvml__average_power (W), nvml__energy_above_idle (J): measured
    from the GPU's energy counter beside the durations of the same runs."""
    return list(_core.energy_metrics())


def energy_efficiency(energy_j: float, flop: float = 0, bytes: float = 0) -> dict[str, tuple[float, str]]:
    """{'flop_per_joule': (value, 'FLOP/J'), 'bytes_per_joule': (value, 'B/J')} for the work
    given (flop, bytes per run; 0 leaves it out) and a run's energy in J: a derive_metric result.
    A NaN energy (a failed run's) gives NaN values; a negative or zero energy, or negative work, is a
    ConfigError."""
    energy = _number("energy_j", energy_j, "a run's energy in J, e.g. the nvml__energy_per_run value")
    if energy <= 0:
        raise ConfigError(f"energy_efficiency: energy_j is {energy_j!r}, but a run's energy is positive: give the "
                          f"run's nvml__energy_per_run value in J")
    work = [_number(name, value, "the work of one run, >= 0") for name, value in (("flop", flop), ("bytes", bytes))]
    for name, value in zip(("flop", "bytes"), work):
        if not value >= 0:
            raise ConfigError(f"energy_efficiency: {name} is {value!r}: give the {name} of one run, a number >= 0")
    return {name: (value, unit) for name, value, unit in _core.energy_efficiency(energy, *work)}


def _number(name: str, value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ConfigError(f"energy_efficiency: {name} must be a number ({what}), not {value!r}"[:300])
    try:
        return float(value)
    except OverflowError:
        raise ConfigError(f"energy_efficiency: {name} is beyond a float's range") from None
