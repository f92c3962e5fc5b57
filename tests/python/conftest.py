"""Finds the kscope package (installed, or the build tree's build/python), registers the gpu
marker, gives CPU tests the simulated backend, and names the Debian package of a missing module."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "python"
PACKAGES = ROOT / "scripts" / "debian-packages.txt"
# KSCOPE_SIMULATED=1 would route every profiled call of this process to the simulated backend: the
# tests choose their backend themselves (examples run under it in a process of their own).
os.environ.pop("KSCOPE_SIMULATED", None)


def package_for(what):
    """The package of scripts/debian-packages.txt that provides `what` ("import:NAME", "program:NAME")."""
    for line in PACKAGES.read_text().splitlines():
        fields = line.split()
        if fields and not line.startswith("#") and what in fields[2:]:
            return fields[0]
    raise LookupError(f"scripts/debian-packages.txt names no package providing {what}")


def missing_reason(what):
    package = package_for(what)
    return (f"{what.split(':', 1)[1]} is not installed: apt-get install {package} "
            f"(bash scripts/test.sh installs it when run as root)")


def need(module):
    """The module, imported; the test is skipped naming its Debian package where it is not installed."""
    top = module.split(".")[0]
    return pytest.importorskip(module, reason=missing_reason(f"import:{top}"))


def need_metric_database():
    """Skips the test where CUPTI's host API (the offline metric database) cannot load, saying why."""
    try:
        kscope.count_passes(["gpu__time_duration.sum"], "GH100")
    except kscope.BackendError as e:
        pytest.skip(f"no metric database here: {e}")


for _required in ("numpy", "pandas"):  # kscope's own dependencies: no test runs without them
    try:
        __import__(_required)
    except ImportError:
        raise RuntimeError(f"kscope needs {_required}: {missing_reason(f'import:{_required}')}") from None

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
        return f"GPU test: {missing_reason('import:torch')}"
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
