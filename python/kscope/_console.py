"""Where the engine's messages reach Python (kscope._core installs this module as its log sink):
warnings through the warnings module, in kscope's categories, attributed to the user's code that
called kscope; information and progress through sys.stderr, whatever it is at the time (a notebook's
stream, contextlib.redirect_stderr's target)."""

from __future__ import annotations

import os
import sys
import warnings

from .errors import ProfilerWarning, SweepWarning

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_CATEGORIES = {"setup": ProfilerWarning, "run": SweepWarning}


def _outside_kscope() -> int:
    """The stacklevel, for a warnings.warn in a function of this package called by the one
    asking, of the first frame outside kscope (1 when the stack holds only kscope's)."""
    level, frame = 2, sys._getframe(1).f_back  # the asking function's caller
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level if frame is not None else 1


def warn(kind: str, message: str) -> None:
    """An engine warning; kind 'setup' (ProfilerWarning) or 'run' (SweepWarning)."""
    warnings.warn(message, _CATEGORIES[kind], stacklevel=_outside_kscope())


def write(text: str) -> None:
    """Console text as the engine wrote it (lines, or a progress bar's redraws)."""
    stream = sys.stderr
    if stream is None:  # pythonw: no console
        return
    try:
        stream.write(text)
        stream.flush()
    except (OSError, ValueError):  # closed or broken: the text is lost, the sweep goes on
        pass


def is_terminal() -> bool:
    """Whether sys.stderr is a terminal (the progress bar then redraws in place)."""
    try:
        return bool(sys.stderr is not None and sys.stderr.isatty())
    except (AttributeError, OSError, ValueError):
        return False
