"""A stand-in for the parts of Inductor (torch 2.11) that kscope.torch meets, for tests without a GPU:
its benchmarker (torch/_inductor/runtime/benchmarking.py: Benchmarker.benchmark dispatching to the
benchmarker registered for the device type, TritonBenchmarker.benchmark_gpu), its algorithm selection
(select_algorithm.py: AlgorithmSelectorCache.benchmark_choice and benchmark_choices, then the
minimum), and its autotune subprocess (autotune_process.py: TuningProcess.put/get pickling a
choice's bmreq.benchmark to a fresh Python process, GPUDeviceBenchmarkMixin.do_bench calling
benchmarker.benchmark_gpu there). The candidates launch simulated kernels on kscope's simulated
backend (kscope.testing.active()). modules() gives them as sys.modules would hold them; run as a
script, this file is the subprocess (Inductor's __autotune_main__)."""

import os
import pickle
import subprocess
import sys
import types

import kscope.testing

VERSION = "2.11.0+cu130"


class CUDACompileError(Exception):  # torch._inductor.exc
    pass


# ---- runtime/benchmarking.py ----------------------------------------------------------------------

class Config:  # torch._inductor.config, what the benchmarker reads
    deterministic = False
    inductor_default_autotune_warmup = 25
    inductor_default_autotune_rep = 100


config = Config()
own_calls = []  # each call of Inductor's own benchmark_gpu: (callable's result type, kwargs)
_BENCHMARK_DISPATCH = {}


def may_ban_benchmarking():
    if config.deterministic:
        raise RuntimeError("In the deterministic mode of Inductor, we will avoid those benchmarkings that would "
                           "cause non-deterministic results.")


def register_benchmarker(device_type, fn, *, override=False):
    if not override and device_type in _BENCHMARK_DISPATCH:
        raise ValueError(f"Benchmarker for device_type '{device_type}' already registered")
    _BENCHMARK_DISPATCH[device_type] = fn


class Benchmarker:
    def infer_device(self, *fn_args, **fn_kwargs):
        devices = {a.device.type for a in (*fn_args, *fn_kwargs.values()) if hasattr(a, "device")}
        if len(devices) != 1:
            raise ValueError("Can't safely infer the device type of `fn`")
        return types.SimpleNamespace(type=devices.pop())

    def benchmark(self, fn, fn_args=None, fn_kwargs=None, device=None, **kwargs):
        inferred = types.SimpleNamespace(type=device) if device is not None else \
            self.infer_device(*(fn_args or ()), **(fn_kwargs or {}))
        fn_args, fn_kwargs = fn_args or (), fn_kwargs or {}

        def _callable():
            return fn(*fn_args, **fn_kwargs)

        warmup = kwargs.pop("warmup", config.inductor_default_autotune_warmup)
        rep = kwargs.pop("rep", config.inductor_default_autotune_rep)
        benchmark_fn = _BENCHMARK_DISPATCH.get(inferred.type)
        if benchmark_fn is not None:
            return benchmark_fn(self, _callable, warmup=warmup, rep=rep, **kwargs)
        if inferred.type == "cpu":
            return self.benchmark_cpu(_callable, warmup=warmup, rep=rep, **kwargs)
        return self.benchmark_gpu(_callable, warmup=warmup, rep=rep, **kwargs)

    def benchmark_cpu(self, _callable, warmup=20, rep=100):
        raise NotImplementedError("the stand-in has no CPU benchmarker")

    def benchmark_gpu(self, *args, **kwargs):
        raise NotImplementedError


class TritonBenchmarker(Benchmarker):
    def benchmark_gpu(self, _callable, is_vetted_benchmarking=False, **kwargs):
        """Triton's do_bench needs a GPU: the stand-in runs the callable once and answers 1 ms."""
        if not is_vetted_benchmarking:
            may_ban_benchmarking()
        _callable()
        own_calls.append(kwargs)
        return 1.0


def _default_cuda_bench(self, f, *, warmup, rep, **kw):
    kw.setdefault("device_type", "cuda")
    return self.benchmark_gpu(f, warmup=warmup, rep=rep, **kw)


register_benchmarker("cuda", _default_cuda_bench, override=True)
benchmarker = TritonBenchmarker()


# ---- the candidates -------------------------------------------------------------------------------

class Tensor:
    """A CUDA tensor as the benchmark code handles it: device, numel, zero_."""

    def __init__(self, numel=1024):
        self.device = types.SimpleNamespace(type="cuda", index=0)
        self._numel = numel

    def numel(self):
        return self._numel

    def zero_(self):
        return self


def launch(name, duration_ns, fails=None):
    """A candidate's GPU work: a simulated kernel, or the error its launch raises."""
    if fails is not None:
        raise fails
    kscope.testing.active().launch(name, duration_ns)


class TritonBenchmarkRequest:
    """autotune_process.TritonGPUBenchmarkRequest: picklable, made into a run function where it runs."""

    def __init__(self, kernel_name, duration_ns, fails=None):
        self.kernel_name = kernel_name
        self.duration_ns = duration_ns
        self.fails = fails

    def make_run_fn(self, *input_tensors, out):
        return lambda: launch(self.kernel_name, self.duration_ns, self.fails)

    def do_bench(self, fn, *input_tensors, out=None):  # GPUDeviceBenchmarkMixin.do_bench
        return benchmarker.benchmark_gpu(fn)

    def benchmark(self, *input_tensors, out=None):
        if out is None:
            input_tensors, out = (Tensor(), Tensor()), Tensor()
        fn = self.make_run_fn(*input_tensors, out=out)
        return self.do_bench(fn, *input_tensors, out=out)


class ChoiceCaller:
    def __init__(self, name, description=""):
        self.name = name
        self.description = description


class ExternKernelCaller(ChoiceCaller):
    def __init__(self, name, duration_ns):
        super().__init__(name)
        self.duration_ns = duration_ns

    def to_callable(self):
        return lambda *args, out: launch(self.name, self.duration_ns)

    def benchmark(self, *args, out):
        if out.numel() == 0:
            return 0.0  # nothing to compute
        return benchmarker.benchmark(self.to_callable(), args, {"out": out})


class TritonTemplateCaller(ChoiceCaller):
    def __init__(self, name, description, duration_ns, fails=None):
        super().__init__(name, description)
        self.bmreq = TritonBenchmarkRequest(name, duration_ns, fails)

    def benchmark(self, *args, out):
        return self.bmreq.benchmark(*args, out=out)


class AutotuneArgs:
    def __init__(self, numel=1024):
        self.tensors = {True: ((Tensor(), Tensor()), Tensor(numel)), False: ((Tensor(), Tensor()), Tensor(numel))}

    def get_benchmark_tensors(self, extern):
        return types.SimpleNamespace(unpack=lambda: self.tensors[extern])


# ---- select_algorithm.py --------------------------------------------------------------------------

class AlgorithmSelectorCache:
    @classmethod
    def benchmark_choice(cls, choice, autotune_args):
        benchmark_tensors = autotune_args.get_benchmark_tensors(isinstance(choice, ExternKernelCaller))
        inputs, output = benchmark_tensors.unpack()
        output.zero_()
        return choice.benchmark(*inputs, out=output)

    @classmethod
    def benchmark_choices(cls, choices, autotune_args, is_collective=False):
        timings = {}
        for choice in choices:
            try:
                timing = cls.benchmark_choice(choice, autotune_args)
            except CUDACompileError:
                timing = float("inf")
            except NotImplementedError:
                timing = float("inf")
            except RuntimeError as e:
                if "invalid argument" not in str(e) and "illegal memory access" not in str(e):
                    raise
                timing = float("inf")
            timings[choice] = timing
        return timings

    def select(self, choices, autotune_args):
        """What __call__ does with the timings: the minimum."""
        timings = self.benchmark_choices(choices, autotune_args)
        return min(timings, key=timings.__getitem__), timings


# ---- autotune_process.py --------------------------------------------------------------------------

class TuningProcess:
    """A fresh Python process benchmarking the jobs it is sent (pickled, as Inductor's)."""

    def __init__(self):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        self.process = subprocess.Popen([sys.executable, __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        env=env)

    def put(self, req):
        pickle.dump(req, self.process.stdin)
        self.process.stdin.flush()

    def get(self):
        result = pickle.load(self.process.stdout)
        if isinstance(result, Exception):
            raise result
        return result

    def shutdown(self):
        pickle.dump(None, self.process.stdin)
        self.process.stdin.close()
        self.process.wait(timeout=60)


class TuningProcessPool:
    def __init__(self):
        self.process = TuningProcess()

    def target(self, choice):
        self.process.put(choice.bmreq.benchmark)
        return self.process.get()

    def benchmark(self, choices):
        return {choice: self.target(choice) for choice in choices}

    def shutdown(self):
        self.process.shutdown()


def modules():
    """The stand-in as sys.modules entries: name -> module."""
    def module(name, **attrs):
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        return m

    me = sys.modules[__name__]
    benchmarking = module("torch._inductor.runtime.benchmarking", Benchmarker=Benchmarker,
                          TritonBenchmarker=TritonBenchmarker, benchmarker=benchmarker,
                          register_benchmarker=register_benchmarker, _BENCHMARK_DISPATCH=_BENCHMARK_DISPATCH,
                          may_ban_benchmarking=may_ban_benchmarking)
    entries = {
        "torch._inductor": module("torch._inductor", config=config),
        "torch._inductor.runtime": module("torch._inductor.runtime", benchmarking=benchmarking),
        "torch._inductor.runtime.benchmarking": benchmarking,
        "torch._inductor.select_algorithm": module("torch._inductor.select_algorithm",
                                                   AlgorithmSelectorCache=AlgorithmSelectorCache),
        "torch._inductor.autotune_process": module("torch._inductor.autotune_process", TuningProcess=TuningProcess,
                                                   TuningProcessPool=TuningProcessPool,
                                                   TritonBenchmarkRequest=me.TritonBenchmarkRequest),
    }
    for name in ("torch._inductor", "torch._inductor.runtime"):
        entries[name].__path__ = []
    return entries


def child():
    """The subprocess: torch 2.11's modules in place, a simulated GPU, then each job sent run and answered."""
    import torch

    torch.__version__ = VERSION
    sys.modules.update(modules())
    with kscope.testing.simulated_backend():
        while True:
            job = pickle.load(sys.stdin.buffer)
            if job is None:
                return
            try:
                result = job()
            except Exception as e:
                result = e
            pickle.dump(result, sys.stdout.buffer)
            sys.stdout.buffer.flush()


if __name__ == "__main__":
    import inductor_standin

    inductor_standin.child()
