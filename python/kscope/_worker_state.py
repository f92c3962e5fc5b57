"""What a candidate may leave behind in the worker process that measures it, checked and put back
before the next candidate: the GPU's state (a usable context, the current device and stream, the
persisting-L2 limit, memory) and the process's (timers and torch's numeric settings a candidate may
patch, which would change the next candidates' findings or their references' results)."""

from __future__ import annotations

import ctypes
import gc
import sys
import time
from typing import Any

# The driver API's CU_LIMIT_PERSISTING_L2_CACHE_SIZE (cuda.h).
_CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06
# Allocated memory a candidate may leave (cuBLAS workspaces for new streams, say) before the worker
# is replaced; and free memory that may go missing outside torch's allocator while it has the GPU
# (the GPU's free memory is every process's: other processes' contexts come and go).
_ALLOCATED_SLACK = 256 << 20
_FREE_SLACK_MIN, _FREE_SLACK_FRACTION = 1 << 30, 0.03


class WorkerState:
    """The state a fresh worker has (taken when it starts), :meth:`begin` as a candidate gets the GPU,
    and :meth:`restore`, which puts it back after it. ``device`` is None where no GPU is used (the
    simulated backend, or no torch)."""

    def __init__(self, device: int | None) -> None:
        self._torch = sys.modules.get("torch") if device is not None else None
        self.device = device
        self._settings = _settings()
        if self._torch is None:
            return
        torch = self._torch
        torch.cuda.set_device(device)
        a = torch.ones(64, 64, device="cuda")
        (a @ a).sum().item()  # cuBLAS's workspace for the default stream, kept by torch from now on
        del a
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        self._stream = torch.cuda.default_stream()
        self._driver = _driver()
        self.begin()

    def begin(self) -> None:
        """The memory the next candidate will be judged against."""
        if self._torch is not None:
            self._allocated = self._torch.cuda.memory_allocated()
            self._free, self._total = self._torch.cuda.mem_get_info()

    def restore(self) -> tuple[list[str], str | None, bool]:
        """(what was put back, why this worker must be replaced or None, whether its CUDA context is
        lost). A context that a fault left unusable, or memory that cannot be given back, needs a new
        process."""
        restored = _restore_settings(self._settings)
        if self._torch is None:
            return restored, None, False
        torch = self._torch
        try:
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001 - a sticky CUDA error: this context is lost
            return restored, f"the CUDA context is unusable: {_first_line(e)}", True
        try:
            if torch.cuda.current_device() != self.device:
                torch.cuda.set_device(self.device)
                restored.append("current device")
            if torch.cuda.current_stream() != self._stream:
                torch.cuda.set_stream(self._stream)
                restored.append("current stream")
            restored += self._restore_persisting_l2()
            gc.collect()
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
            allocated = torch.cuda.memory_allocated()
            free, _ = torch.cuda.mem_get_info()
        except Exception as e:  # noqa: BLE001
            return restored, f"the CUDA context is unusable: {_first_line(e)}", True
        if allocated > self._allocated + _ALLOCATED_SLACK:
            return restored, f"the candidate left {(allocated - self._allocated) >> 20} MiB of GPU memory in use", False
        if free < self._free - max(_FREE_SLACK_MIN, _FREE_SLACK_FRACTION * self._total):
            return restored, (f"{(self._free - free) >> 20} MiB of GPU memory went missing outside torch's allocator "
                              f"(allocated by the candidate and never freed)"), False
        return restored, None, False

    def _restore_persisting_l2(self) -> list[str]:
        if self._driver is None:
            return []
        size = ctypes.c_size_t(0)
        if self._driver.cuCtxGetLimit(ctypes.byref(size), _CU_LIMIT_PERSISTING_L2_CACHE_SIZE) != 0 or not size.value:
            return []
        self._driver.cuCtxSetLimit(_CU_LIMIT_PERSISTING_L2_CACHE_SIZE, ctypes.c_size_t(0))
        self._driver.cuCtxResetPersistingL2Cache()
        return [f"persisting-L2 limit ({size.value} bytes)"]


def _driver() -> Any:
    try:
        return ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"


# ---- The process's settings a candidate may change -----------------------------------------------------

def timer_places() -> list[tuple[str, Any, str]]:
    """(name, owner, attribute) of each timer a harness times with: time's clocks, and torch's
    synchronize and Event methods and Triton's benchmark functions where those modules are loaded."""
    places: list[tuple[str, Any, str]] = [(f"time.{n}", time, n) for n in ("perf_counter", "perf_counter_ns", "time",
                                                                            "time_ns", "monotonic", "monotonic_ns")]
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "cuda"):
        cuda = torch.cuda
        places += [("torch.cuda.synchronize", cuda, "synchronize"), ("torch.cuda.Event", cuda, "Event")]
        event = getattr(cuda, "Event", None)
        if event is not None:
            places += [(f"torch.cuda.Event.{n}", event, n) for n in ("record", "elapsed_time", "synchronize")]
    testing = sys.modules.get("triton.testing")
    if testing is not None:
        places += [(f"triton.testing.{n}", testing, n) for n in ("do_bench", "do_bench_cudagraph") if hasattr(testing, n)]
    return places


def _places() -> list[tuple[str, Any, str]]:
    """(name, owner, attribute) of every patchable setting: the timers, and torch's numeric switches
    (TF32, reduced-precision reductions, cuDNN's choices)."""
    places = timer_places()
    torch = sys.modules.get("torch")
    if torch is not None:
        matmul = torch.backends.cuda.matmul
        places += [(f"torch.backends.cuda.matmul.{n}", matmul, n)
                   for n in ("allow_tf32", "allow_fp16_reduced_precision_reduction",
                             "allow_bf16_reduced_precision_reduction") if _readable(matmul, n)]
        places += [(f"torch.backends.cudnn.{n}", torch.backends.cudnn, n)
                   for n in ("allow_tf32", "benchmark", "deterministic", "enabled")]
    return places


def _readable(owner: Any, attr: str) -> bool:
    """Whether this torch has the setting (torch's backends answer an unknown one with an AssertionError)."""
    try:
        getattr(owner, attr)
    except (AttributeError, AssertionError):
        return False
    return True


def _settings() -> dict[str, Any]:
    saved: dict[str, Any] = {name: (owner, attr, getattr(owner, attr)) for name, owner, attr in _places()}
    torch = sys.modules.get("torch")
    if torch is not None:
        saved["torch default dtype"] = (torch.set_default_dtype, torch.get_default_dtype())
        saved["torch float32 matmul precision"] = (torch.set_float32_matmul_precision,
                                                   torch.get_float32_matmul_precision())
        saved["torch grad mode"] = (torch.set_grad_enabled, torch.is_grad_enabled())
        saved["torch deterministic algorithms"] = (torch.use_deterministic_algorithms,
                                                   torch.are_deterministic_algorithms_enabled())
    return saved


def _restore_settings(saved: dict[str, Any]) -> list[str]:
    """Puts back every setting that differs from ``saved`` (taken again where a module imported
    since adds some), returning their names."""
    restored = []
    current = _settings()
    for name, now in current.items():
        if name not in saved:
            saved[name] = now  # a module imported since (triton.testing): its own value is the original
            continue
        if len(now) == 3:
            owner, attr, value = saved[name]
            if getattr(owner, attr) is not value:
                setattr(owner, attr, value)
                restored.append(name)
        else:
            setter, value = saved[name]
            if now[1] != value:
                setter(value)
                restored.append(name)
    return restored
