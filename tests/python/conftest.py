"""Finds the kscope package (installed, or the build tree's build/python), registers the gpu
marker and gives CPU tests the simulated backend."""

import os
import subprocess
import sys
import tempfile
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
def unprivileged():
    """(a scratch directory, run(code, *args)): Python code run as a user whom file permissions
    bind, the tests' own or 'nobody' where they run as root (who may write anywhere), with this
    kscope importable; the directory (world-writable, under the system's temporary directory) is one
    that user reaches. Skips where that user cannot import kscope."""
    user = "nobody" if os.geteuid() == 0 else None
    package = str(Path(kscope.__file__).resolve().parents[1])

    def run(code, *args):
        return subprocess.run([sys.executable, "-c", code, *map(str, args)], user=user, text=True,
                              capture_output=True, env=dict(os.environ, PYTHONPATH=package))

    if run("import kscope").returncode != 0:
        pytest.skip(f"the user {user} cannot import the kscope package under {package}")
    with tempfile.TemporaryDirectory() as scratch:
        Path(scratch).chmod(0o777)
        yield Path(scratch), run


@pytest.fixture
def sim():
    with kscope.testing.simulated_backend() as backend:
        yield backend


@pytest.fixture(autouse=True)
def no_tool_from_the_environment(monkeypatch):
    """KSCOPE_TOOL of the shell running the tests chooses no backend in them; tests set it themselves."""
    monkeypatch.delenv("KSCOPE_TOOL", raising=False)
