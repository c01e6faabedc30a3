"""
Joint-space trajectories, interpolated exactly as ros2_controllers' joint_trajectory_controller.

A ``JointTrajectory`` holds K waypoints: ``times`` (K,) (time_from_start, seconds), ``positions``
(K, n) and optional ``velocities``, ``accelerations`` and ``effort`` (K, n).  It is immutable and
validated on construction; every problem raises
:class:`~robot_dynamics_ros.core.errors.TrajectoryError` naming the field, the point and, where
it applies, the joint (bad arguments of its methods raise
:class:`~robot_dynamics_ros.core.errors.InputError`).

Interpolation (``sample``) follows ``Trajectory::interpolate_between_points`` of
joint_trajectory_controller (ros2_controllers, trajectory.cpp), segment by segment:

* positions only                     -> linear: constant velocity, zero acceleration;
* positions + velocities             -> cubic Hermite;
* positions + velocities + accel.    -> quintic matching all three at both ends.

JTC decides per segment from the fields present at both of its ends, and with accelerations but no
velocities it computes nothing (the output stays zero).  Here every point must carry the same
fields and accelerations require velocities; anything else is rejected with a message, so a
trajectory never means something different here and on the controller.  Effort is not
interpolated by the dynamics (it is output only: the feedforward torque per point).

Before times[0] the trajectory holds its first point with zero velocity and acceleration; at and
after times[-1] it gives the last point as stored (missing fields as zero), as JTC does
(``side="left"`` at times[-1] itself gives the limit of the last segment instead).  (JTC
interpolates from the robot's current state towards the first point, which a stand-alone
trajectory cannot know, and after the end holds the last point as given; a trajectory that ends
at rest, which JTC requires by default, behaves identically.)

YAML / dict format (``from_yaml``, ``from_dict``, ``to_dict``)::

    joint_names: [joint1, joint2]
    points:
      - time_from_start: 0.0          # seconds (or {sec: 0, nanosec: 0} as in ROS messages)
        positions: [0.0, 0.0]
        velocities: [0.0, 0.0]        # optional, then in every point
        accelerations: [0.0, 0.0]     # optional, needs velocities, then in every point
      - time_from_start: 0.5
        positions: [1.5708, 1.5708]
        ...

Files are read with the package's one YAML reader (``core/yaml_loader.py``: YAML 1.2 numbers,
duplicate keys refused, at most ``MAX_FILE_BYTES``).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..errors import InputError, TrajectoryError
from ..yaml_loader import load_yaml_file

MAX_FILE_BYTES = 16 << 20       # 16 MiB: about 100,000 points of a 7-joint trajectory
_FIELDS = ("positions", "velocities", "accelerations", "effort")


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=float)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class JointTrajectory:
    """Waypoints of a joint trajectory; see the module docstring for format and interpolation."""

    joint_names: tuple
    times: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray | None = None
    accelerations: np.ndarray | None = None
    effort: np.ndarray | None = None

    def __post_init__(self):
        names = tuple(str(name) for name in self.joint_names)
        if not names:
            raise TrajectoryError("joint_names: empty")
        for i, name in enumerate(names):
            if not name:
                raise TrajectoryError(f"joint_names[{i}]: empty name")
            if name in names[:i]:
                raise TrajectoryError(f"joint_names: '{name}' appears twice")
        n = len(names)
        times = np.asarray(self.times, dtype=float)
        if times.ndim != 1 or times.size == 0:
            raise TrajectoryError(
                f"times: expected a non-empty 1-D array, got shape {times.shape}")
        for k in np.flatnonzero(~np.isfinite(times))[:1].tolist():
            raise TrajectoryError(f"time_from_start: point {k} is not finite ({times[k]})")
        if times[0] < 0.0:
            raise TrajectoryError(f"time_from_start: point 0 is negative ({times[0]} s)")
        for k in np.flatnonzero(np.diff(times) <= 0.0):
            raise TrajectoryError(f"time_from_start: point {k + 1} ({times[k + 1]} s) is not "
                                  f"after point {k} ({times[k]} s); times must be strictly "
                                  "increasing")
        K = times.size
        arrays = {}
        for name in _FIELDS:
            value = getattr(self, name)
            if value is None:
                if name == "positions":
                    raise TrajectoryError("positions: missing")
                arrays[name] = None
                continue
            a = np.asarray(value, dtype=float)
            if a.shape != (K, n):
                raise TrajectoryError(f"{name}: expected shape ({K}, {n}) (points x joints "
                                      f"{list(names)}), "
                                      f"got {a.shape}")
            if not np.isfinite(a).all():
                k, j = np.argwhere(~np.isfinite(a))[0]
                raise TrajectoryError(
                    f"{name}: point {k} joint '{names[j]}' is not finite ({a[k, j]})")
            arrays[name] = _readonly(a)
        if arrays["accelerations"] is not None and arrays["velocities"] is None:
            raise TrajectoryError("accelerations: given without velocities "
                                  "(joint_trajectory_controller "
                                  "does not interpolate such segments); give velocities too")
        object.__setattr__(self, "joint_names", names)
        object.__setattr__(self, "times", _readonly(times))
        for name in _FIELDS:
            object.__setattr__(self, name, arrays[name])

    # ----------------------------------------------------------------- properties
    @cached_property
    def segment_coefficients(self) -> np.ndarray:
        """
        Return the segments' polynomial coefficients, (K-1, 6, n), order 0..5 in local time.

        Those of joint_trajectory_controller's interpolation (orders above
        :attr:`polynomial_degree` are zero); computed when first needed, read-only.
        """
        coefficients = _segment_coefficients(self)
        coefficients.setflags(write=False)
        return coefficients

    @property
    def n(self) -> int:
        """Return the number of joints."""
        return len(self.joint_names)

    @property
    def num_points(self) -> int:
        return self.times.size

    @property
    def duration(self) -> float:
        """time_from_start of the last point."""
        return float(self.times[-1])

    @property
    def polynomial_degree(self) -> int:
        """Return the degree of the segments' polynomials: 1, 3 or 5 (see interpolation)."""
        return {"linear": 1, "cubic": 3, "quintic": 5}[self.interpolation]

    @property
    def interpolation(self) -> str:
        """'linear', 'cubic' or 'quintic' (see the module docstring)."""
        if self.velocities is None:
            return "linear"
        return "cubic" if self.accelerations is None else "quintic"

    # ----------------------------------------------------------------- sampling
    def sample(self, t, side: str = "right"):
        """
        (q, qd, qdd) at time(s) t: each (n,) for a scalar t, (M, n) for an array of M times.

        At a waypoint time the segment that starts there is used, as joint_trajectory_controller
        does; ``side="left"`` uses the segment that ends there instead (the left limit, which
        matters where accelerations jump at waypoints).
        """
        if side not in ("left", "right"):
            raise InputError(f"side: expected 'left' or 'right', got {side!r}")
        scalar = np.ndim(t) == 0
        t = np.atleast_1d(np.asarray(t, dtype=float))
        if t.ndim != 1:
            raise InputError(f"t: expected a scalar or 1-D array of times, got shape {t.shape}")
        if not np.isfinite(t).all():
            raise InputError("t: contains non-finite times")
        q, qd, qdd = self._evaluate(t, side)
        if scalar:
            return q[0], qd[0], qdd[0]
        return q, qd, qdd

    def sample_segments(self, fractions, segments=None):
        """
        Sample every segment at the same local fractions of its duration.

        (q, qd, qdd), each (K-1, F, n): every segment k at the times
        times[k] + f (times[k+1] - times[k]) for the F ``fractions`` f in [0, 1]; with
        ``segments`` (S,) (indices), only those segments, each (S, F, n).

        The same polynomials as :meth:`sample` evaluated per segment without a search; f = 1 gives
        the segment's end (its left limit), so a whole trajectory is checked segment by segment.
        """
        f = np.asarray(fractions, dtype=float)
        if f.ndim != 1 or not np.all((f >= 0.0) & (f <= 1.0)):
            raise InputError(
                f"fractions: expected a 1-D array of values in [0, 1], got {fractions!r}")
        if self.num_points < 2:
            raise InputError("sample_segments: the trajectory has a single point, no segment")
        durations, coeffs = np.diff(self.times), self._coefficients(segments)
        if segments is not None:
            durations = durations[segments]
        return _at_fractions(coeffs, durations, f, self.polynomial_degree)

    def _coefficients(self, segments=None) -> np.ndarray:
        """
        Return :attr:`segment_coefficients`, or those of ``segments`` only.

        Of the segments only (the same arithmetic) when all of them were not needed yet: a
        re-check samples the few segments that changed.
        """
        if segments is None or "segment_coefficients" in self.__dict__:
            coefficients = self.segment_coefficients
            return coefficients if segments is None else coefficients[segments]
        segments = np.asarray(segments)
        key = segments.tobytes()              # (the last subset kept: sampled, then its speeds)
        last = self.__dict__.get("_subset")
        if last is None or last[0] != key:
            last = (key, _segment_coefficients(self, segments))
            object.__setattr__(self, "_subset", last)
        return last[1]

    def segment_speed_max(self, segments=None) -> np.ndarray:
        """
        Return the largest |velocity| of each joint on each segment, exactly: (K-1, n).

        With ``segments`` (S,) (indices): of those segments only, (S, n).

        Linear and cubic segments only (their velocity is constant or quadratic in time: the
        largest |value| lies at an end or at the vertex); quintic trajectories raise InputError.
        """
        if self.polynomial_degree > 3:
            raise InputError("segment_speed_max: quintic segments (accelerations given) are not "
                             "supported")
        if self.num_points < 2:
            raise InputError("segment_speed_max: the trajectory has a single point, no segment")
        # (contiguous (K-1, n) operands: numpy broadcasting a column over n joints, or striding
        # through the coefficient array, costs twice as much on a re-check's 600 segments)
        durations, coefficients = np.diff(self.times), self._coefficients(segments)
        if segments is not None:
            durations = durations[segments]
        T = np.repeat(durations, self.n).reshape(durations.size, self.n)
        c1, c2, c3 = (np.ascontiguousarray(coefficients[:, p]) for p in (1, 2, 3))
        end = np.abs(c1 + (2.0 * c2 + 3.0 * c3 * T) * T)
        with np.errstate(invalid="ignore", divide="ignore"):
            vertex = -c2 / (3.0 * c3)                      # qd' = 2 c2 + 6 c3 tau = 0
            inside = (vertex > 0.0) & (vertex < T)         # (never where c3 = 0: inf or nan)
            # qd at the vertex: c1 + 2 c2 v + 3 c3 v^2 = c1 - c2^2 / (3 c3)
            at_vertex = np.abs(c1 - c2 * c2 / (3.0 * c3), where=inside, out=np.zeros_like(c1))
        return np.maximum(np.maximum(np.abs(c1), end), at_vertex)

    def segment_jerk_max(self) -> np.ndarray:
        """
        Return the largest |jerk| of each joint on each segment, exactly: (K-1, n).

        Within the segments (at the waypoints a cubic's acceleration jumps, as
        joint_trajectory_controller interpolates it): 0 for linear segments, |6 c3| for cubic
        ones, and for quintic ones the largest |6 c3 + 24 c4 tau + 60 c5 tau^2| on the segment
        (at an end or at the vertex of the quadratic).
        """
        if self.num_points < 2:
            raise InputError("segment_jerk_max: the trajectory has a single point, no segment")
        T = np.diff(self.times)[:, None]
        c3, c4, c5 = (self.segment_coefficients[:, p] for p in (3, 4, 5))
        start, end = np.abs(6.0 * c3), np.abs(6.0 * c3 + 24.0 * c4 * T + 60.0 * c5 * T * T)
        with np.errstate(invalid="ignore", divide="ignore"):
            vertex = -24.0 * c4 / (120.0 * c5)             # jerk' = 24 c4 + 120 c5 tau = 0
        inside = (c5 != 0.0) & (vertex > 0.0) & (vertex < T)
        vertex = np.where(inside, vertex, 0.0)
        at_vertex = np.where(inside, np.abs(6.0 * c3 + 24.0 * c4 * vertex
                                            + 60.0 * c5 * vertex * vertex), 0.0)
        return np.maximum(np.maximum(start, end), at_vertex)

    def _evaluate(self, t: np.ndarray, side: str = "right"):
        times, K = self.times, self.times.size
        if K == 1:
            q = np.broadcast_to(self.positions[0], (t.size, self.n)).copy()
            return q, np.zeros_like(q), np.zeros_like(q)
        seg = np.clip(np.searchsorted(times, t, side=side) - 1, 0, K - 2)
        tau = np.clip(t - times[seg], 0.0, times[seg + 1] - times[seg])[:, None]
        q, qd, qdd = _polynomial(self.segment_coefficients[seg], tau, self.polynomial_degree)
        before = t < times[0]
        if before.any():                         # hold the first point at rest
            qd[before] = 0.0
            qdd[before] = 0.0
        # At and after the last point: the point as given (missing fields zero), as JTC's sample()
        # does once "the whole animation has played out"; the left limit only at the point itself.
        end = (t >= times[-1]) if side == "right" else (t > times[-1])
        if end.any():
            q[end] = self.positions[-1]
            qd[end] = 0.0 if self.velocities is None else self.velocities[-1]
            qdd[end] = 0.0 if self.accelerations is None else self.accelerations[-1]
        return q, qd, qdd

    # ----------------------------------------------------------------- conversions
    def reordered(self, joint_names) -> "JointTrajectory":
        """
        Return the same trajectory with its columns in the order of ``joint_names``.

        Raises TrajectoryError naming unknown joints (in the trajectory, not in ``joint_names``)
        and missing ones.
        """
        joint_names = tuple(joint_names)
        index = column_index(self.joint_names, joint_names)
        if index is None:
            return self
        return JointTrajectory(joint_names, self.times,
                               *(None if getattr(self, f) is None else getattr(self, f)[:, index]
                                 for f in _FIELDS))

    @classmethod
    def from_dict(cls, data, source: str = "<dict>") -> "JointTrajectory":
        """Build from the YAML/dict format (module docstring); errors name ``source`` and field."""
        try:
            names = file_joint_names(data, "points", {"header", "name", "description"})
            points = data.get("points")
            if not isinstance(points, (list, tuple)) or not points:
                raise TrajectoryError("points: expected a non-empty list of points")
            times, columns = [], {f: [] for f in _FIELDS}
            for k, point in enumerate(points):
                if not isinstance(point, dict):
                    raise TrajectoryError(f"points[{k}]: expected a mapping")
                extra = set(point) - {"time_from_start", *_FIELDS}
                if extra:
                    raise TrajectoryError(f"points[{k}]: unknown key(s) {sorted(map(str, extra))}")
                if "time_from_start" not in point:
                    raise TrajectoryError(f"points[{k}].time_from_start: missing")
                times.append(_seconds(point["time_from_start"], f"points[{k}].time_from_start"))
                for f in _FIELDS:
                    value = point.get(f)
                    if value is not None and _is_empty(value):  # ROS messages use [] for "absent"
                        value = None
                    if value is not None:
                        value = float_list(value, len(names), f"points[{k}].{f}")
                    columns[f].append(value)
            arrays = {}
            for f in _FIELDS:
                present = [v is not None for v in columns[f]]
                if all(present):
                    arrays[f] = np.array(columns[f])
                elif any(present):
                    k = present.index(not present[0])
                    raise TrajectoryError(f"points[{k}].{f}: given in some points but not in "
                                          "others; "
                                          "give it in every point or in none")
                else:
                    arrays[f] = None
            return cls(tuple(names), np.array(times), **arrays)
        except (TrajectoryError, TypeError) as exc:
            raise TrajectoryError(f"{source}: {exc}") from None

    @classmethod
    def from_yaml(cls, path) -> "JointTrajectory":
        """Read a trajectory file (format in the module docstring); errors name the file."""
        data = load_yaml_file(path, "trajectory", TrajectoryError, MAX_FILE_BYTES)
        return cls.from_dict(data, source=str(path))

    def to_dict(self) -> dict:
        points = []
        for k in range(self.num_points):
            point = {"time_from_start": float(self.times[k])}
            for f in _FIELDS:
                a = getattr(self, f)
                if a is not None:
                    point[f] = [float(x) for x in a[k]]
            points.append(point)
        return {"joint_names": list(self.joint_names), "points": points}


def _is_empty(value) -> bool:
    return isinstance(value, (list, tuple, np.ndarray)) and len(value) == 0


def _seconds(value, where: str) -> float:
    if isinstance(value, dict):
        extra = set(value) - {"sec", "nanosec"}
        if extra:
            raise TrajectoryError(
                f"{where}: unknown key(s) {sorted(map(str, extra))}; expected sec, nanosec")
        sec, nanosec = value.get("sec", 0), value.get("nanosec", 0)
        for name, part in (("sec", sec), ("nanosec", nanosec)):
            if isinstance(part, bool) or not isinstance(part, (int, float)):
                raise TrajectoryError(f"{where}.{name}: expected a number, got {part!r}")
        return float(sec) + 1e-9 * float(nanosec)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TrajectoryError(f"{where}: expected seconds as a number, got {value!r}")
    return float(value)


def column_index(own: tuple, joint_names: tuple) -> list | None:
    """
    Return the columns of ``own`` in the order of ``joint_names`` (None if already so).

    For the ``reordered`` of trajectories and paths: raises TrajectoryError naming the joints of
    ``own`` that ``joint_names`` lacks (unknown) and those of ``joint_names`` that ``own`` lacks
    (missing).
    """
    wanted = set(joint_names)
    unknown = [name for name in own if name not in wanted]
    if unknown:
        raise TrajectoryError(
            f"joint_names: unknown joint(s) {unknown}; expected {list(joint_names)}")
    column = {name: k for k, name in enumerate(own)}
    missing = [name for name in joint_names if name not in column]
    if missing:
        raise TrajectoryError(f"joint_names: missing joint(s) {missing}")
    return None if tuple(joint_names) == tuple(own) else [column[name] for name in joint_names]


def file_joint_names(data, rows_key: str, optional_keys: set) -> list:
    """
    Check the top level of a trajectory or path mapping and return its ``joint_names``.

    ``data`` must be a mapping of ``joint_names``, ``rows_key`` (``points`` or ``waypoints``,
    checked by the caller) and ``optional_keys``; unknown keys and an empty or non-list
    ``joint_names`` raise TrajectoryError.
    """
    if not isinstance(data, dict):
        raise TrajectoryError(f"expected a mapping with 'joint_names' and '{rows_key}'")
    unknown = set(map(str, data)) - {"joint_names", rows_key, *optional_keys}
    if unknown:
        raise TrajectoryError(f"unknown key(s) {sorted(unknown)}")
    names = data.get("joint_names")
    if not isinstance(names, (list, tuple)) or not names:
        raise TrajectoryError("joint_names: expected a non-empty list of joint names")
    return names


def float_list(value, n: int, where: str) -> list:
    """``value`` as a list of ``n`` floats; TrajectoryError naming ``where`` otherwise."""
    if not isinstance(value, (list, tuple, np.ndarray)):
        raise TrajectoryError(f"{where}: expected a list of {n} numbers, got {value!r}")
    if len(value) != n:
        raise TrajectoryError(f"{where}: expected {n} values (one per joint), got {len(value)}")
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)):
            raise TrajectoryError(f"{where}: expected numbers, got {v!r}")
        out.append(float(v))
    return out


def _segment_coefficients(traj: JointTrajectory, segments=None) -> np.ndarray:
    """
    (K-1, 6, n) polynomial coefficients per segment in local time tau = t - t_k.

    ``segments`` (S,): of those segments only, (S, 6, n).

    The formulas are those of joint_trajectory_controller's interpolate_between_points (linear,
    cubic Hermite, quintic), in its order of operations; unused orders are zero.  Computed on
    (K-1, n) operands with the durations repeated per joint and stored order-major (the result
    is a (K-1, 6, n) view of a (6, K-1, n) array): numpy broadcasting a column over n joints, and
    writing into every sixth row, cost three times as much on a 600-point re-check.
    """
    K, n = traj.times.size, traj.n
    first = np.arange(max(K - 1, 0)) if segments is None else segments
    C = np.zeros((6, first.size, n))
    if K < 2:
        return C.transpose(1, 0, 2)

    def ends(a):                 # the values at the segments' starts and ends
        return (a[:-1], a[1:]) if segments is None else (a[first], a[first + 1])
    t0, t1 = ends(traj.times)
    T = np.repeat(t1 - t0, n).reshape(first.size, n)
    p0, p1 = ends(traj.positions)
    C[0] = p0
    if traj.velocities is None:
        C[1] = (p1 - p0) / T
        return C.transpose(1, 0, 2)
    v0, v1 = ends(traj.velocities)
    C[1] = v0
    if traj.accelerations is None:
        C[2] = (-3.0 * p0 + 3.0 * p1 - 2.0 * v0 * T - v1 * T) / T**2
        C[3] = (2.0 * p0 - 2.0 * p1 + v0 * T + v1 * T) / T**3
        return C.transpose(1, 0, 2)
    a0, a1 = ends(traj.accelerations)
    T2 = T * T
    C[2] = 0.5 * a0
    C[3] = (-20.0 * p0 + 20.0 * p1 - 3.0 * a0 * T2 + a1 * T2 - 12.0 * v0 * T - 8.0 * v1
            * T) / (2.0 * T**3)
    C[4] = (30.0 * p0 - 30.0 * p1 + 3.0 * a0 * T2 - 2.0 * a1 * T2 + 16.0 * v0 * T + 14.0 * v1
            * T) / (2.0 * T**4)
    C[5] = ((-12.0 * p0 + 12.0 * p1 - a0 * T2 + a1 * T2 - 6.0 * v0 * T - 6.0 * v1 * T)
            / (2.0 * T**5))
    return C.transpose(1, 0, 2)


def _at_fractions(c: np.ndarray, durations: np.ndarray, f: np.ndarray, degree: int):
    """
    Return (q, qd, qdd), each (S, F, n), of S segments at the same F local fractions ``f``.

    With tau = f T per segment, q = sum_p c_p tau^p, qd = sum_p p c_p tau^(p-1) and qdd =
    sum_p p (p-1) c_p tau^(p-2): one batched matrix product of the weights (S, 3F, P) and the
    coefficients (S, P, n), P = ``degree`` + 1.  numpy's broadcasting of (S, 1, n) by (S, F, 1)
    arrays, the straightforward Horner form, costs several times more (measured on 567
    segments of 6 joints).  ``c``: (S, 6, n) coefficients of order 0..5.
    """
    S, F, P = durations.size, f.size, degree + 1
    tau = durations[:, None] * f                                       # (S, F)
    powers = [np.ones((S, F))]
    for _ in range(1, P):
        powers.append(powers[-1] * tau)
    weights = np.zeros((S, 3, F, P))
    for p in range(P):
        weights[:, 0, :, p] = powers[p]
        if p >= 1:
            weights[:, 1, :, p] = p * powers[p - 1]
        if p >= 2:
            weights[:, 2, :, p] = p * (p - 1) * powers[p - 2]
    out = np.matmul(weights.reshape(S, 3 * F, P), c[:, :P])           # (S, 3F, n)
    return out[:, :F], out[:, F:2 * F], out[:, 2 * F:]


def _polynomial(c: np.ndarray, tau: np.ndarray, degree: int = 5):
    """
    Return (q, qd, qdd) of segment polynomials, by Horner's rule.

    q = sum_p c_p tau^p for p <= ``degree`` (higher coefficients are zero: linear 1, cubic 3,
    quintic 5), coefficients on axis -2 of ``c``, ``tau`` broadcasting against the rest.
    """
    c = np.moveaxis(c, -2, 0)                  # (6, ..., n)
    q = c[degree]
    for p in range(degree - 1, -1, -1):
        q = q * tau + c[p]
    qd = degree * c[degree] + 0.0 * tau
    for p in range(degree - 1, 0, -1):
        qd = qd * tau + p * c[p]
    if degree < 2:
        return q, qd, np.zeros_like(q)
    qdd = degree * (degree - 1) * c[degree] + 0.0 * tau
    for p in range(degree - 1, 1, -1):
        qdd = qdd * tau + p * (p - 1) * c[p]
    return q, qd, qdd
