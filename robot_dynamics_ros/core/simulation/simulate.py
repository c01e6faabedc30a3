"""``simulate``: the motion of a robot under given torques over a horizon, at a fixed step."""
from __future__ import annotations

import math
import warnings
from typing import Callable, NamedTuple

import numpy as np

from ..errors import InputError
from .simulator import Simulator


class EffortSaturationWarning(UserWarning):
    """Torques above the effort limits were clipped during a simulation (counts in the message)."""


class SimulationResult(NamedTuple):
    """
    A simulated run, one row per step, the initial state included (N + 1 rows for N steps).

    Row k holds the state at ``t[k]``, the torque applied from t[k] to t[k+1] (after saturation)
    and the acceleration at t[k] under that torque (Siciliano et al. 2009, eq. 7.115, with F_s
    sgn(qd): what
    ``core.forward_dynamics`` gives); the last row holds the final state with the torque the
    controller would apply there (not applied, not counted).
    """

    t: np.ndarray                   # (N+1,) s
    q: np.ndarray                   # (N+1, n)
    qd: np.ndarray                  # (N+1, n)
    qdd: np.ndarray                 # (N+1, n)
    tau: np.ndarray                 # (N+1, n) applied (saturated) torques
    joint_names: tuple
    saturation_counts: np.ndarray   # (n,) steps whose torque was clipped to the effort limit
    limit_stop_counts: np.ndarray   # (n,) steps that ended on a position limit (inelastic stop)
    integrator: str
    dt: float


def torque_function(torque, n: int) -> Callable:
    """``torque`` (None, n values, or a callable (t, q, qd) -> tau) as a callable."""
    if torque is None:
        zeros = np.zeros(n)
        return lambda t, q, qd: zeros
    if callable(torque):
        return torque
    constant = np.asarray(torque, dtype=float)
    if constant.shape != (n,):
        raise InputError(f"torque: expected None, {n} values or a callable (t, q, qd) -> tau, "
                         f"got shape {constant.shape}")
    return lambda t, q, qd: constant


def simulate(model, q0, qd0, duration: float, dt: float = 1e-3, torque=None,
             integrator: str = "rk4", **options) -> SimulationResult:
    """
    Integrate the forward dynamics of ``model`` from (q0, qd0) for ``duration`` seconds.

    ``torque``: None (zero), an (n,) constant, or a callable ``(t, q, qd) -> tau`` evaluated at
    the start of each step and held over it (a controller sampled at 1/dt).  ``integrator``:
    "rk4" (default), "semi_implicit_euler", or "solve_ivp" (the adaptive reference).  ``options``
    are :class:`~.simulator.Simulator`'s (``joint_limits``, ``effort_limits``, ``compiled``,
    ``ivp_method``, ``rtol``, ``atol``, ``t0``).  With RK4 the steps are taken in the core's
    compiled kernels (``Simulator.advance``: a fixed torque's whole run in one call, one call
    per step under a controller), the same for every robot: nothing is compiled here.
    The model's motor inertia and friction are included (Siciliano et al. 2009, eqs. 7.111-7.116;
    Coulomb friction as stick-slip, see ``friction.py``); see ``simulator.py`` for effort
    saturation and joint stops.  Torques clipped at the effort limits are counted in the result and
    reported with an :class:`EffortSaturationWarning`.
    """
    sim = Simulator(model, q0, qd0, dt, integrator, **options)
    duration = float(duration)
    if not (math.isfinite(duration) and duration >= 0.0):
        raise InputError(f"duration: must be finite and >= 0, got {duration!r}")
    steps = math.ceil(duration / sim.dt - 1e-9)
    n = model.n
    controller = torque_function(torque, n)
    t = sim.t + np.arange(steps + 1) * sim.dt
    # the run's rows, written in place by the steps (Simulator.advance)
    rows = np.empty((4, steps + 1, n))
    rows[0, 0], rows[1, 0] = sim._q, sim._qd
    # a fixed torque checked once and every step in one call; a controller's at each step
    sim.advance(rows, torque if callable(torque) else controller(0.0, None, None), 0, steps,
                t.tolist())
    q, qd, qdd, tau = rows
    last = controller(float(t[steps]), q[steps].copy(), qd[steps].copy())
    tau[steps] = sim.saturate(sim.torque_list(last), count=False)
    qdd[steps] = sim.acceleration(tau[steps])
    if sim.saturation_counts.any():
        counts = {name: int(c) for name, c in zip(model.joint_names, sim.saturation_counts) if c}
        warnings.warn(f"simulate({model.name}): torques clipped to the effort limits in {counts} "
                      f"of {steps} steps", EffortSaturationWarning, stacklevel=2)
    return SimulationResult(t=t, q=q, qd=qd, qdd=qdd, tau=tau, joint_names=model.joint_names,
                            saturation_counts=sim.saturation_counts.copy(),
                            limit_stop_counts=sim.limit_stop_counts.copy(),
                            integrator=sim.integrator, dt=sim.dt)


__all__ = ["simulate", "SimulationResult", "EffortSaturationWarning"]
