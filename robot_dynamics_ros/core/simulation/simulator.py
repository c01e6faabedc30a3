"""
A stepping simulator: the state of one robot advanced by fixed steps, torque held per step.

``simulate`` runs it over a horizon; the simulator node steps it in real time with the latest
effort command.  Per step (``Simulator.step(tau)``):

1. **Effort saturation.**  Each |tau_i| above the joint's effort limit is clipped to the limit and
   counted (``saturation_counts``, per joint; ``simulate`` warns with the counts): never silent.
2. **Integration** of qdd = B^{-1}(tau - n_v(q, qd)) (``dynamics.py``: rotors and viscous
   friction) by the chosen integrator (``integrators.py``), then **Coulomb friction** as an
   implicit stick-slip step (``friction.py``): sticking joints stay exactly still, sliding ones
   lose dt F_s of momentum, nothing chatters.
3. **Joint position limits, as an inelastic stop.**  A joint that ends the step beyond a limit is
   put back on the limit and its velocity into the limit is removed (a perfectly plastic impact:
   no bounce, no energy returned); a velocity away from the limit is kept, so the joint leaves the
   stop as soon as the torque pulls it away.  A joint pushed into its stop stays there.  Each step
   that ends at a stop is counted (``limit_stop_counts``, per joint).
4. A state that is no longer finite (a step far too large for the torques, e.g. a stiff viscous
   friction) raises ``InputError`` with the time and joint, instead of returning garbage.

The model is only read; all state lives in the simulator.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from ..errors import InputError, SingularityError
from ..inputs import joint_arrays
from .dynamics import ForwardDynamics
from ..algorithms.rnea import gravity_torques
from ..algorithms.stick_slip import N_FRICTION_INDEX_ROWS
from ..control.friction import coulomb_levels
from .friction import CoulombStep
from .integrators import INTEGRATORS, solve_ivp_stepper, stepper

_FLOAT64 = np.dtype(float)       # (an identity test: other dtypes take the converting path)


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
    ``compiled`` "auto" / True / False: the steps in the core's compiled kernels (``dynamics.py``:
    one call per RK4 step, also while friction holds joints; generic over the model, so nothing
    is compiled for a new robot) or in plain Python.
    """

    def __init__(self, model, q0, qd0=None, dt: float = 1e-3, integrator: str = "rk4", *,
                 t0: float = 0.0, joint_limits: bool = True, effort_limits: bool = True,
                 compiled="auto", ivp_method: str = "DOP853", rtol: float = 1e-12,
                 atol: float = 1e-12):
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
        if self.effort_limits:
            model.require_limits(("effort",), "torque saturation (effort_limits)",
                                 "effort_limits=False")
        if self.joint_limits:
            outside = np.flatnonzero((q0 < model.lower) | (q0 > model.upper))
            if outside.size:
                i = int(outside[0])
                raise InputError(f"q0: joint '{model.joint_names[i]}' starts at {q0[i]:g}, "
                                 f"outside its limits [{model.lower[i]:g}, {model.upper[i]:g}] "
                                 "(or pass joint_limits=False)")
        dry = [model.joint_names[i] for i in model.coupled_drives
               if model.coulomb[i] != 0.0 or model.joint_coulomb[i] != 0.0]
        if dry:
            raise InputError(f"{model.name}: the drive(s) of joint(s) {dry} move with other "
                             "joints (coupling) and have Coulomb friction: the simulator's "
                             "stick-slip step is per joint, so it cannot simulate them (set "
                             "their friction.coulomb to 0 for a run without it)")
        self.dynamics = ForwardDynamics(model, compiled)
        self.coulomb = CoulombStep(model, self.dynamics.solve)
        self._fast = self.dynamics.accelerations if integrator != "solve_ivp" else None
        # compiled RK4: the whole step is one call into the core's kernels, also while friction
        # holds joints (the Coulomb step compiled with it: core/algorithms/stick_slip.py)
        self._fast_rk4 = self.dynamics.rk4_step if integrator == "rk4" else None
        self._fast_coulomb = self.dynamics.rk4_coulomb_step if integrator == "rk4" else None
        self._coulomb_forces = model.coulomb.astype(float)
        # dry friction that grows with the load (F_l |g(q)|, core.control.friction): its level
        # is set before every step from the step's starting position (held over the step)
        self._load_dependent = bool(np.any(model.coulomb_load))
        if self._load_dependent:
            self._set_coulomb_levels(q0)
        # positions take the friction's velocity change over half the step (the impulse is
        # spread over it), semi-implicit Euler's over the whole step (they use the new velocity)
        self._friction_share = self.dt * (1.0 if integrator == "semi_implicit_euler" else 0.5)
        self._zero_bias = (0.0,) * model.n
        self.t0 = float(t0)
        self.steps = 0
        self._q, self._qd = q0.tolist(), qd0.tolist()
        self._lower, self._upper = model.lower.tolist(), model.upper.tolist()
        self._effort = model.effort_limit.tolist()
        self._min_limit = min(self._effort)
        # (one array, two views: the compiled steps add to both in one argument)
        self._counts = np.zeros((2, model.n), dtype=np.int64)
        self.saturation_counts, self.limit_stop_counts = self._counts[0], self._counts[1]
        self.last_applied: list | None = None      # the torque of the last step (saturated)
        # the whole step compiled (advance): RK4 on the kernels, friction levels fixed
        self._run_steps = (self.dynamics.simulate_steps
                           if integrator == "rk4" and not self._load_dependent else None)
        if self._run_steps is not None:
            self._params = np.array([model.lower, model.upper, model.effort_limit,
                                     model.coulomb, model.viscous_quadratic], dtype=float)
            self._limits = (1 if self.joint_limits else 0) | (2 if self.effort_limits else 0)
            self._index_work = np.zeros((N_FRICTION_INDEX_ROWS, model.n), dtype=np.int64)

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

    def torque_list(self, tau, name: str = "tau") -> list:
        """Return ``tau`` (n numbers, None for zero) as a new list of floats, or InputError."""
        n = self.model.n
        if tau is None:
            return [0.0] * n
        kind = type(tau)
        if kind is np.ndarray and tau.dtype is _FLOAT64 and tau.shape == (n,):
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
                raise InputError(f"{name} at t = {self.t:.6g} s: expected {n} torques for robot "
                                 f"'{self.model.name}', got shape {np.shape(tau)}")
            values = a.tolist()
        if not math.isfinite(sum(values)):
            i = next(i for i, x in enumerate(values) if not math.isfinite(x))
            raise InputError(f"{name} at t = {self.t:.6g} s: non-finite torque {values[i]} for "
                             f"joint '{self.model.joint_names[i]}'")
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
        """Return qdd at the current state under ``tau`` (saturated, not counted), as 7.115."""
        tau = self.saturate(self.torque_list(tau), count=False)
        if self._load_dependent:
            self._set_coulomb_levels(self._q)
        qdd = self.dynamics(self._q, self._qd, tau)
        return np.array(self._with_coulomb(qdd, self.dynamics.last_terms, self._qd))

    def _with_coulomb(self, qdd: list, terms, qd: list) -> list:
        """Return ``qdd`` minus B^{-1} F_s sgn(qd) (7.115, sgn(0) = 0; F_s: the step's levels)."""
        torque, any_moving = [0.0] * self.model.n, False
        for i, fs in self.coulomb.joints:
            if qd[i] != 0.0:
                torque[i], any_moving = (fs if qd[i] > 0.0 else -fs), True
        if not any_moving or terms is None:
            return qdd
        change = self.dynamics.solve(terms[:self.model.n] + (self._zero_bias,), torque)
        return [a - c for a, c in zip(qdd, change)]

    # -- stepping ------------------------------------------------------------------------------
    def step(self, tau=None, acceleration: bool = False, external=None):
        """
        Advance by dt with ``tau`` held.

        ``external``: an external joint torque held over the step too (n numbers, e.g. J^T F of
        a wrench F applied to the robot at the tool, Siciliano et al. eq. 3.111): added to the
        dynamics after the saturation of ``tau`` and not part of the returned (reported) torque.
        Returns the applied (saturated) torque and, with ``acceleration``, qdd at the step's
        start (Siciliano et al. 2009, eq. 7.115, Coulomb friction F_s sgn(qd)), as lists.
        """
        applied = self.saturate(self.torque_list(tau))
        driving = applied if external is None else [
            a + e for a, e in zip(applied, self.torque_list(external, "external"))]
        q0, qd0 = self._q, self._qd
        if self._load_dependent:
            self._set_coulomb_levels(q0)
        sliding = self._sliding_step(q0, qd0, driving) if self.coulomb.joints else None
        if sliding is not None:
            q, qd, qdd = sliding
        elif not self.coulomb.joints:
            q, qd, qdd = self._integrate(q0, qd0, driving)
        elif self._fast_coulomb is not None and self._compiled_coulomb(q0, qd0, driving):
            q, qd, qdd = self._compiled
        else:
            q, qd, qdd, first = self._step(self.dynamics, q0, qd0, driving, self.dt)
            after = self.coulomb(self.dynamics.last_terms, qd, self.dt)
            if after is not qd:
                # a joint at rest that stays at rest (stuck) keeps its position exactly
                share = self._friction_share
                q = [x0 if a == 0.0 and v0 == 0.0 else x + share * (a - b)
                     for x, a, b, x0, v0 in zip(q, after, qd, q0, qd0)]
                qd = after
            if acceleration:
                qdd = self._with_coulomb(qdd, first, qd0)
        if self.joint_limits:
            self._stop_at_limits(q, qd)
        if not math.isfinite(sum(q) + sum(qd)):
            i = next(i for i in range(len(q))
                     if not (math.isfinite(q[i]) and math.isfinite(qd[i])))
            raise InputError(f"simulation of '{self.model.name}' diverged at t = "
                             f"{self.t + self.dt:.6g} s (joint '{self.model.joint_names[i]}'): "
                             f"dt = {self.dt:g} s is too large for these torques")
        self._q, self._qd = q, qd
        self.steps += 1
        self.last_applied = applied
        return applied, qdd

    def advance(self, rows: np.ndarray, torque, first: int, last: int, times=None) -> None:
        """
        Take the steps ``first`` .. ``last`` - 1 of a run held in ``rows``.

        ``rows`` (4, N + 1, n): q, qd, qdd and the applied torque per step, as
        :class:`~.simulate.SimulationResult`'s; row ``first``'s q, qd must be the current
        state.  ``torque``: n values held over every step, or a controller ``(t, q, qd) ->
        tau`` called at the start of step k with ``times[k]`` and copies of row k's state.
        Each step is :meth:`step` (``acceleration=True``): row k gets the applied torque and
        qdd, row k + 1 the state after it.  With the compiled RK4 (``_run_steps``; not for
        load-dependent friction) the steps are taken by ``kernels.simulate_steps``, the same
        operations as :meth:`step` in machine code with nothing allocated per step: a fixed
        torque's run in one call, one call per step under a controller.  A step the kernel
        does not take (a torque or state that is not finite, a singular B) is taken by
        :meth:`step`, which raises the error naming the cause.
        """
        base = self.steps - first
        controller = torque if callable(torque) else None
        command = None if controller is not None else self._command(torque)
        if self._run_steps is None:
            for k in range(first, last):
                if controller is not None:
                    command = controller(times[k], rows[0, k].copy(), rows[1, k].copy())
                rows[3, k], rows[2, k] = self.step(command, True)
                rows[0, k + 1], rows[1, k + 1] = self._q, self._qd
            return
        run, params, stuck, counts, iw = self._run_steps, self._params, self.coulomb._stuck, \
            self._counts, self._index_work
        dt, share, limits = self.dt, self._friction_share, self._limits
        self.coulomb.may_stick = True           # (the kernel may set joints stuck)
        if controller is None:
            k = first
            while k < last:
                k = run(params, stuck, counts, iw, command, rows, dt, share, limits, k, last)
                if k < last:
                    k = self._python_step(rows, command, base, k)
        else:
            q_rows, qd_rows = rows[0], rows[1]
            array, float64, shape = np.ndarray, _FLOAT64, (self.model.n,)
            for k in range(first, last):
                command = controller(times[k], q_rows[k].copy(), qd_rows[k].copy())
                if type(command) is not array or command.dtype is not float64 or \
                        command.shape != shape:
                    self.steps = base + k               # (the time in its error message)
                    command = self._command(command)
                if run(params, stuck, counts, iw, command, rows, dt, share, limits, k, k + 1) \
                        != k + 1:
                    self._python_step(rows, command, base, k)
        self._q, self._qd = rows[0, last].tolist(), rows[1, last].tolist()
        self.steps = base + last
        if last > first:
            self.last_applied = rows[3, last - 1].tolist()

    def _command(self, tau) -> np.ndarray:
        """Return ``tau`` as the compiled steps take it: n finite floats in an array."""
        if type(tau) is np.ndarray and tau.dtype is _FLOAT64 and tau.shape == (self.model.n,):
            return np.ascontiguousarray(tau)
        return np.array(self.torque_list(tau))

    def _python_step(self, rows: np.ndarray, command, base: int, k: int) -> int:
        """Take step k of :meth:`advance` by :meth:`step` (raises, or writes it); return k + 1."""
        if k < 0:
            raise AssertionError("kernels.simulate_steps refused its arguments")
        self._q, self._qd = rows[0, k].tolist(), rows[1, k].tolist()
        self.steps = base + k
        rows[3, k], rows[2, k] = self.step(command, True)
        rows[0, k + 1], rows[1, k + 1] = self._q, self._qd
        return k + 1

    def _set_coulomb_levels(self, q) -> None:
        """Set the Coulomb step's levels F_s + F_l |g(q)| at the position ``q``."""
        levels = coulomb_levels(self.model, np.asarray(q, dtype=float), gravity_torques)
        self._coulomb_forces = levels
        self.coulomb.set_levels(levels.tolist())

    def _compiled_coulomb(self, q0: list, qd0: list, tau: list) -> bool:
        """
        Take the step with the implicit Coulomb step compiled (``self._compiled``), if finite.

        The same step as the Python branch of :meth:`step` (``algorithms/stick_slip.py`` is
        ``friction.py`` on arrays); False (nothing changed) if the kernel refused the step or
        the state is not finite (a mass matrix that is not positive definite): the Python step
        then raises the error that names the cause.
        """
        stuck = self.coulomb._stuck
        before = stuck.copy()
        self.coulomb.may_stick = True
        out = self._fast_coulomb(q0, qd0, tau, self.dt, self._coulomb_forces, stuck,
                                 self._friction_share)
        if out is not None:
            q, qd, qdd = out[0], out[1], out[2]
            if math.isfinite(sum(q) + sum(qd)):
                self._compiled = (q, qd, qdd)
                return True
        stuck[:] = before
        return False

    def _integrate(self, q0: list, qd0: list, tau: list):
        """
        Return (q, qd, qdd) after one step of the integrator, without Coulomb friction.

        Uses the compiled RK4 step, else the compiled ``accelerations``, when there is one (the
        same dynamics as ``self.dynamics``, without its per-call bookkeeping); if that refuses,
        raises or gives a non-finite state (a mass matrix that is not positive definite, a
        non-finite stage), the step is taken again with ``self.dynamics``, which raises the error
        that names the cause (or gives the same non-finite state, which ``step`` reports).
        """
        if self._fast_rk4 is not None:
            out = self._fast_rk4(q0, qd0, tau, self.dt)
            if out is not None:
                q, qd = out[0], out[1]
                if math.isfinite(sum(q) + sum(qd)):
                    return q, qd, out[2]
        elif self._fast is not None:
            try:
                q, qd, qdd, _ = self._step(self._fast, q0, qd0, tau, self.dt)
                if math.isfinite(sum(q) + sum(qd)):
                    return q, qd, qdd
            except (ValueError, ZeroDivisionError, OverflowError, SingularityError):
                pass
        q, qd, qdd, _ = self._step(self.dynamics, q0, qd0, tau, self.dt)
        return q, qd, qdd

    def _sliding_step(self, q0: list, qd0: list, applied: list):
        """
        Take the step with F_s sgn(qd) held in the integrated torque, if nothing stops.

        While every joint with Coulomb friction slides the same way through the whole step, its
        friction is the constant F_s sgn(qd) and the set-valued step of ``friction.py`` has
        exactly that solution; integrating it with the rest keeps the integrator's order and
        costs nothing extra.  Returns None (the caller takes the implicit step instead) if a
        joint starts at rest or its velocity would reach zero or reverse within the step.
        """
        tau = list(applied)
        joints = self.coulomb.joints
        for i, fs in joints:
            v = qd0[i]
            if v == 0.0:
                return None
            tau[i] -= fs if v > 0.0 else -fs
        q, qd, qdd = self._integrate(q0, qd0, tau)
        for i, _ in joints:
            v = qd[i]
            if (v > 0.0) != (qd0[i] > 0.0) or v == 0.0:
                return None
        self.coulomb.sliding()
        return q, qd, qdd

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
