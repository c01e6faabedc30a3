"""
A jerk-limited, torque-feasible time law: a third-order pass after the time-optimal one.

The time-optimal law's acceleration sdd(t) is piecewise constant (bang-bang), so every joint's
jerk is unbounded at its switches.  ``third_order.py`` finds, by a few linear programs on nodes of
the path, the fastest law below it whose acceleration is continuous and whose joint jerk, torque
(with friction, from the one compiled route), velocity, acceleration and path constraints hold at
the nodes.  Its output (the nodes with q, qd, qdd: joint_trajectory_controller interpolates them
with quintics) is re-checked densely as the controller interpolates it (:func:`recheck`); where a
limit is exceeded between the nodes beyond ``MARGIN``, the whole output is slowed uniformly by the
smallest factor that restores it (``uniform_scaling``, Siciliano et al. 2009, Sect. 7.7; jerk
scales by 1/c^3): 0.02-2.7 % of the duration on the bench's paths.

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
from ..uniform import uniform_scaling
from .constraint_set import path_uniform_factor, resolve
from .path import JointPath, TimedPath
from .third_order import NodeData, node_times, solve
from .time_optimal import time_optimal_scaling
from .torques import torque_functions

NODES = 200           # nodes of the third-order pass (the output's points), uniform in the
#                       time-optimal law's time; the path's knots are nodes too
ROUNDS = 2            # linear programs (the first frozen at the time-optimal law)
MARGIN = 2e-4         # kept in hand for the controller's re-sampling
REST = 1e-12          # x of the time-optimal law at most this times its largest: a rest point
MAX_ROUNDS = 4        # re-checks of the output, each slowing it further if needed


def recheck(model, traj: JointTrajectory, limits: Limits, constraints=(), density: int = 10):
    """
    Return the largest usage of each limit kind on ``traj`` as the controller interpolates it.

    {kind: largest abs(value) / limit} for torque (the model's rnea), velocity and acceleration at
    ``density`` samples per interval, jerk exactly per interval (``segment_jerk_max``), and each
    path constraint.
    """
    from ...algorithms.rnea import rnea
    t = np.concatenate([traj.times[:-1, None] + np.diff(traj.times)[:, None]
                        * np.linspace(0.0, 1.0, density, endpoint=False)[None, :]]).ravel()
    t = np.append(t, traj.times[-1])
    q, qd, qdd = traj.sample(t)
    tau = rnea(model, q, qd, qdd)
    effort = np.where(tau >= 0, tau / limits.effort_upper, tau / limits.effort_lower)
    out = {"torque": float(effort.max()),
           "velocity": float((np.abs(qd) / limits.velocity).max()),
           "acceleration": float((np.abs(qdd) / limits.acceleration).max()),
           "jerk": float((traj.segment_jerk_max().max(axis=0) / limits.jerk).max())}
    for c in constraints:
        out[c.name] = float(c.usage(model, q, qd, qdd).max())
    return out


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
    x, warm = upper, None
    for rnd in range(ROUNDS):
        x, u, warm = solve(data, limits, upper, x, first=rnd == 0, warm=warm)
    p = data.points
    qd, qdd = p.dq * np.sqrt(x)[:, None], p.dq * u[:, None] + p.ddq * x[:, None]
    effort = torques.rnea(p.q, qd, qdd)                    # the feedforward at every point
    traj = JointTrajectory(names, t0 + node_times(data, x, u), p.q, qd, qdd, effort)
    # re-checked as it is; slowed (uniformly) only where the check asks for it
    scaled = ScaledTrajectory(trajectory=traj, method="jerk_limited", scale_factor=1.0,
                              duration=float(traj.times[-1]), original_duration=float("nan"),
                              sample_times=traj.times, torques=effort, original_times=traj.times,
                              original_torques=effort, path_times=s, limits=limits)
    for _ in range(MAX_ROUNDS):
        usage = recheck(carried, scaled.trajectory, limits, resolved.path)
        worst = max(usage.values())
        if worst <= 1.0 + MARGIN:
            return _result(scaled, optimal)
        # (jerk scales by 1/c^3, velocity by 1/c, acceleration by 1/c^2, torque: uniform_scaling)
        factor = max(usage["jerk"] ** (1 / 3), usage["velocity"],
                     np.sqrt(usage["acceleration"]),
                     path_uniform_factor(carried, scaled.trajectory, resolved.path))
        scaled = _slower(carried, scaled, factor * (1.0 + MARGIN), limits)   # (its effort)
    raise ScalingError("jerk_limited: the law still exceeds a limit after "
                       f"{MAX_ROUNDS} re-checks ({usage})")


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
    A node closer than a quarter step to a knot is dropped.
    """
    t = np.concatenate([[0.0], np.cumsum(law.step_durations())])
    s = np.interp(np.linspace(0.0, t[-1], NODES + 1), t, law.s)
    inner = knots[(knots > law.s[0]) & (knots < law.s[-1])]
    if inner.size:
        gap = np.abs(s[:, None] - inner[None, :]).min(axis=1)
        s = s[gap >= 0.25 * (law.s[-1] - law.s[0]) / NODES]
    s = np.union1d(s, inner)
    s[[0, -1]] = law.s[[0, -1]]
    return s


def _slower(model, scaled: ScaledTrajectory, factor: float, limits) -> ScaledTrajectory:
    """Return ``scaled`` replayed ``factor`` times slower (uniformly)."""
    return uniform_scaling(model, scaled.trajectory, limits, min_scale=factor)


def _result(scaled: ScaledTrajectory, optimal: ScaledTrajectory) -> ScaledTrajectory:
    t = scaled.trajectory
    return ScaledTrajectory(trajectory=t, method="jerk_limited",
                            scale_factor=float(scaled.duration / optimal.duration),
                            duration=scaled.duration, original_duration=optimal.original_duration,
                            sample_times=scaled.sample_times, torques=scaled.torques,
                            original_times=optimal.sample_times, original_torques=optimal.torques,
                            path_times=scaled.sample_times, limits=scaled.limits, law=optimal.law)
