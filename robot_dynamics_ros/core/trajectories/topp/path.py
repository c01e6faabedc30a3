"""
The geometric path q(s) that the time law follows, and the grid s_0 < ... < s_N on it.

A path is anything with ``joint_names``, ``knots`` (the parameters of its waypoints, where its
derivatives may jump, so every grid holds them) and ``sample(s, side)`` giving (q, q', q'') at
path parameters s (``side="left"``: the left limits, which differ where q'' jumps).  Two kinds:

* :class:`JointPath`: waypoints (N x n) from a planner, with an optional parameter s, through
  which a C2 cubic spline (scipy's CubicSpline) is laid, as toppra's SplineInterpolator does;
* :class:`TimedPath`: a timed
  :class:`~robot_dynamics_ros.core.trajectories.trajectory.JointTrajectory` in its own time (s is
  the original time_from_start, interpolated as joint_trajectory_controller does).

Path file format (``JointPath.from_yaml``; read by the package's one YAML reader)::

    joint_names: [joint1, joint2]
    waypoints:                  # N >= 2 rows, one value per joint; consecutive rows distinct
      - [0.0, 0.0]
      - [0.5, 0.2]
      - [1.0, 1.5]
    s: [0.0, 0.4, 1.0]          # optional, strictly increasing; default: cumulative joint-space
                                # distance between waypoints (chord length)
    boundary: not-a-knot        # optional: not-a-knot (default), clamped (q' = 0 at both ends),
                                # natural (q'' = 0 at both ends)
"""
from __future__ import annotations

import numpy as np
from scipy.interpolate import CubicSpline

from ...errors import TrajectoryError
from ..limits import at_time
from ..trajectory import (MAX_FILE_BYTES, JointTrajectory, column_index, file_joint_names,
                          float_list)
from ...yaml_loader import load_yaml_file

BOUNDARIES = ("not-a-knot", "clamped", "natural")
MAX_WAYPOINTS = 100_000


class JointPath:
    """
    A geometric joint path through waypoints: a C2 cubic spline q(s).

    ``waypoints`` (N, n), N >= 2, finite, consecutive rows distinct; ``s`` (N,) strictly
    increasing (default: cumulative chord length, the Euclidean joint-space distance);
    ``boundary``: the spline's end conditions (see the module docstring).  Invalid input raises
    TrajectoryError naming the field, waypoint and joint.
    """

    def __init__(self, joint_names, waypoints, s=None, boundary: str = "not-a-knot"):
        names = tuple(str(name) for name in joint_names)
        if not names or any(not name for name in names):
            raise TrajectoryError(f"joint_names: expected non-empty names, got {list(names)}")
        for i, name in enumerate(names):
            if name in names[:i]:
                raise TrajectoryError(f"joint_names: '{name}' appears twice")
        try:
            q = np.array(waypoints, dtype=float)
        except (TypeError, ValueError):
            raise TrajectoryError("waypoints: expected an N x n array of numbers") from None
        if q.ndim != 2 or q.shape[1] != len(names):
            raise TrajectoryError(f"waypoints: expected shape (N, {len(names)}) (waypoints x "
                                  "joints "
                                  f"{list(names)}), got {q.shape}")
        if not 2 <= q.shape[0] <= MAX_WAYPOINTS:
            raise TrajectoryError(f"waypoints: a path needs 2 to {MAX_WAYPOINTS} waypoints, got "
                                  f"{q.shape[0]}")
        bad = np.argwhere(~np.isfinite(q))
        if bad.size:
            k, j = bad[0]
            raise TrajectoryError(f"waypoints: waypoint {k} joint '{names[j]}' is not finite "
                                  f"({q[k, j]})")
        repeated = np.flatnonzero(np.all(np.diff(q, axis=0) == 0.0, axis=1))
        if repeated.size:
            k = repeated[0]
            raise TrajectoryError(f"waypoints: waypoint {k + 1} repeats waypoint {k}; consecutive "
                                  "waypoints must differ (drop the repetition)")
        if s is None:
            s = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(q, axis=0), axis=1))])
        else:
            try:
                s = np.array(s, dtype=float)
            except (TypeError, ValueError):
                raise TrajectoryError("s: expected a list of numbers") from None
            if s.shape != (q.shape[0],):
                raise TrajectoryError(f"s: expected {q.shape[0]} values (one per waypoint), got "
                                      f"shape {s.shape}")
            bad = np.flatnonzero(~np.isfinite(s))
            if bad.size:
                raise TrajectoryError(f"s: waypoint {bad[0]} is not finite ({s[bad[0]]})")
            bad = np.flatnonzero(np.diff(s) <= 0.0)
            if bad.size:
                k = bad[0]
                raise TrajectoryError(f"s: waypoint {k + 1} ({s[k + 1]}) is not after waypoint "
                                      f"{k} "
                                      f"({s[k]}); s must be strictly increasing")
        if boundary not in BOUNDARIES:
            raise TrajectoryError(f"boundary: expected one of {list(BOUNDARIES)}, "
                                  f"got {boundary!r}")
        self.joint_names, self.waypoints, self.boundary = names, q, boundary
        self.knots = s
        self.waypoints.setflags(write=False)
        self.knots.setflags(write=False)
        self._spline = CubicSpline(s, q, bc_type=boundary, axis=0)
        self._derivatives = (self._spline.derivative(1), self._spline.derivative(2))

    smooth = True       # C2: q, q' and q'' have no jumps (left and right limits agree)
    c2 = True

    @property
    def n(self) -> int:
        return len(self.joint_names)

    @staticmethod
    def where(s: float) -> str:
        """Describe a point of the path in error messages."""
        return f"s = {s:.6g} (path parameter)"

    def sample(self, s, side: str = "right"):
        """Return (q, q', q'') at ``s`` (the spline is C2: both sides agree)."""
        s = np.asarray(s, dtype=float)
        return self._spline(s), self._derivatives[0](s), self._derivatives[1](s)

    def reordered(self, joint_names) -> "JointPath":
        """Return the same path with its columns in the order of ``joint_names``."""
        joint_names = tuple(joint_names)
        index = column_index(self.joint_names, joint_names)
        if index is None:
            return self
        return JointPath(joint_names, self.waypoints[:, index], self.knots, self.boundary)

    @classmethod
    def from_dict(cls, data, source: str = "<dict>") -> "JointPath":
        """Build from the path format (module docstring); errors name ``source`` and field."""
        try:
            names = file_joint_names(data, "waypoints", {"s", "boundary", "description"})
            rows = data.get("waypoints")
            if not isinstance(rows, (list, tuple)) or not rows:
                raise TrajectoryError("waypoints: expected a list of waypoints (lists of numbers)")
            if len(rows) > MAX_WAYPOINTS:
                raise TrajectoryError(f"waypoints: more than {MAX_WAYPOINTS}")
            q = [float_list(row, len(names), f"waypoints[{k}]") for k, row in enumerate(rows)]
            s = data.get("s")
            if s is not None and (not isinstance(s, (list, tuple)) or any(
                    isinstance(v, bool) or not isinstance(v, (int, float)) for v in s)):
                raise TrajectoryError(f"s: expected a list of {len(q)} numbers (one per waypoint)")
            return cls(names, q, s, data.get("boundary", "not-a-knot"))
        except TrajectoryError as exc:
            raise TrajectoryError(f"{source}: {exc}") from None

    @classmethod
    def from_yaml(cls, path) -> "JointPath":
        """Read a path file (format in the module docstring); errors name the file."""
        data = load_yaml_file(path, "path", TrajectoryError, MAX_FILE_BYTES)
        return cls.from_dict(data, source=str(path))


class TimedPath:
    """A JointTrajectory as a path: s is its time, interpolated as the controller does."""

    smooth = False      # q'' (and, linear or at corners, q') may jump at the waypoints

    def __init__(self, trajectory: JointTrajectory):
        self.trajectory = trajectory
        self.joint_names = trajectory.joint_names
        self.knots = trajectory.times
        # C2 with quintics (positions, velocities and accelerations given: only rounding
        # separates a waypoint's left and right limits)
        self.c2 = trajectory.interpolation == "quintic"

    where = staticmethod(at_time)

    def sample(self, s, side: str = "right"):
        """Return (q, q', q'') at the path parameters ``s`` (the trajectory's times)."""
        return self.trajectory.sample(s, side=side)


def rows_any(mask: np.ndarray) -> np.ndarray:
    """
    Return ``mask.any(axis=1)`` of a (M, n) boolean array with few true entries.

    From the rows of its true entries: numpy reduces over n = 6 or 7 joints per row about ten
    times slower than this on the thousands of rows of a re-check (issue 22).
    """
    out = np.zeros(mask.shape[0], bool)
    out[np.flatnonzero(mask) // mask.shape[1]] = True
    return out


KNOT_JUMP = 1e-3      # a jump of q'' at a knot above this (relative to max |q''|) is held


def grid_knots(path, steps: int, max_segments: int):
    """
    Return the knots a grid of about ``steps`` steps holds, and the steps of each of their gaps.

    At most ``max_segments`` knot segments: every knot, each segment cut into
    ceil(steps / segments) equal steps.  More (a densely sampled path): the grid would follow
    the sampling, not the path (its steps, output points and time grow with the waypoints,
    and near an end at rest the steps of a fine sampling take nanoseconds, issue 22), so only
    the ends and the knots where the law must see the path's left and right limits are held:
    knots at rest (|q'| <= 1e-9 max |q'|: the law stops there), velocity jumps, and on a path
    that is not C2 (a cubic timed trajectory) jumps of q'' above KNOT_JUMP of max |q''|.  Their
    gaps are cut in proportion to their length, ``steps`` in all; the other knots lie inside
    steps, where the collocation and the verification see the path as it is.  The same path
    sampled more densely then gets the same grid.
    """
    knots = path.knots
    segments = knots.size - 1
    if segments <= max_segments:
        return knots, np.full(segments, max(1, -(-steps // segments)))
    _, dq_r, ddq_r = path.sample(knots)
    scale = max(float(np.abs(dq_r).max()), 1e-300)
    hold = np.abs(dq_r).max(axis=1) <= 1e-9 * scale
    if not path.c2:
        _, dq_l, ddq_l = path.sample(knots, side="left")
        acc_scale = max(float(np.abs(ddq_r).max()), 1e-300)
        hold |= np.abs(dq_r - dq_l).max(axis=1) > 1e-9 * scale
        hold |= np.abs(ddq_r - ddq_l).max(axis=1) > KNOT_JUMP * acc_scale
    hold[[0, -1]] = True
    held = knots[hold]
    lengths = np.diff(held)
    counts = np.maximum(1, np.round(steps * lengths / (held[-1] - held[0]))).astype(int)
    return held, counts


def initial_grid(path, steps_per_segment, end_steps: int = 8, end_grading: int = 6,
                 knots=None) -> np.ndarray:
    """
    Return a grid through every knot, equal steps within each knot segment.

    ``steps_per_segment``: one count for every segment, or one per segment; ``knots``: the
    knots to hold (default: all of the path's, see :func:`grid_knots`).  The first and last
    segments, where paths that start or end at rest are traversed at high path speed, get at
    least ``end_steps``.  At an end where the path moves (q' != 0) the
    outermost step is cut ``end_grading`` times in two towards the end: the law starts and ends
    at sd = 0 and, with sdd constant on a step, needs the whole first (last) step to reach
    speed, which costs time in proportion to the step where the velocity limit is reached at once
    (a first-order loss that the grading removes).
    """
    knots = path.knots if knots is None else knots
    counts = np.array(np.broadcast_to(steps_per_segment, knots.size - 1), dtype=int)
    counts[[0, -1]] = np.maximum(counts[[0, -1]], end_steps)
    # per segment i: knots[i] + (knots[i + 1] - knots[i]) * arange(c_i) / c_i
    seg = np.repeat(np.arange(counts.size), counts)
    within = np.arange(seg.size) - np.repeat(np.cumsum(counts) - counts, counts)
    pieces = knots[seg] + np.diff(knots)[seg] * within.astype(float) / counts[seg]
    grid = np.append(pieces, knots[-1])
    # Only ends where the path moves (q' not near 0): at ends at rest the law is free or
    # singular there and handled as such (Grid, near_flat).
    speed = np.abs(path.sample(path.knots)[1]).max(axis=1)
    moving = speed[[0, -1]] > 1e-2 * max(speed.max(), 1e-300)
    halves = 0.5 ** np.arange(1, end_grading + 1)
    extra = [grid[0] + (grid[1] - grid[0]) * halves] if moving[0] else []
    extra += [grid[-1] - (grid[-1] - grid[-2]) * halves] if moving[1] else []
    return np.unique(np.concatenate([grid] + extra))


def bisected(s: np.ndarray) -> np.ndarray:
    """Return the grid with every step cut in two."""
    out = np.empty(2 * s.size - 1)
    out[0::2], out[1::2] = s, 0.5 * (s[:-1] + s[1:])
    return out


class Grid:
    """
    The grid ``s`` (N+1,) on ``path`` and the path's conditions at its points.

    ``corner`` (N+1,): points where the path stops (a velocity jump, or a flat point);
    ``flat``: points where q' = q'' = 0 (sd would be unbounded: the law stops there);
    ``free_start``/``free_end``: the path is at rest at that end with q'' != 0, so sd is free
    there (chosen as large as the limits allow); ``flat_start``/``flat_end``: at rest and flat.
    ``sides``: (q' right, q'' right, q' left, q'' left) at s, when already known.
    """

    def __init__(self, path, s: np.ndarray, sides=None):
        self.path = path
        self.s = s
        self.delta = np.diff(self.s)
        self.N = self.delta.size
        if sides is None:
            _, dq_r, ddq_r = path.sample(self.s)
            _, dq_l, ddq_l = path.sample(self.s, side="left")
        else:
            dq_r, ddq_r, dq_l, ddq_l = sides
        scale = max(np.abs(dq_r).max(), 1e-300)
        # Corners (velocity jumps of the path, e.g. linear interpolation) force a stop.
        self.corner = rows_any(np.abs(dq_r - dq_l) > 1e-9 * scale)
        self.corner[[0, -1]] = False
        acc_scale = max(np.abs(ddq_r).max(), 1e-300)

        def at_rest(v):
            return bool(np.abs(v).max() <= 1e-9 * scale)

        def regular(a):
            return bool(np.abs(a).max() > 1e-6 * acc_scale)
        self.free_start = at_rest(dq_r[0]) and regular(ddq_r[0])
        self.free_end = at_rest(dq_l[-1]) and regular(ddq_l[-1])
        # Ends nearly at rest (|q'| below 1 % of its largest value, e.g. a spline through a
        # rest-to-rest motion's samples): treated like ends at rest where the output is made.
        self.rest_start = bool(np.abs(dq_r[0]).max() <= 1e-2 * scale)
        self.rest_end = bool(np.abs(dq_l[-1]).max() <= 1e-2 * scale)
        self.flat_start = at_rest(dq_r[0]) and not self.free_start
        self.flat_end = at_rest(dq_l[-1]) and not self.free_end
        # Interior flat points (q' = q'' = 0 on both sides, e.g. a waypoint with zero velocity and
        # acceleration): sd is unbounded there, the law is singular; stop there as at flat ends.
        rest = ~rows_any(np.maximum(np.abs(dq_r), np.abs(dq_l)) > 1e-9 * scale)
        still = ~rows_any(np.maximum(np.abs(ddq_r), np.abs(ddq_l)) > 1e-6 * acc_scale)
        self.flat = rest & still
        self._near_flat = {}
        self.flat[[0, -1]] = [self.flat_start, self.flat_end]
        self.corner |= self.flat
        self.corner[[0, -1]] = False

    def near_flat(self, segments: int = 3, steps: int = 8) -> np.ndarray:
        """
        Return the steps near a point where the path is at rest (a mask).

        Steps within ``segments`` knot segments, or ``steps`` grid steps, of a flat point or an
        end at rest (where the law starts from or comes to sd = 0, or sd grows large while q'
        vanishes): the law is far from quadratic in time there.
        """
        key = (segments, steps)                   # (asked for twice per grid: computed once)
        if key not in self._near_flat:
            self._near_flat[key] = near = self._near(segments, steps)
            near.setflags(write=False)
        return self._near_flat[key]

    def _near(self, segments: int, steps: int) -> np.ndarray:
        knots = self.path.knots
        K = knots.size
        near = np.zeros(self.N, bool)
        special = self.flat.copy()
        special[0] |= self.free_start or self.rest_start
        special[-1] |= self.free_end or self.rest_end
        for k in np.flatnonzero(special):
            i = int(np.searchsorted(knots, self.s[k]))
            lo, hi = knots[max(i - segments, 0)], knots[min(i + segments, K - 1)]
            near |= (self.s[1:] > lo) & (self.s[:-1] < hi)
            near[max(k - steps, 0):k + steps] = True
        return near
