"""
The compiled kernels (core/algorithms/compiled.py): same numbers whatever the input's form.

* a batch of one gives the single call's numbers exactly, and a batch row the single call of
  that row (the same compiled text runs once per row);
* the fast path (float64, C-contiguous, writable arrays of the model's shapes, finite) and the
  checked path (lists, integer arrays, read-only arrays, strided views) give the same numbers;
  what the fast path refuses reaches the core's checks, so bad input still raises the
  ``InputError`` naming the argument;
* the plain-Python texts (``plain.py``, what runs without numba) agree with the compiled ones.
"""

import numpy as np
import pytest

from random_robots import random_robot_dict, random_state
from robot_dynamics_ros.core import (InputError, RobotModel, forward_dynamics, gravity_torques,
                                     jacobian, mass_matrix, rnea)
from robot_dynamics_ros.core.algorithms import aba, compiled, kernels, newton_euler, plain

FUNCTIONS = {"rnea": lambda m, q, qd, qdd: rnea(m, q, qd, qdd),
             "gravity": lambda m, q, qd, qdd: gravity_torques(m, q),
             "mass_matrix": lambda m, q, qd, qdd: mass_matrix(m, q),
             "forward_dynamics": lambda m, q, qd, qdd: forward_dynamics(m, q, qd, qdd),
             "jacobian": lambda m, q, qd, qdd: jacobian(m, q)}


def models(rng):
    yield RobotModel.named("puma560")
    yield RobotModel.named("stanford")
    for n in (1, 3, 7):
        yield RobotModel.from_dict(random_robot_dict(n, rng, "modified", prismatic_prob=0.4,
                                                     with_motors=True, with_friction=True,
                                                     offsets=True))


def states(batch):
    """Yield (model, q, qd, qdd) of ``batch`` random states: Puma, Stanford, random chains."""
    rng = np.random.default_rng(31)
    for model in models(rng):
        yield (model,) + tuple(random_state(model, rng, batch=batch))


def test_the_kernels_compile():
    """Numba is a run-time requirement: the kernels must compile here (else all runs plain)."""
    assert compiled.kernels() is not None, compiled.status()


@pytest.mark.parametrize("name", FUNCTIONS)
def test_batch_rows_equal_single_calls_exactly(name):
    f = FUNCTIONS[name]
    for model, q, qd, qdd in states(4):
        batch = f(model, q, qd, qdd)
        for k in range(4):
            np.testing.assert_array_equal(batch[k], f(model, q[k], qd[k], qdd[k]))
        np.testing.assert_array_equal(f(model, q[:1], qd[:1], qdd[:1])[0],
                                      f(model, q[0], qd[0], qdd[0]))
        empty = f(model, q[:0], qd[:0], qdd[:0])
        assert empty.shape == (0,) + batch.shape[1:]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_every_input_form_gives_the_same_numbers(name):
    f = FUNCTIONS[name]
    for model, q, qd, qdd in states(3):
        expected = f(model, q, qd, qdd)
        wide = np.zeros((3, 2 * model.n))
        wide[:, ::2] = q                                      # a strided view
        frozen = [a.copy() for a in (q, qd, qdd)]
        for a in frozen:
            a.setflags(write=False)
        for args in ((q.tolist(), qd.tolist(), qdd.tolist()),
                     (np.asfortranarray(q), np.asfortranarray(qd), np.asfortranarray(qdd)),
                     (wide[:, ::2], qd, qdd), tuple(frozen)):
            np.testing.assert_allclose(f(model, *args), expected, rtol=1e-15, atol=1e-14)
        np.testing.assert_allclose(f(model, q[0].tolist(), tuple(qd[0]), qdd[0]), expected[0],
                                   rtol=1e-15, atol=1e-14)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_bad_input_still_raises_the_named_error(name):
    f = FUNCTIONS[name]
    model = RobotModel.named("puma560")
    q = np.zeros(6)
    with pytest.raises(InputError, match=r"q: expected shape \(6,\)"):
        f(model, np.zeros(5), np.zeros(5), np.zeros(5))
    with pytest.raises(InputError, match="q: non-finite value for joint 'joint3'"):
        bad = q.copy()
        bad[2] = np.nan
        f(model, bad, q, q)
    with pytest.raises(InputError, match=r"q: expected shape \(6,\) or \(N, 6\)"):
        f(model, np.zeros((2, 7)), np.zeros((2, 7)), np.zeros((2, 7)))
    if name in ("rnea", "forward_dynamics"):
        with pytest.raises(InputError, match="does not match"):
            f(model, q, np.zeros((2, 6)), q)
        with pytest.raises(InputError, match="qd: non-finite"):
            f(model, np.zeros((2, 6)), np.full((2, 6), np.inf), np.zeros((2, 6)))


def test_plain_python_texts_agree_with_the_compiled_ones():
    for model, q, qd, qdd in states(3):
        g, wrench = model.chain.gravity_base, np.zeros((1, 6))
        tau = rnea(model, q, qd, qdd)
        np.testing.assert_allclose(plain.rnea(model, q, qd, qdd, g, wrench), tau, rtol=1e-13,
                                   atol=1e-13)
        np.testing.assert_allclose(plain.rnea(model, q[0], qd[0], qdd[0], g, wrench), tau[0],
                                   rtol=1e-13, atol=1e-13)
        B = mass_matrix(model, q)
        np.testing.assert_allclose(plain.mass_matrix(model, q), B, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(plain.mass_matrix(model, q[0]), B[0], rtol=1e-13,
                                   atol=1e-13)


def test_constants_carry_the_model_gravity_base_and_flange():
    model = RobotModel.named("panda")
    c = compiled.constants(model, "plain")
    assert c.shape[0] == model.n + 1 and c.flags.c_contiguous
    np.testing.assert_array_equal(c[-1, :3], model.chain.gravity_base)
    np.testing.assert_array_equal(c[-1, 3:12].reshape(3, 3), model.chain.base[:3, :3])
    np.testing.assert_array_equal(c[-1, 24:27], model.chain.flange[:3, 3])


@pytest.mark.parametrize("name", FUNCTIONS)
def test_arrays_the_kernel_entries_would_misread_take_the_checked_path(name):
    """
    Gravity, mass matrix and Jacobian call numba's entry points, which check no dtype or order.

    Arrays of another dtype with 8-byte items (int64, which the entry would read as floats),
    big-endian floats, and views out of C order whose inner stride is a float's (a column
    block: only the row stride is wrong) must give the numbers of the same values as a fresh
    float64 array, single and batched; empty batches, whose strides numpy 2 sets to zero, are
    empty batches.
    """
    f = FUNCTIONS[name]
    model = RobotModel.named("puma560")
    n = model.n
    values = np.array([[1, -2, 0, 1, 2, -1], [0, 1, -1, 2, 0, 1], [2, 0, 1, -1, 1, 0]])
    expected = f(model, values.astype(float), values.astype(float), values.astype(float))
    wide = np.zeros((3, 2 * n))
    wide[:, :n] = values                                  # rows 2n floats apart
    spaced = np.zeros(2 * n)
    spaced[::2] = values[0]
    forms = (values, values.astype(">f8"), wide[:, :n], wide[:, :n].T.copy().T)
    for empty in (np.zeros((0, n)), wide[:0, :n], np.zeros((0, 2 * n))[:, ::2]):
        assert f(model, empty, empty, empty).shape == (0,) + expected.shape[1:]
    for form in forms:
        np.testing.assert_allclose(f(model, form, values, values), expected, rtol=1e-15,
                                   atol=1e-14)
        np.testing.assert_allclose(f(model, form[1], values[1], values[1]), expected[1],
                                   rtol=1e-15, atol=1e-14)
    np.testing.assert_allclose(f(model, spaced[::2], values[0], values[0]), expected[0],
                               rtol=1e-15, atol=1e-14)
    np.testing.assert_allclose(f(model, wide[1:2, :n], values[1:2], values[1:2]),
                               expected[1:2], rtol=1e-15, atol=1e-14)


def test_long_chains_take_their_scratch_from_the_heap_with_the_same_numbers():
    """
    Beyond ``kernels.STACK_FLOATS`` the drivers' workspace comes from the heap, not the stack.

    An 80-joint chain: its Newton-Euler workspace still fits on the stack, the ABA's does not.
    Both agree with the plain-Python texts (rnea, B) and with each other: tau -> ABA -> qdd ->
    rnea gives tau back to the accuracy B's conditioning allows; batch rows equal single calls.
    """
    n = 80
    assert n * (newton_euler.N_WORKSPACE + 3) + 6 <= kernels.STACK_FLOATS
    assert n * (aba.N_ABA_WORKSPACE + 3) + 6 > kernels.STACK_FLOATS
    rng = np.random.default_rng(80)
    model = RobotModel.from_dict(random_robot_dict(n, rng, "modified", prismatic_prob=0.2,
                                                   with_motors=True, with_friction=True))
    q, qd, tau = random_state(model, rng, batch=2)
    g, wrench = model.chain.gravity_base, np.zeros((1, 6))
    np.testing.assert_allclose(rnea(model, q, qd, tau), plain.rnea(model, q, qd, tau, g, wrench),
                               rtol=1e-12, atol=1e-12 * np.abs(rnea(model, q, qd, tau)).max())
    B = mass_matrix(model, q)
    np.testing.assert_allclose(B, plain.mass_matrix(model, q), rtol=1e-12,
                               atol=1e-12 * np.abs(B).max())
    qdd = forward_dynamics(model, q, qd, tau)
    for k in range(2):
        np.testing.assert_array_equal(qdd[k], forward_dynamics(model, q[k], qd[k], tau[k]))
        residual = np.abs(rnea(model, q[k], qd[k], qdd[k]) - tau[k]).max()
        scale = np.abs(tau[k]).max() + np.abs(B[k]).max() * np.abs(qdd[k]).max()
        assert residual <= 1e-15 * np.linalg.cond(B[k]) * scale
