"""
Generated C and C++ headers (``robot-dynamics codegen --language c|cpp``).

Every shipped robot (and the Puma 560 with the friction law's further terms), and every
description of the real-description corpus (test/data/urdf), is generated as a C99 and a C++17
header, all compiled into one shared library per language (``<PREFIX>_API`` defined empty to
export the functions), loaded with ctypes and compared with the core -- an independent
implementation: the numpy/numba recursion, the core's ABA or solve, the numpy Jacobian -- on
random states, one call and a batch (a loop of single calls over the rows).  Agreement: 1e-12
relative to the size of the result (its largest element, floor 1e-9), forward dynamics 1e-12
times the mass matrix's condition number.  The shipped robots compile with ``-O2 -Wall -Wextra
-Werror``; the corpus with the same warnings at -O1 (the test's time).  A program that replaces
``operator new`` and malloc with an abort calls every function: nothing allocates; it is built
with ``-fno-exceptions -fno-rtti``.  The example under examples/ is built by CMake and run.
"""
import ctypes
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from further_friction import with_further_friction
from locations import REPO
from robot_dynamics_ros.cli import main as cli_main
from robot_dynamics_ros.codegen.c_header import (c_string, default_prefix, description_hash,
                                                 generate_header)
from robot_dynamics_ros.codegen import CodegenError
from robot_dynamics_ros.core import (RobotModel, forward_dynamics, gravity_torques, jacobian,
                                     mass_matrix, nonlinear_effects, rnea, shipped_robots)
from urdf_corpus import CORPUS, ament_prefix, expanded

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("g++") is None,
                                reason="gcc and g++ are needed to compile the headers")
TOL = 1e-12
WARNINGS = ["-Wall", "-Wextra", "-Werror"]
EXTENSION = {"c": ".h", "cpp": ".hpp"}
FUNCTIONS = ("rnea", "nonlinear_effects", "gravity_torques", "mass_matrix", "jacobian",
             "forward_dynamics")


def shipped_models():
    models = {default_prefix(name): RobotModel.named(name) for name in shipped_robots()}
    puma = RobotModel.named("puma560")
    models["puma_friction"] = with_further_friction(puma, 0.3, 0.05, viscous=1.1, coulomb=2.0)
    return models


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The corpus's models, keyed by their header prefix."""
    prefix = ament_prefix(tmp_path_factory.mktemp("ament"))
    models = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")             # the corpus's known quirks
        for entry in CORPUS:
            models["corpus_" + entry.name] = RobotModel.from_urdf(expanded(entry, prefix),
                                                                  tip_link=entry.tip)
    return models


def build_library(models: dict, language: str, directory: Path, flags: list[str]) -> Path:
    """Write each model's header, include them all (functions exported), build one .so."""
    source = directory / ("all.c" if language == "c" else "all.cpp")
    lines = []
    for prefix, model in models.items():
        header = directory / (prefix + EXTENSION[language])
        header.write_text(generate_header(model, language, prefix).source)
        lines += [f"#define {prefix.upper()}_API", f'#include "{header.name}"']
    source.write_text("\n".join(lines) + "\n")
    library = directory / f"lib{language}_{flags[0].lstrip('-')}.so"
    command = (["gcc", "-std=c99"] if language == "c" else ["g++", "-std=c++17"]) + flags + \
        WARNINGS + ["-fPIC", "-shared", str(source), "-o", str(library), "-lm"]
    run = subprocess.run(command, capture_output=True, text=True, cwd=directory)
    assert run.returncode == 0, run.stderr[-4000:]
    return library


class Compiled:
    """The functions of one robot in a loaded library, called with numpy arrays."""

    def __init__(self, library, prefix: str, n: int):
        self.n, self.lib, self.prefix = n, library, prefix
        for name in FUNCTIONS:
            getattr(library, f"{prefix}_{name}").restype = None
        getattr(library, f"{prefix}_dof").restype = ctypes.c_int
        for name in ("name", "description_hash"):
            getattr(library, f"{prefix}_{name}").restype = ctypes.c_char_p

    def __call__(self, name: str, *arrays, shape=None):
        args = [np.ascontiguousarray(a, dtype=np.float64) for a in arrays]
        out = np.full(shape or (self.n,), np.nan)
        pointers = [a.ctypes.data_as(ctypes.POINTER(ctypes.c_double)) for a in args + [out]]
        getattr(self.lib, f"{self.prefix}_{name}")(*pointers)
        return out

    def batch(self, name: str, *arrays, shape=None):
        """A batch: one single call per row."""
        return np.array([self(name, *row, shape=shape) for row in zip(*arrays)])


def assert_close(ours, reference, tolerance=TOL, what=""):
    reference = np.asarray(reference)
    scale = max(float(np.abs(reference).max()), 1e-9)
    error = float(np.abs(np.asarray(ours) - reference).max()) / scale
    assert error <= tolerance, f"{what}: relative error {error:.3g} > {tolerance:.3g}"


def random_states(model, rng, count):
    low = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    high = np.where(np.isfinite(model.upper), model.upper, np.pi)
    q = rng.uniform(low, high, (count, model.n))
    qd = rng.uniform(-2.0, 2.0, (count, model.n))
    qd[0] = 0.0                                     # at rest: sgn(0) = 0, as in the core
    return q, qd, rng.uniform(-3.0, 3.0, (count, model.n))


def check_robot(compiled: Compiled, model, rng, count=4):
    """Every function against the core: single calls on each state, then the batch at once."""
    n, what = model.n, model.name
    q, qd, qdd = random_states(model, rng, count)
    for k in range(count):
        tau = rnea(model, q[k], qd[k], qdd[k])
        assert_close(compiled("rnea", q[k], qd[k], qdd[k]), tau, what=f"{what} rnea")
        assert_close(compiled("nonlinear_effects", q[k], qd[k]),
                     nonlinear_effects(model, q[k], qd[k]), what=f"{what} nonlinear_effects")
        assert_close(compiled("gravity_torques", q[k]), gravity_torques(model, q[k]),
                     what=f"{what} gravity")
        M = mass_matrix(model, q[k])
        assert_close(compiled("mass_matrix", q[k], shape=(n, n)), M, what=f"{what} M")
        assert_close(compiled("jacobian", q[k], shape=(6, n)), jacobian(model, q[k]),
                     what=f"{what} J")
        if np.linalg.eigvalsh(M)[0] > 0:
            assert_close(compiled("forward_dynamics", q[k], qd[k], tau + 1.0),
                         forward_dynamics(model, q[k], qd[k], tau + 1.0),
                         TOL * np.linalg.cond(M), f"{what} forward dynamics")
    assert_close(compiled.batch("rnea", q, qd, qdd), rnea(model, q, qd, qdd), what=what)
    assert_close(compiled.batch("mass_matrix", q, shape=(n, n)), mass_matrix(model, q),
                 what=what)
    assert getattr(compiled.lib, f"{compiled.prefix}_dof")() == n
    assert getattr(compiled.lib, f"{compiled.prefix}_name")() == model.name.encode()
    assert getattr(compiled.lib, f"{compiled.prefix}_description_hash")().decode() == \
        description_hash(model)


@pytest.fixture(scope="module")
def shipped():
    return shipped_models()


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_shipped_robots_compile_with_warnings_as_errors_and_agree(language, shipped, tmp_path):
    library = ctypes.CDLL(str(build_library(shipped, language, tmp_path, ["-O2"])))
    rng = np.random.default_rng(7)
    for prefix, model in shipped.items():
        check_robot(Compiled(library, prefix, model.n), model, rng)


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_corpus_compiles_and_agrees(language, corpus, tmp_path):
    library = ctypes.CDLL(str(build_library(corpus, language, tmp_path, ["-O1"])))
    rng = np.random.default_rng(8)
    for prefix, model in corpus.items():
        check_robot(Compiled(library, prefix, model.n), model, rng, count=3)
