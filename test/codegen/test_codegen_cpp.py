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

from coupled_wrist import wrist
from further_friction import with_further_friction
from locations import REPO
from robot_dynamics_ros.commands.cli import main as cli_main
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
    models["wrist_coupled"] = RobotModel.from_dict(wrist())     # coupled drives (coupling.py)
    return models


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Return the corpus's models, keyed by their header prefix."""
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
        """Call ``name`` on a batch: one single call per row."""
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


ALLOCATION_TRAP = r'''
#include <cstddef>
#include <cstdio>
#include <new>
%(includes)s
extern "C" void *__libc_malloc(std::size_t);
extern "C" void *__libc_calloc(std::size_t, std::size_t);
extern "C" void *__libc_realloc(void *, std::size_t);
extern "C" void __libc_free(void *);
static volatile bool armed = false;  // while true, any allocation aborts the program
static void *take(std::size_t n) { if (armed) __builtin_trap(); return __libc_malloc(n ? n : 1); }
extern "C" void *malloc(std::size_t n) noexcept { return take(n); }
extern "C" void *calloc(std::size_t a, std::size_t b) noexcept
{ if (armed) __builtin_trap(); return __libc_calloc(a, b); }
extern "C" void *realloc(void *p, std::size_t n) noexcept
{ if (armed) __builtin_trap(); return __libc_realloc(p, n); }
extern "C" void free(void *p) noexcept { __libc_free(p); }
void *operator new(std::size_t n) { return take(n); }
void *operator new[](std::size_t n) { return take(n); }
void operator delete(void *p) noexcept { __libc_free(p); }
void operator delete[](void *p) noexcept { __libc_free(p); }
void operator delete(void *p, std::size_t) noexcept { __libc_free(p); }
void operator delete[](void *p, std::size_t) noexcept { __libc_free(p); }

int main(int argc, char **)
{
    double q[16], qd[16], x[16], out[256];
    for (int i = 0; i < 16; ++i) { q[i] = 0.1 * i - 0.3; qd[i] = 0.5 - 0.07 * i; x[i] = 0.2; }
    double sum = 0.0;
    armed = true;
    if (argc > 1) {             /* the trap's own check: an allocation must abort */
        double *volatile p = new double[3];
        sum += p[0];
    }
%(calls)s
    armed = false;
    std::printf("no allocation: %%g\n", sum);
    return 0;
}
'''


def allocation_program(models: dict, directory: Path) -> Path:
    includes, calls = [], []
    for prefix, model in models.items():
        header = directory / (prefix + ".hpp")
        header.write_text(generate_header(model, "cpp", prefix).source)
        includes.append(f'#include "{header.name}"')
        calls += [f"    {prefix}_rnea(q, qd, x, out); sum += out[0];",
                  f"    {prefix}_nonlinear_effects(q, qd, out); sum += out[0];",
                  f"    {prefix}_gravity_torques(q, out); sum += out[0];",
                  f"    {prefix}_mass_matrix(q, out); sum += out[0];",
                  f"    {prefix}_jacobian(q, out); sum += out[0];",
                  f"    {prefix}_forward_dynamics(q, qd, x, out); sum += out[0];",
                  f"    sum += {prefix}_dof() + {prefix}_name()[0] + "
                  f"{prefix}_description_hash()[0];"]
    source = directory / "trap.cpp"
    source.write_text(ALLOCATION_TRAP % {"includes": "\n".join(includes),
                                         "calls": "\n".join(calls)})
    return source


def test_headers_allocate_nothing_and_build_without_exceptions(shipped, tmp_path):
    """Every function of every shipped robot, called with allocation trapped; -fno-exceptions."""
    source = allocation_program(shipped, tmp_path)
    binary = tmp_path / "trap"
    run = subprocess.run(["g++", "-std=c++17", "-O1", "-fno-exceptions", "-fno-rtti", *WARNINGS,
                          str(source), "-o", str(binary)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-4000:]
    run = subprocess.run([str(binary)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and "no allocation" in run.stdout, run.stdout + run.stderr
    trapped = subprocess.run([str(binary), "allocate"], capture_output=True, timeout=60)
    assert trapped.returncode != 0          # the trap works: an allocation would have failed


def test_only_the_maths_library_is_needed(shipped, tmp_path):
    """The exported functions' object code refers to nothing but the C maths library."""
    library = build_library({k: shipped[k] for k in ("puma560", "puma_friction")}, "c",
                            tmp_path, ["-O2"])
    run = subprocess.run(["nm", "-D", "--undefined-only", str(library)], capture_output=True,
                         text=True)
    undefined = {line.split()[-1].split("@")[0] for line in run.stdout.splitlines()}
    allowed = {"sin", "cos", "sincos", "__cxa_finalize", "_ITM_registerTMCloneTable",
               "_ITM_deregisterTMCloneTable", "__gmon_start__"}
    assert undefined <= allowed, undefined - allowed


def test_command_writes_headers_and_refuses_bad_prefix(tmp_path, capsys):
    path = tmp_path / "arm_dynamics.hpp"
    assert cli_main(["codegen", "puma560", "--language", "cpp", "--prefix", "arm",
                     "-o", str(path)]) == 0
    out = capsys.readouterr().out
    assert "rnea: 226 multiplications" in out and "LDL^T solve" in out
    text = path.read_text()
    assert "void arm_rnea(const double *q, const double *qd, const double *qdd, double *tau)" \
        in text and 'extern "C"' in text and "#include <cmath>" in text
    assert cli_main(["codegen", "puma560", "--language", "c", "-o", str(path)]) == 0
    assert "static inline" in path.read_text() and "puma560_rnea(" in path.read_text()
    assert cli_main(["codegen", "puma560", "--language", "c", "--prefix", "2arm", "-o",
                     str(tmp_path / "x.h")]) == 1
    assert "'2arm' is not a C identifier" in capsys.readouterr().err
    assert not (tmp_path / "x.h").exists()
    with pytest.raises(CodegenError, match="language"):
        generate_header(RobotModel.named("planar2"), "fortran")


def test_names_become_identifiers_and_strings_are_escaped():
    assert default_prefix("ur5e-arm 2") == "ur5e_arm_2" and default_prefix("6dof") == "_6dof"
    assert c_string('a"b\\c?') == r'"a\042b\134c\077"'
    assert c_string("é") == r'"\303\251"'


def test_cmake_example_builds_and_runs(tmp_path):
    """examples/cpp_gravity_compensation: CMake runs the command for the header, builds, runs."""
    if shutil.which("cmake") is None:
        pytest.skip("cmake is not installed")
    example = REPO / "examples" / "cpp_gravity_compensation"
    command = Path(sys.executable).with_name("robot-dynamics")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(REPO)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    build = tmp_path / "build"
    for step in (["cmake", "-S", str(example), "-B", str(build), "-DROBOT=puma560",
                  f"-DROBOT_DYNAMICS={command}"],
                 ["cmake", "--build", str(build)]):
        run = subprocess.run(step, capture_output=True, text=True, env=env, timeout=300)
        assert run.returncode == 0, (run.stdout + run.stderr)[-4000:]
    run = subprocess.run([str(build / "gravity_compensation")], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "puma560" in run.stdout and "tracking error" in run.stdout
