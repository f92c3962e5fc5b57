"""Finds the kscope package (installed, or the build tree's build/python), registers the gpu
marker and gives CPU tests the simulated backend."""

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "python"

try:
    import kscope  # noqa: F401
except ImportError:
    build = ROOT / os.environ.get("KSCOPE_BUILD_DIR", "build") / "python"
    if not (build / "kscope").is_dir():
        raise RuntimeError(
            f"kscope is neither installed nor built in {build}: build it (bash scripts/test.sh, or "
            f"cmake --build <dir> --target _core and set KSCOPE_BUILD_DIR=<dir>) or pip install ."
        ) from None
    sys.path.insert(0, str(build))

import kscope.testing  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU, torch (and triton where used); skipped otherwise")


def gpu_skip_reason():
    try:
        import torch
    except ImportError:
        return "GPU test: torch is not installed"
    if not torch.cuda.is_available():
        return "GPU test: no CUDA device visible to torch"
    return None


def pytest_collection_modifyitems(config, items):
    reason = None
    for item in items:
        if "gpu" in item.keywords:
            reason = reason or gpu_skip_reason()
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture
def sim():
    with kscope.testing.simulated_backend() as backend:
        yield backend


@pytest.fixture(autouse=True)
def no_tool_from_the_environment(monkeypatch):
    """KSCOPE_TOOL of the shell running the tests chooses no backend in them; tests set it themselves."""
    monkeypatch.delenv("KSCOPE_TOOL", raising=False)
