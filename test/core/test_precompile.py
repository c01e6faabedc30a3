"""core/precompile.py and the kernels' disk cache: what is compiled once and loaded after."""

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

from robot_dynamics_ros.core import RobotModel, forward_dynamics, jit, mass_matrix, rnea
from robot_dynamics_ros.core.precompile import (KERNELS, compile_all, counting_compilations,
                                                warm_up)

numba = pytest.importorskip("numba")


def _double(x):
    return 2.0 * x


def test_registry_loads_every_kernel_and_a_second_pass_compiles_nothing():
    first = compile_all()
    assert [d.kernel for d in first] == list(KERNELS)
    assert all(d.status for d in first)
    again = compile_all()
    assert [d.compilations for d in again] == [0] * len(KERNELS)     # all in this process now


def test_warm_up_leaves_nothing_to_compile_for_a_model_and_keeps_its_results():
    model = RobotModel.named("stanford")
    warm_up(model)
    q = np.linspace(-0.3, 0.4, model.n)
    qd = np.linspace(0.5, -0.2, model.n)
    with counting_compilations() as compiled:
        tau = rnea(model, q, qd, np.zeros(model.n))
        B = mass_matrix(model, q)
        qdd = forward_dynamics(model, q, qd, tau)
    assert compiled == []
    # what was warmed up gives the dynamics' identities: B symmetric positive definite,
    # rnea(q, qd, a) - rnea(q, qd, 0) = B a, and the forward dynamics invert the inverse
    a = np.linspace(1.0, -2.0, model.n)
    np.testing.assert_allclose(B, B.T, atol=1e-12)
    assert np.linalg.eigvalsh(B).min() > 0.0
    np.testing.assert_allclose(rnea(model, q, qd, a) - tau, B @ a, atol=1e-9)
    np.testing.assert_allclose(qdd, np.zeros(model.n), atol=1e-8)


def test_counting_sees_a_compilation_and_not_a_load(tmp_path, monkeypatch):
    monkeypatch.setenv(jit.CACHE_ENVIRONMENT_VARIABLE, str(tmp_path))
    text = jit.module_text('"""test module"""\n', {}, [_double])
    with counting_compilations() as compiled:
        module, how = jit.compile_module(text, "count_test", {"_double": "float64(float64)"})
    assert module._double(3.0) == 6.0 and len(compiled) == 1 and str(tmp_path) in how
    script = textwrap.dedent(f"""
        import os, sys
        from robot_dynamics_ros.core import jit
        from robot_dynamics_ros.core.precompile import counting_compilations
        with counting_compilations() as compiled:
            module, how = jit.compile_module({text!r}, "count_test",
                                             {{"_double": "float64(float64)"}})
        assert module._double(4.0) == 8.0
        print(len(compiled))
        """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300, env={**__import__("os").environ})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0"]          # a fresh process loads what the first compiled


def test_an_unwritable_cache_is_said_once_by_name_and_the_kernel_still_runs(tmp_path,
                                                                            monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    monkeypatch.setenv(jit.CACHE_ENVIRONMENT_VARIABLE, str(blocker / "cache"))
    monkeypatch.setattr(jit, "_WARNED", set())
    text = jit.module_text('"""unwritable"""\n', {}, [_double])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            module, how = jit.compile_module(text, "unwritable_test",
                                             {"_double": "float64(float64)"})
            assert module._double(1.5) == 3.0 and "not cached" in how
    said = [w for w in caught if issubclass(w.category, jit.CompilationWarning)]
    assert len(said) == 1 and str(blocker / "cache") in str(said[0].message)
