"""Builds the kscope Python package: the pure-Python package under python/ plus the extension
kscope._core, which CMake builds from this repository (the engine, the CUDA backends when nvcc
and CUPTI are found, and the bindings), and the `kscope` program of the CMake build
(tools/kscope_cli.cpp) in kscope/bin/, which the console command `kscope` runs.
`pip install --no-build-isolation .` needs cmake, a C++20 compiler, pybind11 and, for measuring
on a GPU, the CUDA toolkit (/usr/local/cuda).

KSCOPE_CMAKE_ARGS adds CMake arguments (e.g. "-DKSCOPE_ENABLE_CUDA=OFF").
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        import pybind11

        build = Path(self.build_temp).resolve() / "cmake"
        env = dict(os.environ)
        if Path("/usr/local/cuda/bin").is_dir():  # where the CUDA toolkit lives when not on PATH
            env["PATH"] = f"/usr/local/cuda/bin{os.pathsep}{env.get('PATH', '')}"
        args = [
            "-DCMAKE_BUILD_TYPE=Release",
            "-DKSCOPE_BUILD_TESTS=OFF",
            "-DKSCOPE_BUILD_PYTHON=ON",
            f"-DPython_EXECUTABLE={sys.executable}",
            f"-Dpybind11_DIR={pybind11.get_cmake_dir()}",
        ]
        carried = ROOT / ".carry" / "include"  # scripts/prepare_carry.sh puts headers there for the GPU machine
        if (carried / "nlohmann" / "json.hpp").is_file():
            args.append(f"-DKSCOPE_NLOHMANN_INCLUDE_DIR={carried}")
        if (carried / "CLI" / "CLI.hpp").is_file():
            args.append(f"-DKSCOPE_CLI11_INCLUDE_DIR={carried}")
        args += shlex.split(os.environ.get("KSCOPE_CMAKE_ARGS", ""))
        subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), *args], check=True, env=env)
        targets = ["_core", "kscope_cli", "kscope-metrics"]
        subprocess.run(["cmake", "--build", str(build), "--target", *targets, "-j", str(os.cpu_count() or 2)],
                       check=True, env=env)
        built = build / "python" / "kscope" / f"_core{sysconfig.get_config_var('EXT_SUFFIX')}"
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built, target)
        # kscope._cli runs kscope/bin/kscope. The installed program is taken: CMake pads the build
        # tree's RPATH with an empty entry, which the loader reads as the current directory.
        programs = target.parent / "bin"
        shutil.rmtree(programs, ignore_errors=True)
        staging = build / "programs"
        subprocess.run(["cmake", "--install", str(build), "--component", "programs", "--prefix", str(staging)],
                       check=True, env=env)
        programs.mkdir()
        shutil.copy2(staging / "bin" / "kscope", programs / "kscope")


def version():
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"project\(kscope VERSION ([0-9.]+)", text).group(1)


setup(
    name="kscope",
    version=version(),
    description="Profiling as code for GPU kernels: sweeps, attribution and statistics in a pandas DataFrame",
    packages=["kscope", "kscope.testing"],
    package_dir={"": "python"},
    # PEP 561: the package is typed, and kscope._core has its type stub beside it.
    package_data={"kscope": ["py.typed", "_core/*.pyi"]},
    ext_modules=[CMakeExtension("kscope._core")],
    cmdclass={"build_ext": CMakeBuild},
    entry_points={"console_scripts": ["kscope = kscope._cli:main"]},
    python_requires=">=3.10",
    install_requires=["numpy", "pandas", "matplotlib"],
    zip_safe=False,
)
