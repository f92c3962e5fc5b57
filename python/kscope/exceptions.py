"""kscope's exception classes under the module name Nsight Python code imports them from::

    from kscope.exceptions import ProfilerException      # was: from nsight.exceptions import ...

Every class of kscope.errors that derives from ProfilerException is here, including classes
added there later. Nsight Python's other exception names are aliases of the kscope class raised
for the same situation, defined only where kscope has one (docs/from-nsight-python.md lists the
rest).
"""

from typing import TYPE_CHECKING

from . import errors as _errors

if TYPE_CHECKING:  # what the loop below defines, spelled out for type checkers and IDEs
    from .errors import *  # noqa: F401,F403

_KSCOPE_CLASSES = {
    name: value
    for name, value in vars(_errors).items()
    if isinstance(value, type) and issubclass(value, _errors.ProfilerException)
}

# Nsight Python name -> the kscope class raised where Nsight Python raises it.
_NSIGHT_ALIASES = {
    # Nsight raises it when the ncu CLI is missing or lacks permissions; kscope's BackendError
    # covers both (backend='ncu' without ncu, ERR_NVGPUCTRPERM for the counters) and every
    # other reason nothing can measure here (no GPU, CUPTI owned by another profiler).
    "NCUNotAvailableError": "BackendError",
    # The thermal guard's timeout. kscope's engine raises ThermalError for it; these aliases
    # appear once kscope.errors has a ThermalError class (until then the error arrives as
    # ProfilerException, which is too broad to alias: it would catch every kscope error).
    "ThermalControlError": "ThermalError",
    "CoolingTimeoutError": "ThermalError",
}

_ALIASES = {
    nsight: _KSCOPE_CLASSES[kscope]
    for nsight, kscope in _NSIGHT_ALIASES.items()
    if kscope in _KSCOPE_CLASSES and nsight not in _KSCOPE_CLASSES
}

globals().update(_KSCOPE_CLASSES)
globals().update(_ALIASES)

__all__ = sorted([*_KSCOPE_CLASSES, *_ALIASES])
