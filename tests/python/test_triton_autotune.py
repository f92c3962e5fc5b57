"""@kscope.triton.autotune without Triton: on the stand-in of Triton 3.6 (triton_standin.py, installed
as the triton package), on the simulated backend. The kernel is Triton's Autotuner; its first call for
a key races the configs, a declared tie goes to the config listed first, and the choice is kept in
Triton's cache folder for later processes, which a change of source, configs, GPU, driver or options
invalidates. tests/python/test_triton_gpu.py runs it with Triton itself on a GPU."""

import json
import os
import sys

import pytest

import kscope
import kscope._autotune_cache
import kscope.triton

import triton_standin as standin
from triton_standin import CompileTimeAssertionFailure, Config, OutOfResources, PTXASError

KERNEL_NS = {16: 90000, 32: 60000, 64: 40000, 128: 41500, 256: 75000, 512: 1, 1024: 1, 2048: 1}
FAILING = {512: OutOfResources, 1024: CompileTimeAssertionFailure, 2048: PTXASError}
MACHINE = ["NVIDIA H100 80GB HBM3", "132 SMs", "85045477376 bytes", "580.65.06"]


class Tensor:
    dtype = "float16"


@pytest.fixture
def triton(monkeypatch, tmp_path):
    """The stand-in as the triton package, its cache folder under tmp_path, and this machine's identity."""
    for name, module in standin.modules(tmp_path / "triton-cache").items():
        monkeypatch.setitem(sys.modules, name, module)
    machine = list(MACHINE)
    monkeypatch.setattr(kscope._autotune_cache, "gpu_identity", lambda: list(machine))
    return machine


def blocks(*sizes):
    return [Config({"BLOCK": b}) for b in sizes]


def kernel_of(sim, configs, source="v1", durations=None, **options):
    fn = standin.JITFunction(sim, durations or KERNEL_NS, ["x", "n"], fails=FAILING, source=source)
    return fn, kscope.triton.autotune(configs=configs, key=["n"], **{"runs": 40, **options})(fn)


def choice_files(tmp_path):
    return sorted(p for p in (tmp_path / "triton-cache").rglob("*.kscope-choice.json"))


def test_autotune_races_the_configs_on_the_first_call_for_a_key_and_runs_the_choice(sim, triton, tmp_path):
    sim.set_noise(seed=2, jitter_pct=1)
    configs = blocks(16, 32, 64, 128, 256, *FAILING)
    fn, kernel = kernel_of(sim, configs)
    assert isinstance(kernel, standin.Autotuner)  # Triton's own class, which Inductor and others check for
    kernel[(1,)](Tensor(), 1024)
    key = (1024, "float16")
    assert kernel.cache[key] is configs[2]  # BLOCK 64; 128 (3.75% slower) comes after it if tied
    assert fn.runs[-1] == 64 and kernel.best_config is configs[2]
    choice = kernel.choices[key]
    assert choice.config is configs[2] and not choice.from_cache
    assert choice.rule == "among the winner and the configs tied with it, the one listed first"
    assert len(choice.race) == 5  # the configs Triton cannot run here are left out, as its autotuner does
    assert list(choice.evidence["config"]) == [str(c) for c in configs[:5]]
    assert set(choice.evidence["Outcome"]) <= {"winner", "tied", "slower", "eliminated", "left_out"}
    assert choice.path == str(choice_files(tmp_path)[0]) and kernel.bench_time == choice.tuning_s > 0
    fn.runs.clear()
    kernel[(1,)](Tensor(), 1024)  # the same key: no race
    assert fn.runs == [64]
    kernel[(1,)](Tensor(), 4096)  # another key: raced
    assert (4096, "float16") in kernel.choices and len(fn.runs) > 10


def test_a_declared_tie_goes_to_the_config_listed_first_in_every_process(sim, triton):
    # Three configs of the same duration, listed 128, 64, 256: the race declares them tied, whichever wins.
    durations = {64: 50000, 128: 50000, 256: 50000, 32: 90000}
    winners, chosen = set(), set()
    for seed in range(6):
        with kscope.testing.simulated_backend() as gpu:
            gpu.set_noise(seed=seed, jitter_pct=1)
            configs = blocks(32, 128, 64, 256)
            _, kernel = kernel_of(gpu, configs, durations=durations, cache_results=False)
            kernel[(1,)](Tensor(), 1024)
            choice = kernel.choices[(1024, "float16")]
            winners.add(choice.race.winner[0].kwargs["BLOCK"])
            chosen.add(choice.config.kwargs["BLOCK"])
            assert choice.path is None
    assert chosen == {128}
    assert len(winners) > 1  # the race's winner among the tied configs is chance: the rule is what makes it stable


def test_the_choice_is_read_back_by_a_later_process_and_invalidated_by_what_changes_it(sim, triton, tmp_path):
    configs = blocks(16, 32, 64, 128, 256)
    _, first = kernel_of(sim, configs)
    first[(1,)](Tensor(), 1024)
    [path] = choice_files(tmp_path)
    entry = json.loads(path.read_text())
    assert entry["config"] == str(configs[2]) and entry["config_index"] == 2
    assert entry["machine"] == MACHINE and entry["key"] == ["1024", "float16"]
    assert [row["Outcome"] for row in entry["evidence"]].count("winner") == 1

    def later_process(**changes):
        """A new kernel object, as a later process makes it: its choice read back, or raced."""
        fn, kernel = kernel_of(sim, changes.pop("configs", blocks(16, 32, 64, 128, 256)), **changes)
        kernel[(1,)](Tensor(), 1024)
        return fn, kernel.choices[(1024, "float16")]

    fn, choice = later_process()
    assert choice.from_cache and choice.race is None and fn.runs == [64]  # no benchmarking run
    assert choice.config.kwargs["BLOCK"] == 64 and list(choice.evidence["Outcome"]) == [
        row["Outcome"] for row in entry["evidence"]]
    assert not later_process(source="v2")[1].from_cache  # the kernel's source changed
    assert not later_process(configs=blocks(16, 32, 64, 128))[1].from_cache  # the configs changed
    assert not later_process(threshold_pct=3)[1].from_cache  # the race's options changed
    triton[3] = "590.10"  # the driver changed
    assert not later_process()[1].from_cache
    triton[0] = "NVIDIA H200"  # the GPU changed
    assert not later_process()[1].from_cache
    assert len(choice_files(tmp_path)) == 6


def test_a_cached_choice_that_cannot_be_used_is_raced_again_and_replaced(sim, triton, tmp_path):
    configs = blocks(16, 32, 64)
    _, kernel = kernel_of(sim, configs)
    kernel[(1,)](Tensor(), 1024)
    [path] = choice_files(tmp_path)
    path.write_text("{not json")
    _, again = kernel_of(sim, configs)
    with pytest.warns(kscope.ProfilerWarning, match=r"the cached choice .* cannot be used \(.*\); the configs are "
                                                    r"raced again and the file replaced"):
        again[(1,)](Tensor(), 1024)
    assert not again.choices[(1024, "float16")].from_cache
    assert json.loads(path.read_text())["config_index"] == 2


def test_a_choice_that_cannot_be_kept_on_disk_still_stands(sim, triton, tmp_path, monkeypatch):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    monkeypatch.setattr(sys.modules["triton.knobs"].cache, "dir", str(blocked))  # a file where a folder must be
    _, kernel = kernel_of(sim, blocks(16, 32, 64))
    with pytest.warns(kscope.ProfilerWarning, match=r"the choice could not be kept in .*; later processes race the "
                                                    r"configs again \(set TRITON_CACHE_DIR to a writable folder"):
        kernel[(1,)](Tensor(), 1024)
    choice = kernel.choices[(1024, "float16")]
    assert choice.config.kwargs["BLOCK"] == 64 and choice.path is None


def test_autotune_calls_the_hooks_as_tritons_autotuner_does(sim, triton):
    calls = []
    configs = [Config({"BLOCK": 32}), Config({"BLOCK": 64}, pre_hook=lambda nargs: calls.append(("config", 64)))]
    fn = standin.JITFunction(sim, KERNEL_NS, ["x", "n"])
    kernel = kscope.triton.autotune(
        configs=configs, key=["n"], runs=20, cache_results=False,
        pre_hook=lambda nargs, reset_only=False: calls.append(("pre", reset_only)),
        post_hook=lambda nargs, exception: calls.append(("post", exception)))(fn)
    kernel[(1,)](Tensor(), 1024)
    assert ("config", 64) in calls and ("post", None) in calls
    assert calls[-2:] == [("pre", True), ("config", 64)]  # reset after tuning, then the choice's own pre_hook
    assert kernel.nargs is None


def test_one_config_or_one_left_by_pruning_runs_without_a_race(sim, triton, tmp_path):
    fn, kernel = kernel_of(sim, blocks(64))
    kernel[(1,)](Tensor(), 1024)
    assert fn.runs == [64] and kernel.choices == {}
    fn, pruned = kernel_of(sim, blocks(16, 64), prune_configs_by={
        "early_config_prune": lambda configs, nargs, **kwargs: configs[1:]})
    pruned[(1,)](Tensor(), 1024)
    assert fn.runs == [64] and pruned.choices == {} and choice_files(tmp_path) == []


def test_autotune_names_what_it_does_not_take(sim, triton):
    with pytest.raises(kscope.ConfigError, match=r"^kscope.triton.autotune takes triton.autotune's arguments and "
                                                 r"these of kscope.tune: runs, warmup_runs, .*; not runz$"):
        kscope.triton.autotune(configs=blocks(16), key=["n"], runz=3)
    with pytest.warns(kscope.ProfilerWarning, match=r"races the configs with kscope.tune and does not use do_bench, "
                                                    r"rep \(Triton's ways of timing one config at a time\)|does not "
                                                    r"use rep, do_bench"):
        kscope.triton.autotune(configs=blocks(16), key=["n"], rep=100, do_bench=kscope.triton.do_bench)
    with pytest.raises(kscope.ConfigError, match="^cache_results must be True or False, not 'yes'"):
        kscope.triton.autotune(configs=blocks(16), key=["n"], cache_results="yes")


def test_the_choice_files_live_in_tritons_cache_folder(sim, triton, tmp_path):
    _, kernel = kernel_of(sim, blocks(16, 32))
    kernel[(1,)](Tensor(), 1024)
    [path] = choice_files(tmp_path)
    assert path.parent.parent == tmp_path / "triton-cache" and len(path.parent.name) == 64  # a sha256 folder
    assert path.name == "matmul_kernel.kscope-choice.json"
    assert not any(name.startswith(".kscope-choice-") for name in os.listdir(path.parent))  # no temporary left
