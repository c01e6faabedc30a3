"""
Generated C and C++ headers (``robot-dynamics codegen --language c|cpp``).

Every shipped robot (and the Puma 560 with the friction law's further terms) with both forward
dynamics methods (``forward="both"``), and every description of the real-description corpus
(test/data/urdf) as a user gets it, is generated as a C99 and a C++17 header, all compiled at -O2
with -Wall -Wextra -Werror into one shared library per language (the two compilers run at the
same time; ``<PREFIX>_API`` defined empty to export the functions), loaded with ctypes and
compared with the core -- an independent implementation: the numpy/numba recursion, the core's
ABA, the numpy Jacobian -- on random states, one call and a batch (a loop of single calls over
the rows); forward dynamics also against the core's CRBA and Cholesky.  Agreement: 1e-12
relative to the size of the result (its largest element, floor 1e-9), forward dynamics included.
Each forward dynamics method is also printed as Python for the corpus.  A program that replaces
``operator new`` and malloc with an abort calls every function: nothing allocates; it is built
with ``-fno-exceptions -fno-rtti``.  The example under examples/ is built by CMake and run.
"""
import ctypes
import math
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
from random_robots import random_robot_dict
from locations import REPO
from robot_dynamics_ros.commands.cli import main as cli_main
from robot_dynamics_ros.codegen.c_header import (c_string, default_prefix, description_hash,
                                                 generate_header)
from robot_dynamics_ros.codegen import CodegenError
from robot_dynamics_ros.codegen.generate import choose_forward_dynamics, cost
from robot_dynamics_ros.codegen.writer import function_source
from robot_dynamics_ros.core.algorithms.forward_dynamics import forward_dynamics_crba
from robot_dynamics_ros.core import (RobotModel, forward_dynamics, gravity_torques, jacobian,
                                     mass_matrix, nonlinear_effects, rnea, shipped_robots)
from urdf_corpus import CORPUS, ament_prefix, expanded

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("g++") is None,
                                reason="gcc and g++ are needed to compile the headers")
TOL = 1e-12
WARNINGS = ["-Wall", "-Wextra", "-Werror"]
EXTENSION = {"c": ".h", "cpp": ".hpp"}
FUNCTIONS = ("rnea", "nonlinear_effects", "gravity_torques", "mass_matrix", "jacobian",
             "forward_dynamics", "forward_dynamics_aba", "forward_dynamics_ldlt")
FORWARD = ("forward_dynamics", "forward_dynamics_aba", "forward_dynamics_ldlt")


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


def library_command(models: dict, language: str, directory: Path, forward: str) -> tuple:
    """Write each model's header and one source including them all (functions exported)."""
    source = directory / ("all.c" if language == "c" else "all.cpp")
    lines = []
    for prefix, model in models.items():
        header = directory / (prefix + EXTENSION[language])
        header.write_text(generate_header(model, language, prefix, forward=forward).source)
        lines += [f"#define {prefix.upper()}_API", f'#include "{header.name}"']
    source.write_text("\n".join(lines) + "\n")
    library = directory / f"lib{language}.so"
    command = (["gcc", "-std=c99"] if language == "c" else ["g++", "-std=c++17"]) + \
        ["-O2"] + WARNINGS + ["-fPIC", "-shared", str(source), "-o", str(library), "-lm"]
    return command, library


def build_libraries(models: dict, directory: Path, forward: str = "both",
                    languages=("c", "cpp")) -> dict:
    """
    Return {language: shared library} of ``models``' headers, compiled at once (one per core).

    The C and the C++ translation unit are compiled by two concurrent compilers: the test's time
    is the slower of the two, not their sum.
    """
    jobs = {}
    for language in languages:
        (directory / language).mkdir()
        command, library = library_command(models, language, directory / language, forward)
        jobs[language] = (subprocess.Popen(command, stdout=subprocess.PIPE,
                                           stderr=subprocess.STDOUT, text=True,
                                           cwd=directory / language), library)
    for process, _ in jobs.values():
        output = process.communicate(timeout=600)[0]
        assert process.returncode == 0, output[-4000:]
    return {language: library for language, (_, library) in jobs.items()}


class Compiled:
    """The functions of one robot in a loaded library, called with numpy arrays."""

    def __init__(self, library, prefix: str, n: int):
        self.n, self.lib, self.prefix = n, library, prefix
        for name in FUNCTIONS:      # (forward_dynamics_aba, _ldlt: in headers with both)
            function = getattr(library, f"{prefix}_{name}", None)
            if function is not None:
                function.restype = None
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


def relative_error(ours, reference) -> float:
    reference = np.asarray(reference)
    scale = max(float(np.abs(reference).max()), 1e-9)
    return float(np.abs(np.asarray(ours) - reference).max()) / scale


def assert_close(ours, reference, tolerance=TOL, what=""):
    error = relative_error(ours, reference)
    assert error <= tolerance, f"{what}: relative error {error:.3g} > {tolerance:.3g}"


def random_states(model, rng, count):
    low = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    high = np.where(np.isfinite(model.upper), model.upper, np.pi)
    q = rng.uniform(low, high, (count, model.n))
    qd = rng.uniform(-2.0, 2.0, (count, model.n))
    qd[0] = 0.0                                     # at rest: sgn(0) = 0, as in the core
    return q, qd, rng.uniform(-3.0, 3.0, (count, model.n))


def check_robot(compiled: Compiled, model, rng, count=4, forward=FORWARD):
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
            # the core's ABA (the text the generated ABA runs on nodes) and its CRBA + Cholesky
            oracles = (forward_dynamics(model, q[k], qd[k], tau + 1.0),
                       forward_dynamics_crba(model, q[k], qd[k], tau + 1.0))
            for name in forward:
                if (name == "forward_dynamics_aba" and model.coupled_drives
                        and getattr(compiled.lib, f"{compiled.prefix}_{name}", None) is None):
                    continue            # (the ABA cannot carry a coupling: generate.py)
                for qdd_core in oracles:
                    assert_close(compiled(name, q[k], qd[k], tau + 1.0), qdd_core,
                                 what=f"{what} {name}")
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


@pytest.fixture(scope="module")
def shipped_libraries(shipped, tmp_path_factory):
    return build_libraries(shipped, tmp_path_factory.mktemp("shipped"), "both")


@pytest.fixture(scope="module")
def corpus_libraries(corpus, tmp_path_factory):
    return build_libraries(corpus, tmp_path_factory.mktemp("corpus"), "auto")


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_shipped_robots_compile_with_warnings_as_errors_and_agree(
        language, shipped, shipped_libraries):
    """Both forward dynamics methods too (the Puma with every friction term and rotors)."""
    library = ctypes.CDLL(str(shipped_libraries[language]))
    rng = np.random.default_rng(7)
    for prefix, model in shipped.items():
        check_robot(Compiled(library, prefix, model.n), model, rng)


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_corpus_compiles_and_agrees(language, corpus, corpus_libraries):
    """The headers a user gets (forward dynamics by the cheaper method), -O2 as shipped ones."""
    library = ctypes.CDLL(str(corpus_libraries[language]))
    rng = np.random.default_rng(8)
    for prefix, model in corpus.items():
        check_robot(Compiled(library, prefix, model.n), model, rng, count=3,
                    forward=("forward_dynamics",))


def test_both_forward_dynamics_methods_printed_as_python_agree(shipped, corpus):
    """
    Each method's graph, by the Python printer, against the core on every robot of the corpus.

    The graph the C and C++ headers print (compiled above: the cheaper method on the corpus,
    both on the shipped robots) is the one printed here; so each method meets the core on every
    description, and the choice is the cheaper by ``cost``: the LDL^T up to 7 joints, the ABA
    for a 10-joint arm with rotors and friction (generate.py's docstring: the measurements).
    """
    rng = np.random.default_rng(9)
    long_arm = RobotModel.from_dict(random_robot_dict(
        10, np.random.default_rng(10), convention="modified", with_motors=True,
        with_friction=True, name="arm10"))
    for prefix, model in {**shipped, **corpus, "arm10": long_arm}.items():
        choice = choose_forward_dynamics(model)
        assert cost(choice.counts[choice.method]) == min(map(cost, choice.counts.values()))
        assert choice.method == ("aba" if model.n >= 10 else "ldlt"), prefix   # (measured)
        q, qd, qdd = random_states(model, rng, 2)
        for method, (graph, spec) in choice.graphs.items():
            namespace = {"_math": math, "_np": np}
            exec(function_source(graph, spec), namespace)
            for k in range(2):
                tau = rnea(model, q[k], qd[k], qdd[k]) + 1.0
                assert_close(namespace["forward_dynamics"](q[k], qd[k], tau),
                             forward_dynamics(model, q[k], qd[k], tau),
                             what=f"{prefix} {method} (Python)")


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
    library = build_libraries({k: shipped[k] for k in ("puma560", "puma_friction")}, tmp_path,
                              "auto", ("c",))["c"]
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
    assert "rnea: 226 multiplications" in out and "forward dynamics by aba:" in out \
        and "forward dynamics by ldlt:" in out and "(the cheaper: forward_dynamics)" in out
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
