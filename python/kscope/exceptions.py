"""kscope's exception classes under the module name Nsight Python code imports them from::

    from kscope.exceptions import ProfilerException      # was: from nsight.exceptions import ...

Every class of kscope.errors is here, and Nsight Python's other exception names as aliases of the
kscope class raised for the same situation (docs/from-nsight-python.md lists the rest).
"""

from .errors import *  # noqa: F401,F403
from .errors import BackendError, ThermalError
from .errors import __all__ as _kscope_classes

# Nsight raises it when the ncu CLI is missing or lacks permissions; kscope's BackendError covers
# both (backend='ncu' without ncu, ERR_NVGPUCTRPERM for the counters) and every other reason
# nothing can measure here (no GPU, CUPTI owned by another profiler).
NCUNotAvailableError = BackendError
# The thermal guard's timeout (thermal_mode='manual'): kscope raises ThermalError.
ThermalControlError = ThermalError
CoolingTimeoutError = ThermalError

__all__ = [*_kscope_classes, "CoolingTimeoutError", "NCUNotAvailableError", "ThermalControlError"]
