"""
Excitation trajectories: periodic finite Fourier series minimising the base regressor's condition.

Siciliano et al. 2009 (end of Sect. 7.4) asks for trajectories "rich enough" that the stacked
regressor is well conditioned. Following Swevers et al. (1997), each joint follows a finite Fourier
series with fundamental frequency f = 1 / period and L harmonics,

    qd_i(t) = sum_l a_il cos(2 pi f l t) + b_il sin(2 pi f l t),
    q_i(t)  = q0_i + sum_l (a_il sin(2 pi f l t) - b_il cos(2 pi f l t)) / (2 pi f l),

which is periodic, so the record can be averaged over periods, and band-limited to L f, so that a
low-pass filter at a known frequency keeps it intact (``filtering.py``).  The first harmonic's
coefficients are fixed by the others so that qd(0) = qdd(0) = 0 (a_i1 = -sum_{l>1} a_il,
b_i1 = -sum_{l>1} l b_il): the trajectory starts and, each period, passes at rest at q(0).

The free coefficients minimise log cond(W_b) (the base regressor, ``base_parameters.py``, stacked
over ``samples`` points of one period) with scipy's SLSQP, under the position, velocity,
acceleration and torque limits (``rnea`` of the current model) checked at ``check_samples``
points per period.  The result is checked again on a grid ten times finer and, if any limit is
exceeded there, the amplitudes are shrunk until none is.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.optimize

from ..algorithms import rnea
from ..errors import InfeasibleError, InputError
from ..trajectories import JointTrajectory
from .base_parameters import base_parameters
from .regressor import regressor


class FourierTrajectory(NamedTuple):
    """A periodic trajectory q(t) = q0 + finite Fourier series (module docstring)."""

    frequency: float      # fundamental, Hz
    q0: np.ndarray        # (n,)
    a: np.ndarray         # (n, L) velocity cosine amplitudes
    b: np.ndarray         # (n, L) velocity sine amplitudes

    @property
    def period(self) -> float:
        return 1.0 / self.frequency

    def evaluate(self, t):
        """(q, qd, qdd), each (len(t), n)."""
        t = np.asarray(t, dtype=float)[:, None, None]
        L = self.a.shape[1]
        w = 2.0 * np.pi * self.frequency * np.arange(1, L + 1)
        s, c = np.sin(w * t), np.cos(w * t)
        q = self.q0 + ((self.a * s - self.b * c) / w).sum(axis=-1)
        qd = (self.a * c + self.b * s).sum(axis=-1)
        qdd = ((-self.a * s + self.b * c) * w).sum(axis=-1)
        return q, qd, qdd

    def to_trajectory(self, joint_names, periods: int = 1, rate: float = 100.0) -> JointTrajectory:
        """
        Sample the motion for a trajectory file.

        Samples at ``rate`` Hz over ``periods`` periods, with velocities and accelerations
        (so a joint_trajectory_controller interpolates them with quintics).
        """
        count = int(round(periods * self.period * rate))
        t = np.arange(count + 1) / rate
        q, qd, qdd = self.evaluate(t)
        return JointTrajectory(tuple(joint_names), t, q, qd, qdd)


class Excitation(NamedTuple):
    """An optimised excitation trajectory and the conditioning it reaches."""

    trajectory: FourierTrajectory
    condition_number: float         # cond(W_b) over ``samples`` points of one period
    initial_condition_number: float
    samples: int
    # largest |value| / limit over the period: position, velocity, ...
    peak_ratios: dict


def _unpack(x, n, L, frequency):
    q0 = x[:n]
    a_rest = x[n:n + n * (L - 1)].reshape(n, L - 1)
    b_rest = x[n + n * (L - 1):].reshape(n, L - 1)
    a = np.hstack([-a_rest.sum(axis=1, keepdims=True), a_rest])
    b = np.hstack([-(b_rest * np.arange(2, L + 1)).sum(axis=1, keepdims=True), b_rest])
    return FourierTrajectory(frequency, q0, a, b)


class _Limits(NamedTuple):
    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    effort: np.ndarray


def _stack(xs, n, L, frequency, t):
    """q, qd, qdd for several coefficient vectors at once: each (K, len(t), n)."""
    trajs = [_unpack(x, n, L, frequency) for x in xs]
    out = [np.stack(v) for v in zip(*(tr.evaluate(t) for tr in trajs))]
    return out


def _ratios(model, xs, n, L, frequency, t, limits):
    """
    Return the peak ratios of positions, velocities, accelerations and torques to their limits.

    (K, 4, n): per coefficient vector and joint, the largest |q - middle|, |qd|, |qdd|, |tau|
    over ``t`` relative to the limits (<= 1 is within them).  One batched ``rnea`` call for
    all.
    """
    q, qd, qdd = _stack(xs, n, L, frequency, t)
    K, S = q.shape[:2]
    mid = 0.5 * (limits.upper + limits.lower)
    half = 0.5 * (limits.upper - limits.lower)
    tau = rnea(model, q.reshape(-1, n), qd.reshape(-1, n), qdd.reshape(-1, n)).reshape(K, S, n)
    return np.stack([np.abs(q - mid).max(axis=1) / half, np.abs(qd).max(axis=1) / limits.velocity,
                     np.abs(qdd).max(axis=1) / limits.acceleration,
                     np.abs(tau).max(axis=1) / limits.effort], axis=1)


def _log_conditions(model, base, xs, n, L, frequency, t, friction=None):
    """
    Return log cond(W_b) for several coefficient vectors (one batched regressor call).

    From the eigenvalues of the Gram matrices W_b^T W_b (cond = sqrt(l_max / l_min)): exact to
    rounding for the condition numbers that matter here (up to ~1e6), and much cheaper than
    batched singular value decompositions.
    """
    q, qd, qdd = _stack(xs, n, L, frequency, t)
    K, S = q.shape[:2]
    W = base.columns(regressor(model, q.reshape(-1, n), qd.reshape(-1, n), qdd.reshape(-1, n),
                               friction))
    W = W.reshape(K, S * n, base.count)
    lam = np.linalg.eigvalsh(np.einsum("kij,kil->kjl", W, W))
    return 0.5 * np.log(lam[:, -1] / np.maximum(lam[:, 0], 1e-32 * lam[:, -1]))


def _with_steps(x, step=1e-6):
    """Return x and x + h e_k for every k (forward differences, all evaluated in one batch)."""
    h = step * np.maximum(1.0, np.abs(x))
    return np.vstack([x, x + np.diag(h)]), h


def design_excitation(
        model,
        period: float = 10.0,
        harmonics: int = 5,
        samples: int = 60,
        check_samples: int = 100,
        acceleration_limit=None,
        velocity_scale: float = 0.8,
        effort_scale: float = 0.8,
        position_margin: float = 0.05,
        seed: int = 0,
        maxiter: int = 100,
        on_iteration=None,
        friction=None) -> Excitation:
    """
    Return an excitation trajectory for ``model`` (see the module docstring).

    ``acceleration_limit``: None (only the torque limits bound accelerations), a scalar or (n,)
    in rad/s^2 (m/s^2).  Velocity and effort limits are used at ``velocity_scale`` and
    ``effort_scale`` of the model's; positions keep ``position_margin`` of each joint's range
    (ranges wider than 2 pi are taken as 2 pi around their middle).  ``on_iteration``: called
    with no argument after each optimiser iteration (at most ``maxiter`` times; for a progress
    bar).  ``friction``: the friction kinds whose columns the base regressor has (as
    ``identify``'s; None: the model's own).
    """
    n, L = model.n, int(harmonics)
    if L < 2 or period <= 0 or samples < 2 or maxiter < 1:
        raise InputError(
            f"excitation: need harmonics >= 2, period > 0, samples >= 2, maxiter >= 1 "
            f"(got {harmonics}, {period}, {samples}, {maxiter})")
    model.require_limits(("position", "velocity", "effort"), "an excitation trajectory")
    mid = 0.5 * (model.lower + model.upper)
    half = np.minimum(0.5 * (model.upper - model.lower), np.pi) * (1.0 - position_margin)
    acc = np.full(n, np.inf) if acceleration_limit is None else np.broadcast_to(
        np.asarray(acceleration_limit, dtype=float), (n,)).copy()
    if np.any(~(acc > 0)):
        raise InputError(f"acceleration_limit: must be positive, got {acc.tolist()}")
    limits = _Limits(mid - half, mid + half, model.velocity_limit * velocity_scale, acc,
                     model.effort_limit * effort_scale)
    g0 = np.abs(rnea(model, mid, np.zeros(n), np.zeros(n))) / limits.effort
    if np.any(g0 >= 1.0):
        j = int(np.argmax(g0))
        raise InfeasibleError(
            f"excitation: holding joint '{model.joint_names[j]}' at the middle of its "
            f"range already needs {g0[j]:.3g} x its usable effort",
            joint=model.joint_names[j])
    frequency = 1.0 / period
    base = base_parameters(model, friction)
    t_obj = np.arange(samples) * period / samples
    t_con = np.arange(check_samples) * period / check_samples

    finite = np.isfinite(np.stack([half, limits.velocity, limits.acceleration, limits.effort]))

    def objective(x):
        xs, h = _with_steps(x)
        f = _log_conditions(model, base, xs, n, L, frequency, t_obj, friction)
        return float(f[0]), (f[1:] - f[0]) / h

    def constraint_values(xs):
        return (1.0 - _ratios(model, xs, n, L, frequency, t_con, limits)
                [:, finite]).reshape(len(xs), -1)

    def constraints(x):
        return constraint_values(x[None])[0]

    def constraints_jacobian(x):
        xs, h = _with_steps(x)
        c = constraint_values(xs)
        return ((c[1:] - c[0]) / h[:, None]).T

    def ratios(x):
        return _ratios(model, x[None], n, L, frequency, t_con, limits)[0].max(axis=1)

    def cond(x):
        return float(np.exp(_log_conditions(model, base, x[None], n, L, frequency, t_obj,
                                            friction)[0]))

    rng = np.random.default_rng(seed)
    # start: random amplitudes scaled to a quarter of the position, velocity and acceleration
    # limits, then halved until the torques (gravity and Coulomb friction do not scale) fit
    x = np.concatenate([mid, rng.normal(size=2 * n * (L - 1)) * np.tile(
        np.repeat(limits.velocity / L, L - 1), 2)])
    x[n:] *= 0.25 / max(ratios(x)[:3].max(), 1e-12)
    for _ in range(60):
        if ratios(x)[3] <= 1.0:
            break
        x[n:] *= 0.5
    initial = cond(x)
    res = scipy.optimize.minimize(objective, x, jac=True, method="SLSQP",
                                  constraints=[{"type": "ineq", "fun": constraints,
                                                "jac": constraints_jacobian}],
                                  options={"maxiter": maxiter, "ftol": 1e-6},
                                  callback=None if on_iteration is None
                                  else lambda _x: on_iteration())
    # verify on a grid ten times finer: shrink the amplitudes about q0 until every limit holds;
    # if the optimiser stopped outside the limits, step back towards the feasible start instead
    fine = np.arange(10 * check_samples) * period / (10 * check_samples)

    def feasible(y):
        return _ratios(model, y[None], n, L, frequency, fine, limits).max() <= 1.0

    start = x.copy()
    x = res.x.copy() if np.all(np.isfinite(res.x)) else start.copy()
    for _ in range(20):
        if feasible(x):
            break
        x[n:] *= 0.98
    else:
        # the largest step from the start towards the optimum that is feasible
        low, high = 0.0, 1.0
        for _ in range(30):
            mid_step = 0.5 * (low + high)
            if feasible(start + mid_step * (res.x - start)):
                low = mid_step
            else:
                high = mid_step
        x = start + low * (res.x - start)
        if not feasible(x):
            raise InfeasibleError(
                f"excitation: no trajectory within the limits found for '{model.name}'")
    r = _ratios(model, x[None], n, L, frequency, fine, limits)[0]
    traj = _unpack(x, n, L, frequency)
    peaks = dict(zip(("position", "velocity", "acceleration", "effort"), r.max(axis=1).tolist()))
    return Excitation(traj, cond(x), initial, samples, peaks)
