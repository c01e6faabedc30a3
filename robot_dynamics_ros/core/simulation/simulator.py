"""
A stepping simulator: the state of one robot advanced by fixed steps, torque held per step.

``simulate`` runs it over a horizon; the simulator node steps it in real time with the latest
effort command.  Per step (``Simulator.step(tau)``):

1. **Effort saturation.**  Each |tau_i| above the joint's effort limit is clipped to the limit and
   counted (``saturation_counts``, per joint; ``simulate`` warns with the counts): never silent.
2. **Integration** of qdd = B^{-1}(tau - n(q, qd)) (``dynamics.py``: rotors, viscous and
   regularised Coulomb friction, see ``friction.py``) by the chosen integrator
   (``integrators.py``).
3. **Joint position limits, as an inelastic stop.**  A joint that ends the step beyond a limit is
   put back on the limit and its velocity into the limit is removed (a perfectly plastic impact:
   no bounce, no energy returned); a velocity away from the limit is kept, so the joint leaves the
   stop as soon as the torque pulls it away.  A joint pushed into its stop stays there.  Each step
   that ends at a stop is counted (``limit_stop_counts``, per joint).
4. A state that is no longer finite (a step far too large for the torques or the friction
   regularisation) raises ``InputError`` with the time and joint, instead of returning garbage.

The model is only read; all state lives in the simulator.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from ..errors import InputError
from ..inputs import joint_arrays
from .dynamics import ForwardDynamics
from .friction import coulomb_velocity as default_coulomb_velocity
from .integrators import INTEGRATORS, solve_ivp_stepper, stepper


def positive_finite(value, name: str) -> float:
    """``value`` as a float; InputError naming it unless it is finite and > 0."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name}: expected a number, got {value!r}") from None
    if not (math.isfinite(x) and x > 0.0):
        raise InputError(f"{name}: must be finite and > 0, got {value!r}")
    return x


class Simulator:
    """
    The state (t, q, qd) of ``model``, advanced by :meth:`step`.

    ``dt`` step [s]; ``integrator`` "rk4" (default), "semi_implicit_euler" or "solve_ivp"
    (``ivp_method``, ``rtol``, ``atol``: scipy's settings, default DOP853 at 1e-12);
    ``joint_limits`` / ``effort_limits`` switch the position stops and the torque saturation;
    ``coulomb_velocity`` v_s of the regularised Coulomb friction (default: see ``friction.py``);
    ``implementation`` "auto" / "generated" / "core" (``dynamics.py``).
    """

    def __init__(self, model, q0, qd0=None, dt: float = 1e-3, integrator: str = "rk4", *,
                 t0: float = 0.0, joint_limits: bool = True, effort_limits: bool = True,
                 coulomb_velocity=None, implementation: str = "auto", ivp_method: str = "DOP853",
                 rtol: float = 1e-12, atol: float = 1e-12):
        if qd0 is None:
            qd0 = np.zeros(model.n)
        (q0, qd0), batched = joint_arrays(model, q0=q0, qd0=qd0)
        if batched:
            raise InputError(f"q0, qd0: expected one state of shape ({model.n},), got {q0.shape}")
        self.model = model
        self.dt = positive_finite(dt, "dt")
        if integrator not in INTEGRATORS:
            raise InputError(f"integrator: '{integrator}' is not one of {list(INTEGRATORS)}")
        self.integrator = integrator
        if integrator == "solve_ivp":
            self._step = solve_ivp_stepper(ivp_method, positive_finite(rtol, "rtol"),
                                           positive_finite(atol, "atol"))
        else:
            self._step = stepper(integrator, model.n)
        self.joint_limits, self.effort_limits = bool(joint_limits), bool(effort_limits)
        if self.joint_limits:
            outside = np.flatnonzero((q0 < model.lower) | (q0 > model.upper))
            if outside.size:
                i = int(outside[0])
                raise InputError(f"q0: joint '{model.joint_names[i]}' starts at {q0[i]:g}, "
                                 f"outside its limits [{model.lower[i]:g}, {model.upper[i]:g}] "
                                 "(or pass joint_limits=False)")
        self.coulomb_velocity = default_coulomb_velocity(model, q0, self.dt, coulomb_velocity)
        self.dynamics = ForwardDynamics(model, self.coulomb_velocity, implementation)
        self.t0 = float(t0)
        self.steps = 0
        self._q, self._qd = q0.tolist(), qd0.tolist()
        self._lower, self._upper = model.lower.tolist(), model.upper.tolist()
        self._effort = model.effort_limit.tolist()
        self._min_limit = min(self._effort)
        self.saturation_counts = np.zeros(model.n, dtype=np.int64)
        self.limit_stop_counts = np.zeros(model.n, dtype=np.int64)

    # -- state ---------------------------------------------------------------------------------
    @property
    def t(self) -> float:
        """Return the current time in seconds: t0 + steps * dt, without summed rounding."""
        return self.t0 + self.steps * self.dt

    @property
    def q(self) -> np.ndarray:
        return np.array(self._q)

    @property
    def qd(self) -> np.ndarray:
        return np.array(self._qd)

    def torque_list(self, tau) -> list:
        """Return ``tau`` (n numbers, None for zero) as a new list of floats, or InputError."""
        n = self.model.n
        if tau is None:
            return [0.0] * n
        kind = type(tau)
        if kind is np.ndarray and tau.dtype == float and tau.shape == (n,):
            values = tau.tolist()
        elif (kind is list or kind is tuple) and len(tau) == n and all(
                type(x) is float for x in tau):
            values = list(tau)
        else:
            try:
                a = None if np.iscomplexobj(tau) else np.asarray(tau, dtype=float)
            except (TypeError, ValueError):
                a = None
            if a is None or a.shape != (n,):
                raise InputError(f"tau at t = {self.t:.6g} s: expected {n} torques for robot "
                                 f"'{self.model.name}', got shape {np.shape(tau)}")
            values = a.tolist()
        if not math.isfinite(sum(values)):
            i = next(i for i, x in enumerate(values) if not math.isfinite(x))
            raise InputError(f"tau at t = {self.t:.6g} s: non-finite torque {values[i]} for joint "
                             f"'{self.model.joint_names[i]}'")
        return values

    def saturate(self, tau: list, count: bool = True) -> list:
        """Clip ``tau`` (a list, changed in place) to the effort limits, counted per joint."""
        bound = self._min_limit
        if not self.effort_limits or (max(tau) <= bound and min(tau) >= -bound):
            return tau
        for i, (x, limit) in enumerate(zip(tau, self._effort)):
            if x > limit or x < -limit:
                tau[i] = limit if x > 0.0 else -limit
                if count:
                    self.saturation_counts[i] += 1
        return tau

    def acceleration(self, tau=None) -> np.ndarray:
        """Return qdd at the current state under ``tau`` (saturated, not counted)."""
        tau = self.saturate(self.torque_list(tau), count=False)
        return np.array(self.dynamics(self._q, self._qd, tau))

    # -- stepping ------------------------------------------------------------------------------
    def step(self, tau=None):
        """
        Advance by dt with ``tau`` held.

        Returns the applied (saturated) torque and qdd at the step's start, as lists.
        """
        applied = self.saturate(self.torque_list(tau))
        q, qd, qdd = self._step(self.dynamics, self._q, self._qd, applied, self.dt)
        if self.joint_limits:
            self._stop_at_limits(q, qd)
        if not math.isfinite(sum(q) + sum(qd)):
            i = next(i for i in range(len(q))
                     if not (math.isfinite(q[i]) and math.isfinite(qd[i])))
            raise InputError(f"simulation of '{self.model.name}' diverged at t = "
                             f"{self.t + self.dt:.6g} s (joint '{self.model.joint_names[i]}'): "
                             f"dt = {self.dt:g} s is too large for these torques, or "
                             "coulomb_velocity too small for it")
        self._q, self._qd = q, qd
        self.steps += 1
        return applied, qdd

    def _stop_at_limits(self, q: list, qd: list):
        """Put a joint beyond a limit on it and remove its velocity into it (inelastic stop)."""
        lower, upper = self._lower, self._upper
        if all(map(operator.le, lower, q)) and all(map(operator.le, q, upper)):
            return
        for i, (x, lo, hi) in enumerate(zip(q, lower, upper)):
            if x > hi:
                q[i] = hi
                if qd[i] > 0.0:
                    qd[i] = 0.0
                self.limit_stop_counts[i] += 1
            elif x < lo:
                q[i] = lo
                if qd[i] < 0.0:
                    qd[i] = 0.0
                self.limit_stop_counts[i] += 1
