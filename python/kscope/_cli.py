"""The console command ``kscope`` that pip installs: it runs the C++ program bundled in
kscope/bin/, the same ``kscope`` a CMake build makes (tools/kscope_cli.cpp), with the same
arguments and exit status; ``kscope evaluate``, which is Python's, it runs here."""

import os
import signal
import sys
from pathlib import Path

PROGRAM = Path(__file__).resolve().parent / "bin" / "kscope"

# What `kscope doctor` answers when nothing can measure: a build without CUDA cannot measure either.
NOTHING_CAN_MEASURE = 2


def main() -> int:
    if sys.argv[1:2] == ["evaluate"]:
        from ._evaluate_cli import main as evaluate

        return evaluate(sys.argv[2:])
    if not os.access(PROGRAM, os.X_OK):
        sys.stderr.write(
            f"kscope: this installation has no kscope program ({PROGRAM}): reinstall kscope from its "
            "source directory (pip install --no-build-isolation --no-deps .), which builds and bundles it\n")
        return NOTHING_CAN_MEASURE
    # Python ignores SIGPIPE, and an ignored signal stays ignored across exec: give the program the
    # default back, so that `kscope ... | head` ends it as it ends any Unix tool (and as the CMake
    # build's kscope, started by a shell, is ended).
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    os.execv(PROGRAM, [str(PROGRAM), *sys.argv[1:]])
