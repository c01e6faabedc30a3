"""
A jerk-limited, torque-feasible time law: a third-order pass after the time-optimal one.

The time-optimal law's acceleration sdd(t) is piecewise constant (bang-bang), so every joint's
jerk is unbounded at its switches.  ``third_order.py`` finds, by a few linear programs on nodes of
the path, the fastest law below it whose acceleration is continuous and whose joint jerk, torque
(with friction, from the one compiled route), velocity, acceleration and path constraints hold at
the nodes.  Its output (the nodes with q, qd, qdd: joint_trajectory_controller interpolates them
with quintics) is re-checked densely as the controller interpolates it (:func:`recheck`); where a
limit is exceeded between the nodes beyond ``MARGIN``, the whole output is slowed uniformly by the
smallest factor that restores it, in closed form on the re-check's samples (Siciliano et al.
2009, Sect. 7.7: velocity scales by 1/c, acceleration by 1/c^2, jerk by 1/c^3, the torque's
parts by 1/c^2, 1/c and 1; :class:`_Check`).

The joint jerk q''' = q' sddd + 3 q'' sd sdd + q''' sd^3 is bounded only where the path has a
third derivative: on a geometric path (``JointPath``, a C2 cubic spline) and on a quintic
trajectory everywhere.  On a timed trajectory interpolated cubically (C1: q'' jumps at its
waypoints) the acceleration would jump at every waypoint passed with sd > 0: its waypoints are
laid on a C2 spline at their times first (``JointPath(names, positions, times)``: the same
waypoints, the path between them changes by the difference of the two interpolations).
"""
from __future__ import annotations

import numpy as np

from ...errors import InputError
from ..limits import Limits, ScalingError
from ..result import ScaledTrajectory
from ..trajectory import JointTrajectory
from ..uniform import admissible_inverse_scale, torque_parts, uniform_scaling
from .constraint_set import resolve
from .path import JointPath, TimedPath
from .third_order import NodeData, node_times, solve
from .time_optimal import time_optimal_scaling
from .torques import torque_functions

NODES = 100           # nodes of the third-order pass (the output's points), uniform in the
#                       time-optimal law's time; the path's knots are nodes too
FIRST_REFERENCE = 0.5  # the first program's rows linearised at this times the time-optimal x:
#                       the jerk rows' tangent (third_order.py) is exact at its reference, and
#                       the jerk-limited law is slower than the time-optimal one (x is bounded
#                       by the latter all the same)
MARGIN = 2e-4         # kept in hand for the controller's re-sampling
REFINE = 8            # samples of the re-check around which it samples 33 times denser
REST = 1e-12          # x of the time-optimal law at most this times its largest: a rest point


def recheck(model, traj: JointTrajectory, limits: Limits, constraints=(), density: int = 10,
            torques=None):
    """
    Return the largest usage of each limit kind on ``traj`` as the controller interpolates it.

    {kind: largest abs(value) / limit} for torque (the model's rnea), velocity and acceleration at
    ``density`` samples per interval, jerk exactly per interval (``segment_jerk_max``), and each
    path constraint; ``torques``: the model's ``Torques`` (``topp.torques``), or None (the core's).
    """
    return _Check(model, traj, limits, constraints, density, torques).usage()


class _Check:
    """
    The output's states where the controller samples it, and the torque's parts there.

    Sampled once: the usage of every limit (:meth:`usage`) and the smallest uniform slowing that
    restores them (:meth:`slowing`) come from the same samples.  Slowed by c (times c, qd / c,
    qdd / c^2), the quintics are the same curves at t / c, so these samples are the slowed
    output's, their torque tau_s / c^2 + viscous / c + static (Siciliano et al. 2009, eq. 7.123)
    and their jerk / c^3: the slowing is computed in closed form, not re-checked.
    """

    def __init__(self, model, traj, limits, constraints, density, torques=None):
        self.model, self.traj, self.limits, self.constraints = model, traj, limits, constraints
        self.torques, self.density = torques, density
        step = np.linspace(0.0, 1.0, density, endpoint=False)
        t = (traj.times[:-1, None] + np.diff(traj.times)[:, None] * step[None, :]).ravel()
        t = np.append(t, traj.times[-1])
        # every segment at the same fractions: its polynomial without a search per sample
        # (JointTrajectory.sample_segments, several times faster than sample(t) here)
        states = zip(traj.sample_segments(step), traj.sample(t[-1:]))
        self._add(*(np.concatenate([inside.reshape(-1, traj.n), last]) for inside, last in states))
        # the torque's peaks fall between samples: refined around the REFINE worst (as uniform
        # scaling refines its own), so that they are found to the 1e-4 the margin allows
        worst = np.argsort(self._effort().max(axis=1))[-REFINE:]
        h = np.diff(t).max()
        local = np.clip((t[worst, None] + np.linspace(-h, h, 33)[None, :]).ravel(),
                        t[0], t[-1])
        self._add(*traj.sample(local))
        self.jerk = traj.segment_jerk_max().max(axis=0)

    def _add(self, q, qd, qdd):
        """Add the states (q, qd, qdd) and their torque's parts."""
        tau_s, friction, g, coulomb = torque_parts(self.model, q, qd, qdd, self.torques)
        parts = (q, qd, qdd, tau_s, friction - coulomb, g + coulomb)
        names = ("q", "qd", "qdd", "tau_s", "viscous", "static")
        for name, value in zip(names, parts):
            old = getattr(self, name, None)
            setattr(self, name, value if old is None else np.concatenate([old, value]))

    def at_points(self, c: float = 1.0) -> np.ndarray:
        """
        Return the torque at the output's points, slowed by ``c``: the inverse dynamics there.

        The first samples are every segment's start and the last point (:meth:`__init__`):
        the output's states themselves (a polynomial at its start is its coefficients).
        """
        index = np.arange(self.traj.num_points) * self.density
        return (self.tau_s[index] / c ** 2 + self.viscous[index] / c + self.static[index])

    def _effort(self):
        """Return the torque's fraction of its limit at every sample."""
        tau, limits = self.tau_s + self.viscous + self.static, self.limits
        return np.where(tau >= 0, tau / limits.effort_upper, tau / limits.effort_lower)

    def usage(self) -> dict:
        limits = self.limits
        out = {"torque": float(self._effort().max()),
               "velocity": float((np.abs(self.qd) / limits.velocity).max()),
               "acceleration": float((np.abs(self.qdd) / limits.acceleration).max()),
               "jerk": float((self.jerk / limits.jerk).max())}
        for c in self.constraints:
            out[c.name] = float(c.usage(self.model, self.q, self.qd, self.qdd).max())
        return out

    def slowing(self) -> float:
        """Return the smallest c >= 1 for which the slowed output keeps every limit here."""
        x = admissible_inverse_scale(self.tau_s, self.viscous, self.static, self.limits,
                                     self.qd, self.qdd).min()
        with np.errstate(divide="ignore"):
            x = min(float(x), float((self.limits.jerk / self.jerk).min()) ** (1.0 / 3.0))
        if not x > 0.0:
            raise ScalingError("jerk_limited: no uniform slowing keeps the law within its "
                               "limits (gravity alone exceeds a torque limit?)")
        factor = max([1.0 / x] + [c.uniform_factor(self.model, self.q, self.qd, self.qdd)
                                  for c in self.constraints])
        return max(1.0, factor)


def jerk_limited_scaling(model, path, constraints=None, dynamics=None,
                         optimal: ScaledTrajectory | None = None, **options) -> ScaledTrajectory:
    """
    Return a law with continuous acceleration that keeps torque, velocity, acceleration and jerk.

    ``constraints`` as for :func:`time_optimal_scaling`, with a ``JointJerkConstraint`` (or a
    Limits with finite ``jerk``); ``optimal``: the time-optimal result of the same call, when
    already computed (else computed here, with ``options``).  The output (``method``
    ``"jerk_limited"``) carries accelerations: the controller interpolates it with quintics, and
    its torque, velocity, acceleration, jerk and path constraints are within ``MARGIN`` of their
    limits at the re-check of :func:`recheck`; ``scale_factor`` is its duration over the
    time-optimal one (the jerk-free optimum), ``law`` the time-optimal law it started from.
    """
    resolved = resolve(model, constraints)
    limits, carried = resolved.limits, resolved.torque_model
    if not np.isfinite(limits.jerk).all():
        raise InputError("jerk_limited: give a jerk limit for every joint (JointJerkConstraint)")
    if optimal is None:
        optimal = time_optimal_scaling(model, path, constraints, dynamics=dynamics, **options)
    if optimal.method != "time_optimal":          # uniform already: it applies the jerk limits
        return _result(uniform_scaling(carried, optimal.trajectory, limits), optimal)
    names, t0 = optimal.trajectory.joint_names, float(optimal.trajectory.times[0])
    grid_path = _c2_path(path, model.joint_names)
    s = _nodes(optimal.law, grid_path.knots)
    torques = torque_functions(carried, dynamics)
    upper = np.interp(s, optimal.law.s, optimal.law.x)
    data = NodeData(carried, grid_path, s, torques, resolved.path,
                    rest=upper <= REST * upper.max())
    upper = np.minimum(upper, (limits.velocity ** 2 /
                               np.maximum(data.points.dq ** 2, 1e-300)).min(axis=1))
    # one program: a second, re-linearised at the first's solution, cost about the time-optimal
    # law's time again and changed the bench's laws' durations by at most 3 % (issue 32)
    x, u = solve(data, limits, upper, FIRST_REFERENCE * upper)
    p = data.points
    qd, qdd = p.dq * np.sqrt(x)[:, None], p.dq * u[:, None] + p.ddq * x[:, None]
    times = node_times(data, x, u)
    # re-checked as it is; slowed (uniformly) only where the check asks for it
    check = _Check(carried, JointTrajectory(names, t0 + times, p.q, qd, qdd), limits,
                   resolved.path, 10, torques)
    c = 1.0
    if max(check.usage().values()) > 1.0 + MARGIN:
        c = check.slowing() * (1.0 + MARGIN)
        times, qd, qdd = times * c, qd / c, qdd / c ** 2
    effort = check.at_points(c)                   # the feedforward at every point (slowed)
    traj = JointTrajectory(names, t0 + times, p.q, qd, qdd, effort)
    return _result(ScaledTrajectory(
        trajectory=traj, method="jerk_limited", scale_factor=1.0,
        duration=float(traj.times[-1]), original_duration=float("nan"),
        sample_times=traj.times, torques=effort, original_times=traj.times,
        original_torques=effort, path_times=s, limits=limits), optimal)


def _c2_path(path, joint_names):
    """Return ``path`` as a C2 path in ``joint_names``' order (module docstring)."""
    if isinstance(path, JointPath):
        return path.reordered(joint_names)
    traj = path.reordered(joint_names)
    if traj.interpolation == "quintic":
        return TimedPath(traj)
    return JointPath(traj.joint_names, traj.positions, traj.times)


def _nodes(law, knots) -> np.ndarray:
    """
    Return the nodes: NODES uniform in the time-optimal law's time, and the path's knots.

    Where the law is slow, the jerk-limited one is slower still: denser nodes there.  The path's
    third derivative jumps at its knots: with them as nodes, it is one polynomial on each step.
    A node closer than a quarter step to a knot is dropped, and so is a node between two knots
    less than 1.5 of its steps (the mean of its two) apart: where the knots are about as dense
    as the nodes (a path through many waypoints: the Puma's 100) they resolve the law already,
    and the program's time grows with its nodes (on the bench's Puma path: 148 nodes before,
    100 now, the law 1.4 % shorter).
    """
    t = np.concatenate([[0.0], np.cumsum(law.step_durations())])
    s = np.interp(np.linspace(0.0, t[-1], NODES + 1), t, law.s)
    inner = knots[(knots > law.s[0]) & (knots < law.s[-1])]
    if inner.size:
        gap = np.abs(s[:, None] - inner[None, :]).min(axis=1)
        right = np.searchsorted(inner, s)
        bounds = np.concatenate([[-np.inf], inner, [np.inf]])
        around = bounds[right + 1] - bounds[right]           # the knot interval holding s
        step = 0.5 * (np.diff(s, prepend=s[0]) + np.diff(s, append=s[-1]))
        s = s[(gap >= 0.25 * (law.s[-1] - law.s[0]) / NODES) & (around > 1.5 * step)]
    s = np.union1d(s, inner)
    s[[0, -1]] = law.s[[0, -1]]
    return s


def _result(scaled: ScaledTrajectory, optimal: ScaledTrajectory) -> ScaledTrajectory:
    t = scaled.trajectory
    return ScaledTrajectory(trajectory=t, method="jerk_limited",
                            scale_factor=float(scaled.duration / optimal.duration),
                            duration=scaled.duration, original_duration=optimal.original_duration,
                            sample_times=scaled.sample_times, torques=scaled.torques,
                            original_times=optimal.sample_times, original_torques=optimal.torques,
                            path_times=scaled.sample_times, limits=scaled.limits, law=optimal.law)
