"""A stand-in for the parts of Triton 3.6 that kscope.triton meets, for tests without Triton: the
Autotuner does with configs, hooks, do_bench and its cache what triton/runtime/autotuner.py does
(its __init__, do_bench, _bench, run and prune_configs, line for line where kscope depends on them),
and a JITFunction whose run launches a simulated kernel per config, or raises what Triton raises for
a config that cannot run here. modules() gives the package as sys.modules would hold it."""

import builtins
import functools
import os
import time
import types


class OutOfResources(Exception):  # triton.runtime.errors
    pass


class PTXASError(Exception):  # triton.runtime.errors
    pass


class CompileTimeAssertionFailure(Exception):  # triton.compiler.errors
    pass


class Config:
    """triton.Config: kwargs, num_warps, num_stages, pre_hook; all_kwargs(); str lists every field."""

    def __init__(self, kwargs, num_warps=4, num_stages=3, num_ctas=1, maxnreg=None, pre_hook=None):
        self.kwargs = kwargs
        self.num_warps = num_warps
        self.num_ctas = num_ctas
        self.num_stages = num_stages
        self.maxnreg = maxnreg
        self.pre_hook = pre_hook

    def all_kwargs(self):
        return {**self.kwargs, **{k: v for k, v in (("num_warps", self.num_warps), ("num_ctas", self.num_ctas),
                                                    ("num_stages", self.num_stages), ("maxnreg", self.maxnreg))
                                  if v is not None}}

    def __str__(self):
        return ", ".join([f"{k}: {v}" for k, v in self.kwargs.items()] +
                         [f"num_warps: {self.num_warps}", f"num_ctas: {self.num_ctas}",
                          f"num_stages: {self.num_stages}", f"maxnreg: {self.maxnreg}"])

    def __hash__(self):
        return hash((*self.all_kwargs().items(), self.pre_hook))

    def __eq__(self, other):
        return (*self.all_kwargs().items(), self.pre_hook) == (*other.all_kwargs().items(), other.pre_hook)


class JITFunction:
    """A kernel of one argument list whose config BLOCK launches kernel "k<BLOCK>" of durations_ns[BLOCK]
    ns on the simulated backend; `fails`: BLOCK -> the exception class its compilation raises."""

    def __init__(self, sim, durations_ns, arg_names, fails=None, source="v1"):
        self.sim = sim
        self.durations_ns = durations_ns
        self.arg_names = arg_names
        self.fails = fails or {}
        self.cache_key = f"source {source}"
        self.runs = []
        self.__name__ = "matmul_kernel"
        self.fn = None

    def run(self, *args, grid, warmup, **meta):  # Triton 3.6's JITFunction.run: both keyword-only, required
        block = meta["BLOCK"]
        self.runs.append(block)
        if block in self.fails:
            raise self.fails[block](f"config BLOCK={block} cannot run on this GPU")
        self.sim.launch(f"k{block}", self.durations_ns[block])


class Autotuner:
    """triton.runtime.Autotuner (Triton 3.6), what kscope depends on."""

    def __init__(self, fn, arg_names, configs, key, reset_to_zero, restore_value, pre_hook=None, post_hook=None,
                 prune_configs_by=None, warmup=None, rep=None, use_cuda_graph=False, do_bench=None,
                 cache_results=False):
        self.configs = configs or [Config({}, num_warps=4, num_stages=3, num_ctas=1)]
        self.keys = key
        self.cache = {}
        self.arg_names = arg_names
        self.cache_results = cache_results
        self.reset_to_zero = list(reset_to_zero or [])
        self.restore_value = list(restore_value or [])
        self.pre_hook = lambda kwargs, reset_only=False: 0
        self.post_hook = lambda kwargs, exception: 0
        if pre_hook:
            self.pre_hook = pre_hook
        elif self.reset_to_zero or self.restore_value:
            def _pre_hook(kwargs, reset_only=False):
                for name in self.reset_to_zero:
                    if kwargs[name] is not None:
                        kwargs[name].zero_()
                if not reset_only:
                    self.restore_copies = {name: kwargs[name].clone() for name in self.restore_value
                                           if kwargs[name] is not None}
            self.pre_hook = _pre_hook
        if post_hook:
            self.post_hook = post_hook
        elif self.restore_value:
            def _post_hook(kwargs, exception):
                for name, value in self.restore_copies.items():
                    kwargs[name].copy_(value)
                self.restore_copies = {}
            self.post_hook = _post_hook
        self.perf_model = None
        self.configs_top_k = 1.0
        self.early_config_prune = None
        if prune_configs_by:
            self.perf_model = prune_configs_by.get("perf_model", self.perf_model)
            self.configs_top_k = prune_configs_by.get("top_k", self.configs_top_k)
            self.early_config_prune = prune_configs_by.get("early_config_prune", self.early_config_prune)
        self.fn = fn
        self.base_fn = fn
        self._do_bench = do_bench
        self.nargs = None

    @functools.cached_property
    def do_bench(self):
        if self._do_bench is None:
            raise AssertionError("Triton's default benchmarker needs a GPU: give do_bench= in these tests")
        return self._do_bench

    def _bench(self, *args, config, **meta):
        conflicts = meta.keys() & config.kwargs.keys()
        if conflicts:
            raise ValueError(f"Conflicting meta-parameters: {', '.join(conflicts)}."
                             " Make sure that you don't re-define auto-tuned symbols.")
        current = dict(meta, **config.all_kwargs())
        full_nargs = {**self.nargs, **current}

        def kernel_call():
            if config.pre_hook:
                config.pre_hook(full_nargs)
            self.pre_hook(full_nargs)
            try:
                self.fn.run(*args, **current)
            except Exception as e:
                try:
                    self.post_hook(full_nargs, exception=e)
                finally:
                    raise
            self.post_hook(full_nargs, exception=None)

        try:
            return self.do_bench(kernel_call, quantiles=(0.5, 0.2, 0.8))
        except (OutOfResources, CompileTimeAssertionFailure, PTXASError):
            return [float("inf"), float("inf"), float("inf")]

    def run(self, *args, **kwargs):
        self.nargs = dict(zip(self.arg_names, args))
        used_cached_result = True
        if len(self.configs) > 1:
            all_args = {**self.nargs, **kwargs}
            _args = {k: v for (k, v) in all_args.items() if k in self.arg_names}
            key = [_args[key] for key in self.keys if key in _args]
            for _, arg in _args.items():
                if hasattr(arg, "dtype"):
                    key.append(str(arg.dtype))
            key = tuple(key)
            if key not in self.cache:
                used_cached_result = False
                pruned_configs = self.prune_configs(kwargs)
                if len(pruned_configs) == 1:
                    self.cache[key] = pruned_configs[0]
                    used_cached_result = True
                else:
                    def benchmark():
                        bench_start = time.time()
                        timings = {config: self._bench(*args, config=config, **kwargs) for config in pruned_configs}
                        self.bench_time = time.time() - bench_start
                        self.cache[key] = builtins.min(timings, key=timings.get)
                        full_nargs = {**self.nargs, **kwargs, **self.cache[key].all_kwargs()}
                        self.pre_hook(full_nargs, reset_only=True)
                        self.configs_timings = timings
                    benchmark()
            config = self.cache[key]
        else:
            config = self.configs[0]
        self.best_config = config
        self.used_cached_result = used_cached_result
        if config.pre_hook is not None:
            config.pre_hook({**self.nargs, **kwargs, **config.all_kwargs()})
        ret = self.fn.run(*args, **kwargs, **config.all_kwargs())
        self.nargs = None
        return ret

    def prune_configs(self, kwargs):
        pruned_configs = self.configs
        if self.early_config_prune:
            pruned_configs = self.early_config_prune(self.configs, self.nargs, **kwargs)
        if self.perf_model:
            top_k = self.configs_top_k
            if isinstance(top_k, float) and top_k <= 1.0:
                top_k = max(1, int(len(pruned_configs) * top_k))
            if len(pruned_configs) > top_k:
                est_timing = {config: self.perf_model(**self.nargs, **kwargs, **config.all_kwargs())
                              for config in pruned_configs}
                pruned_configs = sorted(est_timing.keys(), key=lambda x: est_timing[x])[:top_k]
        return pruned_configs

    def __getitem__(self, grid):  # KernelInterface: kernel[grid](...)
        return lambda *args, **kwargs: self.run(grid=grid, warmup=False, *args, **kwargs)


def autotune(configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None, pre_hook=None,
             post_hook=None, warmup=None, rep=None, use_cuda_graph=False, do_bench=None, cache_results=False):
    def decorator(fn):
        return Autotuner(fn, fn.arg_names, configs, key, reset_to_zero, restore_value, pre_hook=pre_hook,
                         post_hook=post_hook, prune_configs_by=prune_configs_by, warmup=warmup, rep=rep,
                         use_cuda_graph=use_cuda_graph, do_bench=do_bench, cache_results=cache_results)
    return decorator


class _Backend:
    def __init__(self, target):
        self.target = target

    def hash(self):
        return f"backend of {self.target}"


def modules(cache_dir, target="cuda:90", environment=()):
    """The stand-in as sys.modules entries: name -> module."""
    def module(name, **attrs):
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        return m

    driver = types.SimpleNamespace(active=types.SimpleNamespace(get_current_target=lambda: target))
    knobs = module("triton.knobs", cache=types.SimpleNamespace(dir=os.fspath(cache_dir)))
    entries = {
        "triton.runtime.autotuner": module("triton.runtime.autotuner", Autotuner=Autotuner, Config=Config),
        "triton.runtime.errors": module("triton.runtime.errors", OutOfResources=OutOfResources, PTXASError=PTXASError),
        "triton.runtime.cache": module("triton.runtime.cache", triton_key=lambda: "triton 3.6.0"),
        "triton.runtime.driver": module("triton.runtime.driver", driver=driver),
        "triton.compiler.errors": module("triton.compiler.errors",
                                         CompileTimeAssertionFailure=CompileTimeAssertionFailure),
        "triton.compiler.compiler": module("triton.compiler.compiler", make_backend=_Backend),
        "triton._C.libtriton": module("triton._C.libtriton",
                                      get_cache_invalidating_env_vars=lambda: dict(environment)),
        "triton.knobs": knobs,
    }
    entries["triton.runtime"] = module("triton.runtime", autotuner=entries["triton.runtime.autotuner"],
                                       errors=entries["triton.runtime.errors"], cache=entries["triton.runtime.cache"],
                                       driver=entries["triton.runtime.driver"], Autotuner=Autotuner)
    entries["triton.compiler"] = module("triton.compiler", errors=entries["triton.compiler.errors"],
                                        compiler=entries["triton.compiler.compiler"])
    entries["triton._C"] = module("triton._C", libtriton=entries["triton._C.libtriton"])
    entries["triton"] = module("triton", runtime=entries["triton.runtime"], compiler=entries["triton.compiler"],
                               _C=entries["triton._C"], knobs=knobs, autotune=autotune, Config=Config)
    for name in ("triton", "triton.runtime", "triton.compiler", "triton._C"):
        entries[name].__path__ = []  # a package, so that its submodules import
    return entries
