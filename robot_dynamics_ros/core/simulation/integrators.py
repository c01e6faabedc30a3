"""
One step of the second-order system qdd = f(q, qd, tau), tau held over the step.

Each stepper takes ``f`` (``dynamics.ForwardDynamics``, or the generated ``accelerations``,
compiled or not), the state (sequences of floats), the torque and the step h, and returns
``(q, qd, qdd, terms)``: the state after the step (new lists), the acceleration at its start (as
``f`` returns it), and ``f.last_terms`` right after that first evaluation (B and n_v at the start,
for the Coulomb friction of the reported acceleration; None if ``f`` has no such attribute).  The
fixed-step methods hand ``f`` tuples of floats: what numba's compiled ``accelerations`` takes
(``compiled.py``) and the cheapest sequence to build in Python.

* ``rk4``: the classical fourth-order Runge-Kutta method as Turney et al. 1980 give it for
  simulation (Sect. 7): h1 = eps g(y), h2 = eps g(y + h1/2), h3 = eps g(y + h2/2),
  h4 = eps g(y + h3), y+ = y + (h1 + 2 h2 + 2 h3 + h4) / 6), on y = (q, qd).  Four evaluations
  of f per step.
* ``semi_implicit_euler``: qd+ = qd + h f(q, qd), q+ = q + h qd+ (symplectic Euler): one
  evaluation per step, first order, with bounded energy error on conservative systems.
* ``solve_ivp``: scipy's adaptive integrators over the step (default DOP853 with rtol = atol =
  1e-12): the reference the fixed-step methods are checked against.

The fixed-step methods run once per step of a real-time loop, so they are written out per number
of joints as straight-line Python on floats (``stepper(name, n)``, compiled once per n): the
element-wise loops of the textbook form cost as much as half an evaluation of f.
"""
from __future__ import annotations

import threading
from typing import Callable

import numpy as np
from scipy.integrate import solve_ivp

from ..errors import InputError

INTEGRATORS = ("rk4", "semi_implicit_euler", "solve_ivp")
_STEPPERS: dict[tuple[str, int], Callable] = {}
_LOCK = threading.Lock()


def _vec(prefix: str, n: int) -> str:
    return "(" + "".join(f"{prefix}{i}, " for i in range(n)).rstrip() + ")"


def _unpack(prefix: str, n: int) -> str:
    return ", ".join(f"{prefix}{i}" for i in range(n)) + ("," if n == 1 else "")


def rk4_source(n: int, evaluate: str | None = None, last_stage: bool = False) -> str:
    """
    Return the source of the straight-line RK4 step for n joints.

    ``evaluate`` None: ``step(f, q, qd, tau, h)`` as described above.  A name: ``rk4_step(q, qd,
    tau, h) -> (q, qd, qdd)`` calling the module's function of that name, on tuples only (no
    ``last_terms``): numba compiles it with that function (``compiled.py``), the same operations
    in the same order.  With ``last_stage``, ``rk4_last_stage`` instead, which also returns the
    state (q, qd) of the fourth evaluation, whose B the Coulomb friction step uses (as the
    Python step's ``f.last_terms``).
    """
    r = range(n)
    python = evaluate is None
    f = "f" if python else evaluate
    name = "rk4_last_stage" if last_stage else "rk4_step"
    lines = ["def step(f, q, qd, tau, h):" if python else f"def {name}(q, qd, tau, h):",
             f"    {_unpack('x', n)} = q",
             f"    {_unpack('v', n)} = qd",
             "    k = 0.5 * h",
             *(["    tau = tuple(tau)"] if python else []),
             f"    a = {f}({_vec('x', n)}, {_vec('v', n)}, tau)",
             *(["    first = getattr(f, 'last_terms', None)"] if python else []),
             f"    {_unpack('a', n)} = a"]
    # stage 2 at (x + k v, v + k a1), stage 3 at (x + k v2, v + k a2), stage 4 at (x + h v3,
    # v + h a3); wS_i is the velocity and bS_i the acceleration of stage S
    stages = (("k", "v", "a"), ("k", "w2_", "b2_"), ("h", "w3_", "b3_"))
    for stage, (factor, vel, acc) in enumerate(stages, 2):
        lines += [f"    w{stage}_{i} = v{i} + {factor} * {acc}{i}" for i in r]
        positions = "".join(f"x{i} + {factor} * {vel}{i}, " for i in r).rstrip()
        lines.append(f"    {_unpack(f'b{stage}_', n)} = {f}(({positions}), "
                     f"{_vec(f'w{stage}_', n)}, tau)")
    lines.append("    s = h / 6.0")
    q_next = ", ".join(f"x{i} + s * (v{i} + 2.0 * (w2_{i} + w3_{i}) + w4_{i})" for i in r)
    qd_next = ", ".join(f"v{i} + s * (a{i} + 2.0 * (b2_{i} + b3_{i}) + b4_{i})" for i in r)
    if python:
        lines.append(f"    return [{q_next}], [{qd_next}], a, first")
    elif last_stage:
        positions = "".join(f"x{i} + h * w3_{i}, " for i in r).rstrip()
        lines.append(f"    return ({q_next},), ({qd_next},), a, ({positions}), {_vec('w4_', n)}")
    else:
        lines.append(f"    return ({q_next},), ({qd_next},), a")
    return "\n".join(lines) + "\n"


def _semi_implicit_euler_source(n: int) -> str:
    r = range(n)
    source = "\n".join([
        "def step(f, q, qd, tau, h):",
        f"    {_unpack('x', n)} = q",
        f"    {_unpack('v', n)} = qd",
        f"    a = f({_vec('x', n)}, {_vec('v', n)}, tuple(tau))",
        "    first = getattr(f, 'last_terms', None)",
        f"    {_unpack('a', n)} = a",
        *(f"    w{i} = v{i} + h * a{i}" for i in r),
        f"    return [{', '.join(f'x{i} + h * w{i}' for i in r)}], "
        f"[{', '.join(f'w{i}' for i in r)}], a, first"])
    return source + "\n"


_SOURCES = {"rk4": rk4_source, "semi_implicit_euler": _semi_implicit_euler_source}


def stepper(name: str, n: int) -> Callable:
    """Return the fixed-step method ``name`` ("rk4" or "semi_implicit_euler") for n joints."""
    with _LOCK:
        found = _STEPPERS.get((name, n))
    if found is None:
        namespace: dict = {}
        exec(compile(_SOURCES[name](n), f"<{name} step, n={n}>", "exec"), namespace)
        with _LOCK:
            found = _STEPPERS.setdefault((name, n), namespace["step"])
    return found


def rk4_step(f, q, qd, tau, h):
    """Take an RK4 step in textbook form (element-wise loops): the test oracle of ``stepper``."""
    half = 0.5 * h
    a1 = f(q, qd, tau)
    first = getattr(f, "last_terms", None)
    v2 = [v + half * a for v, a in zip(qd, a1)]
    a2 = f([x + half * v for x, v in zip(q, qd)], v2, tau)
    v3 = [v + half * a for v, a in zip(qd, a2)]
    a3 = f([x + half * v for x, v in zip(q, v2)], v3, tau)
    v4 = [v + h * a for v, a in zip(qd, a3)]
    a4 = f([x + h * v for x, v in zip(q, v3)], v4, tau)
    sixth = h / 6.0
    q_next = [x + sixth * (v + 2.0 * (w2 + w3) + w4)
              for x, v, w2, w3, w4 in zip(q, qd, v2, v3, v4)]
    qd_next = [v + sixth * (b1 + 2.0 * (b2 + b3) + b4)
               for v, b1, b2, b3, b4 in zip(qd, a1, a2, a3, a4)]
    return q_next, qd_next, a1, first


def solve_ivp_stepper(method: str = "DOP853", rtol: float = 1e-12,
                      atol: float = 1e-12) -> Callable:
    """Return a stepper that integrates each step with scipy's ``solve_ivp``."""
    def step(f, q, qd, tau, h):
        n = len(q)

        def rhs(_, y):
            values = y.tolist()
            return np.array(values[n:] + list(f(values[:n], values[n:], tau)))
        a = f(q, qd, tau)
        first = getattr(f, "last_terms", None)
        sol = solve_ivp(rhs, (0.0, h), np.array(q + qd), method=method, rtol=rtol, atol=atol)
        if not sol.success:
            raise InputError(f"solve_ivp ({method}, rtol={rtol:g}) failed over a step: "
                             f"{sol.message}")
        y = sol.y[:, -1].tolist()
        f(y[:n], y[n:], tau)            # (last_terms at the end of the step, for the friction)
        return y[:n], y[n:], a, first
    return step
