"""The extension module as the dynamic loader sees it: one shared libstdc++ and no process-wide
(STB_GNU_UNIQUE) symbols, which let torch's libstdc++ bind to kscope's copies (issue 3)."""

import shutil
import subprocess
import sys

import pytest

import kscope._core

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or not shutil.which("readelf"),
                                reason="needs Linux and readelf (binutils)")


def readelf(*args):
    return subprocess.run(["readelf", "-W", *args, kscope._core.__file__], capture_output=True, text=True,
                          check=True).stdout


def test_links_the_shared_libstdcxx():
    assert "[libstdc++.so.6]" in readelf("-d"), (
        f"{kscope._core.__file__} has libstdc++ linked in statically: build it with the shared one")


def test_exports_no_unique_symbols():
    unique = [line.split()[-1] for line in readelf("--dyn-syms").splitlines() if " UNIQUE " in line]
    assert not unique, f"{len(unique)} STB_GNU_UNIQUE symbols exported, e.g. {unique[:3]}"
