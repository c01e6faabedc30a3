"""
Time-optimal time law along a given joint path under torque, velocity and acceleration limits.

Beyond Siciliano et al. 2009 (whose Sect. 7.7 only scales time uniformly), the path q(s) of a
trajectory, with s its original time, is replayed with a non-uniform time law s(t).  With sd =
ds/dt, sdd = d2s/dt2 (Siciliano et al. 2009, eqs. 7.119-7.121 and 7.126 with r = s), qd = q'(s) sd
and qdd = q'(s) sdd + q''(s) sd^2, and the torque is linear in (sdd, sd^2) up to friction
(collocation.py).  The pieces, split as toppra splits them:

* ``path.py``: the path and the grid s_0 < ... < s_N (each knot segment cut into equal steps);
* ``collocation.py``: the path and its torque coefficients at 3 collocation points per step (9 on
  refined steps), reused when the grid is bisected;
* ``constraints.py``: torque, velocity and acceleration limits as rows in (u, x) = (sdd, sd^2);
* ``reachability.py``: the backward and forward passes, giving a :class:`TimeLaw`;
* ``law.py``: the law's output points, times rounded to whole nanoseconds;
* ``verify.py``: the output re-checked as joint_trajectory_controller interpolates it;
* ``torques.py``: the inverse dynamics of the path data and re-checks (the generated model on
  numpy columns, where the model allows it).

Viscous friction F_v q' sqrt(x) is linearised at the previous pass's x, starting from the uniform
scaling; two passes.  The grid is bisected until the duration converges (see
:func:`time_optimal_scaling`; a grid whose duration would only be the next one's reference is not
solved, see :func:`_converged_law`); only the grid whose duration converged is verified (the
duration that decides convergence does not depend on the verification).  On the steps where the
output exceeds a limit by more than ``tolerance``: first, when all of them have few output points,
only more output points there (8 per step; the law unchanged, so only those steps' intervals are
checked again); after that, in each round, more output points, 9 collocation points, and every
limit kind that was exceeded (torque, velocity, acceleration) tightened there by its excess; the
law is recomputed and only the changed intervals re-checked.

Output: one point per grid step (4 near flat ends, where the law is far from quadratic in time,
graded so that the count at most halves from a step to the next) with the law's position,
velocity, acceleration and the feedforward effort.  The law's
acceleration jumps at grid points (bang-bang), which a quintic (joint_trajectory_controller with
accelerations) can only smooth with an overshoot of about 16 % of each jump, so
``ScaledTrajectory.for_controller()`` drops the accelerations: the cubic interpolation of
positions and velocities represents a piecewise-constant sdd law faithfully.

Ends: the output starts and ends at rest.  Where the path itself is at rest with a non-zero path
acceleration (q' = 0, q'' != 0), sd is free there (the robot stands still whatever sd is) and is
chosen as large as the limits allow; where the path is flat (q' = q'' = 0, as after a quintic
rest-to-rest segment) sd would grow without bound, and sd = 0 is imposed instead.
Positions-only trajectories are refused (ScalingError): linear interpolation jumps in velocity at
every waypoint, which needs infinite acceleration; uniform scaling handles them.
"""
from __future__ import annotations

import math

import numpy as np

from ...errors import InputError
from ..limits import Limits, ScalingError, check_count, check_positions, static_feasibility
from ..result import ScaledTrajectory
from ..trajectory import JointTrajectory
from ...control.friction import coulomb_friction, quadratic_viscous
from ..uniform import admissible_inverse_scale, friction_torques, uniform_scaling
from .collocation import REFINED, REGULAR, Collocation, GridPoints
from .constraint_set import path_uniform_factor, resolve
from .constraints import Tightening, step_rows
from .law import law_points
from .path import Grid, JointPath, TimedPath, grid_knots, initial_grid, rows_any
from .reachability import TimeLaw, solve_law
from .torques import torque_functions
from .verify import check_path_constraints, verify

DENSE_OUTPUT = 8      # output points per step where fewer do not follow the law closely enough
NEAR_FLAT_OUTPUT = 4  # output points per step near a point where the path is at rest
CONVERGED = 0.01      # relative change of the duration from a grid to its bisection: converged
MAX_LEVELS = 6        # grids up to 2^5 times the first
TRUSTED_STEPS = 400   # from this many steps on, one small change of the duration means converged
TOLERANCE = 7e-4      # checked at 0.07 % of each limit, so that any re-sampling stays within 0.1 %
# Torque and acceleration samples per output interval (velocity: exactly), besides its end.  On
# the benchmark's Puma and Panda paths, 12 more random Panda paths and the shipped Puma and planar
# trajectories, where the torque comes within 0.1 % of a limit, its largest value between 4
# samples (3 and the end) is at most 0.008 % of the limit above the samples' (0.004 % with 6;
# measured at 201 samples per interval), well within the 0.03 % between TOLERANCE and 0.1 %.
# Each sample is one rnea: 4 instead of 6 make the re-check a third cheaper (issue 22).
VERIFY_DENSITY = 3
MAX_FAILED_LEVELS = 2   # converged grids whose law fails the verification before giving up
MAX_GRID_STEPS = 20_000     # grid_steps beyond this are refused (bounds one request's work)
MAX_TOTAL_STEPS = 200_000   # no grid finer than this (bisection stops; memory ~ steps x rows)


def _validate(model, path, points, s_pts, limits: Limits) -> None:
    """Check positions and static feasibility at path points ``s_pts`` (P,) with their data."""
    check_positions(model, s_pts, points.q, path.where)
    static = (points.c + coulomb_friction(model, points.c, points.dq)
              if model.coulomb.any() or model.coulomb_load.any() else points.c)
    static_feasibility(model, s_pts, points.c, static, limits, path.where)


def _first_linearisation(model, regular: Collocation, limits: Limits) -> float:
    """Return x = sd^2 of the uniform scaling, where viscous friction is linearised first."""
    n, p = model.n, regular.points
    xu = admissible_inverse_scale(p.b.reshape(-1, n), regular.viscous.reshape(-1, n),
                                  (p.c + regular.coulomb).reshape(-1, n), limits,
                                  p.dq.reshape(-1, n), p.ddq.reshape(-1, n))
    return max(float(xu.min()), 1e-6) ** 2


def _solve_groups(grid, groups, limits, viscous, x_first, law, tight: Tightening) -> TimeLaw:
    """Solve (two passes with viscous friction, re-linearised at the previous law)."""
    for _ in range(2 if viscous else 1):
        data = []
        for col in groups:
            if not viscous:
                xbar = None
            elif law is None:
                xbar = np.full((col.thetas.size, col.steps.size), x_first)
            else:
                xbar = law.x[col.steps][None, :] + 2.0 * \
                    col.theta_delta * law.u[col.steps][None, :]
            data.append((col.steps, step_rows(col, grid, limits, xbar, tight.at(col.steps))))
        law = solve_law(grid, data)
    return law


def _first_law(model, grid, regular, limits, viscous, x_first, points_per_step, refined=None):
    """
    Solve on ``grid`` before verification; choose the output density.

    The law on ``grid`` before verification and the output density; returns (raw duration,
    state for ``_verified_law``).  Near flat points: more output points and 9 collocation points
    per step (``refined``: that collocation, when already computed).
    """
    per_step = np.full(grid.N, points_per_step)
    near_end = grid.near_flat()
    per_step[near_end] = np.maximum(per_step[near_end], NEAR_FLAT_OUTPUT)
    _grade(per_step)
    refined_steps = np.flatnonzero(near_end)
    groups = [regular]
    if refined_steps.size:
        # (the refined rows override the regular ones of their steps: a regular collocation
        # without those steps would cost more to build than their rows do)
        if refined is None:
            refined = Collocation(model, grid, refined_steps, REFINED, torques=regular.torques)
        groups = [regular, refined]
    law = _solve_groups(grid, groups, limits, viscous, x_first, None, Tightening.none(grid.N,
                                                                                      model.n))
    return law.duration, (law, groups, refined_steps, per_step)


def _verified_law(model, grid, regular, limits, viscous, x_first, t0, verify_density, tolerance,
                  max_rounds, points_per_step, first=None):
    """
    Find a law on ``grid`` whose output passes the verification (or None).

    Solve on ``grid`` (or start from ``first``, the result of ``_first_law``) and verify the
    output as the controller interpolates it; remedies on the steps that fail (see the module
    docstring).  Returns (raw duration, (law, output points, verification, original torques) or
    None).
    """
    n, N = model.n, grid.N
    if first is None:
        first = _first_law(model, grid, regular, limits, viscous, x_first, points_per_step)
    raw, (law, groups, refined_steps, per_step) = first
    per_step = per_step.copy()
    tight, previous, efforts = Tightening.none(N, n), None, None
    end = grid.path.sample(grid.s[-1:])
    for rnd in range(max_rounds):
        out = law_points(grid, law, t0, per_step)
        # One batch: the check samples, the output points' effort (those not computed in an
        # earlier round) and the original trajectory's torque at its end (elsewhere on the grid
        # it is b + c + friction, sd = 1, sdd = 0).
        efforts, fresh = _known_efforts(out, efforts)
        extra = tuple(np.concatenate([a[fresh], b]) for a, b in zip((out.q, out.qd, out.qdd),
                                                                    end))
        output = JointTrajectory(grid.path.joint_names, out.t, out.q, out.qd)
        check = verify(model, output, limits, verify_density, tolerance, extra, out.s, previous,
                       regular.torques)
        previous = (output, check, out.s)
        efforts[1][fresh] = check.extra_torques[:-1]
        path_check = check_path_constraints(model, output, getattr(limits, "path", ()),
                                            tolerance)
        path_failing = (np.zeros(0, int) if path_check is None
                        else np.flatnonzero(path_check.failing))
        if check.passed and not path_failing.size:
            p = regular.points
            original = np.concatenate([p.b[0] + p.c[0] + friction_torques(model, p.dq[0], p.q[0])
                                       - quadratic_viscous(model, p.dq[0]),     # (in b)
                                       check.extra_torques[-1:]])
            return raw, (law, out, check, original, efforts[1])
        step = out.step[check.interval]
        step[-1] = N - 1
        # (a sample at an interval's end is also the next step's: the cubic blends both laws)
        after = out.step[np.minimum(check.interval + 1, out.step.size - 1)]
        after[-1] = N - 1
        failing = check.failing
        path_steps = (out.step[path_failing], np.minimum(out.step[path_failing + 1], N - 1))
        bad_steps = np.union1d(step[failing], path_steps[0])
        if rnd == 0 and np.all(per_step[bad_steps] < DENSE_OUTPUT):
            # First remedy where every failing step has few output points: more of them, the same
            # law (the cubic between few points is the likelier culprit).  Only the intervals of
            # those steps change, so the next check computes only them.
            per_step[bad_steps] = DENSE_OUTPUT
            _grade(per_step)
            continue
        # Remedies on the failing steps, all in one round (each round costs a solve and a check):
        # more output points (the cubic follows the law closer), 9 collocation points, and every
        # limit kind tightened there by its excess (plus the tolerance).
        per_step[bad_steps] = np.maximum(per_step[bad_steps], DENSE_OUTPUT)
        _grade(per_step)
        new = np.setdiff1d(bad_steps, refined_steps)
        if new.size:                     # (later groups override earlier ones on their steps)
            refined_steps = np.union1d(refined_steps, new)
            groups = groups + [Collocation(model, grid, new, REFINED, torques=regular.torques)]
        if failing.any():
            _tighten(tight, check.excess, (step, after), limits)
        if path_failing.size:
            _tighten_path(tight, path_check, path_failing, path_steps, N)
        law = _solve_groups(grid, groups, limits, viscous, law.x, law, tight)
    return raw, None


def _known_efforts(out, known):
    """
    Return ((out, its efforts (K, n), unknown rows NaN), the rows still to compute).

    An output point whose state (q, qd, qdd) is an earlier round's to the bit (``known``: that
    round's (points, efforts)) has that round's effort: after the first remedy (more points, the
    same law) most of them.
    """
    K, n = out.t.size, out.q.shape[1]
    efforts = np.full((K, n), np.nan)
    if known is None:
        return (out, efforts), np.arange(K)
    before, values = known
    j = np.clip(np.searchsorted(before.s, out.s), 0, before.s.size - 1)
    same = before.s[j] == out.s
    for now, then in ((out.q, before.q), (out.qd, before.qd), (out.qdd, before.qdd)):
        same &= ~rows_any(now != then[j])
    efforts[same] = values[j[same]]
    return (out, efforts), np.flatnonzero(~same)


def _grade(per_step: np.ndarray) -> None:
    """
    Raise the output points per step so that they at most halve from a step to the next.

    Where dense output (near a flat point, or after a failed check) meets one point per step, the
    cubic across the first sparse step follows the law worst; grading avoids that jump.
    """
    while True:
        half = np.maximum(np.append(per_step[1:], 0), np.append(0, per_step[:-1])) // 2
        if not np.any(half > per_step):
            return
        np.maximum(per_step, half, out=per_step)


def _tighten(tight: Tightening, excess, steps, limits: Limits) -> None:
    """
    Tighten every limit kind on the steps where the output exceeds it.

    Each exceeded limit of a step is lowered by the largest excess on that step plus the allowed
    tolerance, never below half its value.  ``steps``: arrays of the step of each sample (the
    interval's and the next point's: where a sample lies on a step boundary, the law of either
    step can be the cause; the same step twice counts once).
    """
    span = 0.5 * (limits.effort_upper - limits.effort_lower)
    for value, allowed, amount, cap in (
            (excess.effort_upper, excess.allowed_effort, tight.effort_upper, span),
            (excess.effort_lower, excess.allowed_effort, tight.effort_lower, span),
            (excess.velocity, excess.allowed_velocity, tight.velocity, 0.5 * limits.velocity),
            (excess.acceleration, excess.allowed_acceleration, tight.acceleration,
             0.5 * limits.acceleration)):
        rows, joints = np.nonzero(value > allowed)
        if rows.size:
            increase = np.zeros_like(amount)
            for step in steps:
                np.maximum.at(increase, (step[rows], joints),
                              value[rows, joints] + allowed[joints])
            amount += increase
            np.minimum(amount, cap, out=amount)


def _tighten_path(tight: Tightening, check, intervals, steps, N: int) -> None:
    """
    Tighten each path constraint on the steps of the ``intervals`` where the output breaks it.

    By its excess (a fraction of the limit) plus the tolerance, never below half the limit;
    ``steps``: the step of each interval's start and of its end.
    """
    for i, usage in enumerate(check.usage):
        excess = usage[intervals] - 1.0                          # (I, k)
        rows, parts = np.nonzero(excess > check.tolerance)
        if not rows.size:
            continue
        amount = tight.path.setdefault(i, np.zeros((N, usage.shape[1])))
        increase = np.zeros_like(amount)
        for step in steps:
            np.maximum.at(increase, (step[rows], parts), excess[rows, parts] + check.tolerance)
        amount += increase
        np.minimum(amount, 0.5, out=amount)


def _refuse_positions_only(traj: JointTrajectory):
    """Raise ScalingError naming the waypoint where the linear velocity jumps most."""
    slopes = np.diff(traj.positions, axis=0) / np.diff(traj.times)[:, None]
    jumps = np.abs(np.diff(slopes, axis=0, prepend=0.0, append=0.0))       # (K, n): at each point
    k, j = np.unravel_index(np.argmax(jumps), jumps.shape)
    where = f"joint '{traj.joint_names[j]}' at t = {traj.times[k]:.6g} s (point {k})"
    raise ScalingError(f"time_optimal needs velocities (a C1 path): a positions-only trajectory "
                       f"is "
                       f"interpolated linearly, and its velocity jumps at the waypoints (largest: "
                       f"{where}) would need infinite acceleration, beyond any torque limit; "
                       f"give velocities or use uniform scaling",
                       traj.joint_names[j], float(traj.times[k]))


def _converged_law(model, path, points, regular, limits, viscous, x_first, options,
                   convergence, max_levels):
    """
    Bisect the grid until the duration converges; return the verified law there (or None).

    Only a grid whose duration has converged is verified (the raw duration, which decides
    convergence, does not depend on the verification).  A converged grid whose law fails the
    verification is bisected again, at most MAX_FAILED_LEVELS times; when no grid converges,
    the finest grid whose law verifies is the answer, as if every grid had been verified.
    """
    grid = points.grid()
    # The first grid's duration serves the first convergence tests.  When the bisected grid
    # cannot pass (fewer than TRUSTED_STEPS steps) but the grid after it can, the bisected grid's
    # duration would only be that grid's reference: it is not solved (its path data are computed,
    # the next grid needs them), and the first grid's duration stands in for it: the time lost
    # to the discretisation is first order in the step, so the change over two bisections is
    # 3 times the change over the last one (``span``).
    previous = _solve_groups(grid, [regular], limits, viscous, x_first, None,
                             Tightening.none(grid.N, model.n)).duration
    skip_first = 2 * grid.N < TRUSTED_STEPS <= 4 * grid.N
    last_change, unverified, failed, span = math.inf, [], 0, 1.0
    for level in range(1, max_levels):
        if 2 * (points.s.size - 1) > MAX_TOTAL_STEPS:
            break                              # bounded work: no finer grid
        points = points.bisected()             # path data: only the new points are computed
        if level == 1 and skip_first:          # (only the midpoints: the next grid's points)
            points.add_midpoints()
            _validate(model, path, points.mid, points.mid_s, limits)
            unverified.append(points.s)
            span = 3.0
            continue
        grid = points.grid()
        refined_steps = np.flatnonzero(grid.near_flat())
        points.add_midpoints(points.refined_parts(grid, refined_steps))
        refined = points.refined(grid, refined_steps) if refined_steps.size else None
        regular = points.collocation(grid)
        _validate(model, path, points.mid, points.mid_s, limits)   # the other points: before
        first = _first_law(model, grid, regular, limits, viscous, x_first,
                           options["points_per_step"], refined)
        raw = first[0]
        change = abs(previous - raw) / raw / span
        span = 1.0
        # One small change on a coarse grid can be a plateau (seen on a 4-waypoint cubic path
        # at 150 steps, 2.8 % from the optimum): below TRUSTED_STEPS, two in a row are needed.
        if change <= convergence and (last_change <= convergence or grid.N >= TRUSTED_STEPS):
            _, found = _verified_law(model, grid, regular, limits, viscous, x_first, first=first,
                                     **options)
            if found is not None:
                return found
            failed += 1
            if failed >= MAX_FAILED_LEVELS:
                return None
        else:
            unverified.append(points.s)
        previous, last_change = raw, change
    for s_grid in reversed(unverified):       # verified but not converged: only slower
        grid = Grid(path, s_grid)
        regular = Collocation(model, grid, np.arange(grid.N), REGULAR, torques=points.torques)
        _, found = _verified_law(model, grid, regular, limits, viscous, x_first, **options)
        if found is not None:
            return found
    return None


def time_optimal_scaling(model, path: JointTrajectory | JointPath, constraints=None,
                         grid_steps: int = 150, verify_density: int = VERIFY_DENSITY,
                         tolerance: float = TOLERANCE, max_rounds: int = 6,
                         points_per_step: int = 1, convergence: float = CONVERGED,
                         max_levels: int = MAX_LEVELS, dynamics=None) -> ScaledTrajectory:
    """
    Minimum-time replay of ``path`` within ``constraints`` (default: the model's limits).

    ``constraints``: a list of constraint objects (``constraint_set``: joint torque, velocity,
    acceleration, jerk, a payload, path constraints such as ``ToolSpeedConstraint``), or a
    :class:`Limits` (its torque, velocity and acceleration limits).  The joint jerk limits are
    not kept by this law (piecewise-constant acceleration): ``jerk_limited_scaling`` keeps them.

    ``path``: a timed JointTrajectory (its path in its own time, as the controller interpolates
    it; the output starts at its first time) or a :class:`JointPath` (waypoints through which a
    C2 cubic spline is laid; the output starts at 0, ``original_duration`` and ``scale_factor``
    are NaN).
    ``grid_steps``: about this many steps on the first verified grid (equal within a waypoint
    segment, at least one per segment, at least 8 in the first and last).  The grid is then cut in
    two until the law's duration changes by less than ``convergence`` (relative) from one grid to
    the next (on grids under ``TRUSTED_STEPS`` steps: twice in a row, against plateaus of coarse
    grids): the discretisation loses time in proportion to the step, so the last change
    estimates the remaining distance to the optimum.  The returned trajectory, interpolated
    cubically as joint_trajectory_controller does with positions and velocities, keeps every
    torque and acceleration within ``tolerance`` (relative to the limit) of its limit at
    ``verify_density`` samples per output interval and the interval's end, every velocity on the
    whole interval (exactly: quadratic in time).  ``scale_factor`` is new duration /
    original duration.  A timed trajectory is never refused and never slowed beyond its uniform
    scaling: when no verified law is found within MAX_FAILED_LEVELS converged grids, or the law
    is slower, its ``uniform_scaling`` is returned (``method == "uniform"``).  Raises
    ``ScalingError`` like ``uniform_scaling`` (gravity alone, position limits), and for a
    geometric path without a verified law (never a trajectory that breaks a limit);
    ``InputError`` for fewer than 2 points and options out of range (bounded: ``grid_steps`` at
    most MAX_GRID_STEPS, ``verify_density`` 100, ``max_levels`` 10, ``max_rounds`` 20).
    ``dynamics``: the batched inverse dynamics to evaluate (``rnea(q, qd, qdd)`` and
    ``gravity_torques(q)`` of ``model``, e.g. ``route.select(model)``, or a function
    returning them for a model, e.g. ``route.select`` itself, needed with a payload:
    the dynamics are those of the model carrying it; default: the core's, the same torques,
    slower; see ``torques.py``).
    """
    resolved = resolve(model, constraints)
    limits, model = resolved.limits, resolved.torque_model
    if isinstance(path, JointPath):
        path, t0, original_duration = path.reordered(model.joint_names), 0.0, math.nan
    elif isinstance(path, JointTrajectory):
        traj = path.reordered(model.joint_names)
        if traj.num_points < 2:
            raise InputError(
                f"trajectory: needs at least 2 points to be scaled, got {traj.num_points}")
        if traj.velocities is None:
            _refuse_positions_only(traj)
        path, t0, original_duration = TimedPath(traj), float(traj.times[0]), traj.duration
    else:
        raise InputError(f"path: expected a JointTrajectory or a JointPath, "
                         f"got {type(path).__name__}")
    check_count("grid_steps", grid_steps, 2, MAX_GRID_STEPS)
    check_count("verify_density", verify_density, 2, 100)
    check_count("max_levels", max_levels, 2, 10)
    check_count("max_rounds", max_rounds, 0, 20)
    check_count("points_per_step", points_per_step, 1, DENSE_OUTPUT)
    model.refuse_coupled_friction("time-optimal scaling")
    viscous = bool(np.any(model.viscous != 0.0))
    # Level 0: half the steps, duration only (the reference for the first convergence test).
    knots, per_segment = grid_knots(path, math.ceil(grid_steps / 2), grid_steps)
    points = GridPoints(model, path, initial_grid(path, per_segment, end_steps=4, knots=knots),
                        torques=torque_functions(model, dynamics))
    grid = points.grid()
    regular = points.collocation(grid)
    _validate(model, path, regular.flat_points(), regular.path_points(), limits)
    x_uniform = _first_linearisation(model, regular, limits)
    x_first = x_uniform if viscous else None
    options = dict(t0=t0, verify_density=verify_density, tolerance=tolerance,
                   max_rounds=max_rounds, points_per_step=points_per_step)
    found = _converged_law(model, path, points, regular, limits, viscous, x_first, options,
                           convergence, max_levels)
    # The uniform scaling of a timed trajectory is a feasible law, so a bound: the answer is never
    # slower (checked against its estimate from the collocation points, exactly when needed) and
    # never a refusal.
    uniform, timed = None, isinstance(path, TimedPath)
    path_factor = path_uniform_factor(model, path.trajectory, resolved.path) if timed else 1.0
    if timed and (found is None or found[1].t[-1] - t0 > original_duration * max(
            path_factor, 1.0 / math.sqrt(x_uniform)) * (1.0 + 1e-9)):
        uniform = uniform_scaling(model, path.trajectory, limits, min_scale=path_factor)
        if found is None or uniform.duration <= found[1].t[-1] - t0:
            return uniform
    if found is None:
        raise ScalingError(f"time_optimal: no time law within the limits (tolerance "
                           f"{tolerance:g}) found on grids up to {MAX_FAILED_LEVELS} levels "
                           "beyond convergence")
    law, out, check, original_torques, effort = found
    new_traj = JointTrajectory(path.joint_names, out.t, out.q, out.qd, out.qdd, effort)
    t_check, tau = check.times, check.torques         # (in time order, interval by interval)
    if np.any(np.diff(t_check) < 0.0):
        order = np.argsort(t_check, kind="stable")
        t_check, tau = t_check[order], tau[order]
    path_s = np.interp(t_check, out.t, out.s)
    return ScaledTrajectory(trajectory=new_traj, method="time_optimal",
                            scale_factor=float((out.t[-1] - out.t[0]) / (path.knots[-1]
                                                                         - path.knots[0])
                                               if original_duration == original_duration
                                               else math.nan),
                            duration=float(out.t[-1]), original_duration=original_duration,
                            sample_times=t_check, torques=tau, original_times=law.s,
                            original_torques=original_torques, path_times=path_s, limits=limits,
                            law=law)
