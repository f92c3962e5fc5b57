"""Where ``kscope.triton.autotune`` keeps its choices for later processes: one JSON file per kernel,
tuning key and everything that could change the choice, in a folder of Triton's cache (``TRITON_CACHE_DIR``,
~/.triton/cache by default) named by the hash of those things, as Triton names its own entries.

The hash covers kscope's version, Triton's (``triton_key``), the compilation target, the kernel's
source and what it calls (``JITFunction.cache_key``), Triton's cache-invalidating environment
variables, the GPU (name, multiprocessors, memory) and the NVIDIA driver, the tuning key, the configs
(and their pre_hooks' names) and the race's options: a change of any of them reads no old choice.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import tempfile
from collections.abc import Sequence
from typing import Any

from . import _console
from ._core import __version__

FORMAT = "kscope.triton.autotune choice 1"


def triton_fingerprint(jit_fn: Any) -> list[str]:
    """What Triton's own autotune cache keys on (Triton 3.6's Autotuner.check_disk_cache): its
    version, the compilation target, the kernel's source with its dependencies, the environment."""
    from triton._C.libtriton import get_cache_invalidating_env_vars
    from triton.compiler.compiler import make_backend
    from triton.runtime.cache import triton_key
    from triton.runtime.driver import driver

    return [triton_key(), make_backend(driver.active.get_current_target()).hash(), jit_fn.cache_key,
            str(sorted(get_cache_invalidating_env_vars().items()))]


def triton_cache_dir() -> str:
    from triton import knobs

    return str(knobs.cache.dir)


def gpu_identity() -> list[str]:
    """The current CUDA device (name, multiprocessors, memory) and the NVIDIA driver's version."""
    import torch

    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return [props.name, f"{props.multi_processor_count} SMs", f"{props.total_memory} bytes", driver_version()]


def driver_version() -> str:
    """The NVIDIA driver's version from NVML ('580.65.06'); CUDA's driver API version where NVML is
    missing."""
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
        if nvml.nvmlInit_v2() == 0:
            try:
                text = ctypes.create_string_buffer(96)
                if nvml.nvmlSystemGetDriverVersion(text, ctypes.c_uint(96)) == 0:
                    return text.value.decode()
            finally:
                nvml.nvmlShutdown()
    except (OSError, AttributeError):
        pass
    import torch

    return f"CUDA driver API {getattr(torch._C, '_cuda_getDriverVersion')()}"


def config_text(config: Any) -> str:
    """A config as the cache compares it: its str (Triton's lists every field) and its pre_hook's name."""
    hook = getattr(config, "pre_hook", None)
    return str(config) + (f", pre_hook: {getattr(hook, '__module__', '')}.{getattr(hook, '__qualname__', hook)}"
                          if hook else "")


class ChoiceCache:
    """The choices of one autotuned kernel on disk. `fingerprint`: the kernel's and the machine's
    identity (triton_fingerprint + gpu_identity), `directory`: Triton's cache folder."""

    def __init__(self, directory: str, name: str, fingerprint: Sequence[str]) -> None:
        self.directory = directory
        self.name = name[:150]
        self.fingerprint = list(fingerprint)

    def path(self, key: tuple[Any, ...], configs: Sequence[Any], options: dict[str, Any]) -> str:
        parts = [FORMAT, __version__, *self.fingerprint, str(key), json.dumps(options, sort_keys=True, default=str)]
        parts += [config_text(c) for c in configs]
        digest = hashlib.sha256("-".join(parts).encode()).hexdigest()
        return os.path.join(self.directory, digest, f"{self.name}.kscope-choice.json")

    def load(self, path: str, configs: Sequence[Any]) -> dict[str, Any] | None:
        """The entry at path when it names one of these configs; None when there is none. A file that
        cannot be read, or names another config, is warned of and raced again."""
        try:
            with open(path, encoding="utf-8") as f:
                entry = json.load(f)
            index = entry["config_index"]
            if entry.get("format") != FORMAT or not 0 <= index < len(configs) or \
                    entry["config"] != config_text(configs[index]):
                raise ValueError(f"it names config {index}: {entry.get('config')!r}, not one of these configs")
        except (FileNotFoundError, NotADirectoryError):
            return None
        except (OSError, ValueError, KeyError, TypeError) as e:
            _console.warn("setup", f"kscope.triton.autotune: the cached choice {path} cannot be used ({e}); "
                                   f"the configs are raced again and the file replaced")
            return None
        return entry

    def store(self, path: str, entry: dict[str, Any]) -> str | None:
        """Writes the entry (a new file moved into place: a reader never sees half of it, and a link
        at the path is replaced, never written through); returns the path, or None with a warning
        when it cannot be written: the choice stands in this process."""
        folder = os.path.dirname(path)
        try:
            os.makedirs(folder, exist_ok=True)
            fd, temporary = tempfile.mkstemp(prefix=".kscope-choice-", dir=folder)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump({"format": FORMAT, **entry}, f, indent=1, default=str)
                os.replace(temporary, path)
            except BaseException:
                os.unlink(temporary)
                raise
        except OSError as e:
            _console.warn("setup", f"kscope.triton.autotune: the choice could not be kept in {path} ({e}); "
                                   f"later processes race the configs again (set TRITON_CACHE_DIR to a writable "
                                   f"folder, or cache_results=False)")
            return None
        return path
