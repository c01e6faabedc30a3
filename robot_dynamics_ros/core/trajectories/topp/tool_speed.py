"""
The tool's Cartesian speed limit as a path constraint.

What a collaborative application must respect (ISO/TS 15066's speed limits) and what MoveIt's
Cartesian speed limit asks for.

Along q(s) the frame's twist is J(q) q'(s) sd (Siciliano et al. 2009, eq. 3.4 with qd = q' sd),
so norm(v) <= V is norm(J_v(q) q')^2 sd^2 <= V^2: a velocity-type row in x = sd^2
(b = norm(J_v q')^2, a = c = 0), exactly as toppra writes its joint velocity constraint; the
same for the angular speed norm(w) <= W with J_w.  The output is re-checked with the twist
computed from the sampled joint states (``kinematics.jacobian``).
"""
from __future__ import annotations

import math

import numpy as np

from ...algorithms.kinematics import jacobian, resolve_frame
from ...errors import InputError
from .constraint_set import PathConstraint

NONE = -1e300      # the lower bound of a one-sided row


def _speed(value, name: str):
    if value is None:
        return None
    number = isinstance(value, (int, float, np.integer, np.floating))
    number = number and not isinstance(value, bool)
    if not number or not 0.0 < value < math.inf:
        raise InputError(f"{name}: expected a speed > 0, got {value!r}")
    return float(value)


class ToolSpeedConstraint(PathConstraint):
    """
    norm(v) <= ``linear`` (m/s) and norm(w) <= ``angular`` (rad/s) for a frame (default: tool).

    ``frame``: as ``kinematics.resolve_frame`` takes it (the tool, a joint name, an index);
    ``point``: a point of the frame (its coordinates in the frame; None: its origin).  Either
    speed may be None (not limited), not both.
    """

    name = "tool_speed"

    def __init__(self, linear=None, angular=None, frame="tool", point=None):
        self.linear = _speed(linear, "tool_speed")
        self.angular = _speed(angular, "tool_angular_speed")
        if self.linear is None and self.angular is None:
            raise InputError("tool speed: give a linear or an angular speed limit (or both)")
        self.frame, self.point = frame, point
        self._rows = [(slice(0, 3), self.linear)] if self.linear is not None else []
        if self.angular is not None:
            self._rows.append((slice(3, 6), self.angular))

    def _jacobian(self, model, q):
        if self.frame in (None, "tool") and self.point is None:
            return jacobian(model, q)
        resolve_frame(model, self.frame)                  # (an unknown frame: named)
        return jacobian(model, q, self.frame, self.point)

    def _speeds(self, model, q, qd) -> np.ndarray:
        """Return the limited speeds of the twist J(q) qd, (P, k)."""
        twist = np.einsum("pij,pj->pi", self._jacobian(model, q), qd)
        return np.stack([np.sqrt(np.einsum("pi,pi->p", twist[:, part], twist[:, part]))
                         for part, _ in self._rows], axis=1)

    def limits(self) -> np.ndarray:
        return np.array([value for _, value in self._rows])

    def coefficients(self, model, q, dq, ddq, fraction):
        per_unit = self._speeds(model, q, dq)                 # |J q'|: speed per unit sd
        b = per_unit ** 2
        zero = np.zeros_like(b)
        upper = (self.limits()[None, :] * np.asarray(fraction, dtype=float).reshape(-1, 1)) ** 2
        return zero, b, zero, np.full_like(b, NONE), upper

    def usage(self, model, q, qd, qdd) -> np.ndarray:
        return self._speeds(model, q, qd) / self.limits()[None, :]

    def uniform_factor(self, model, q, qd, qdd) -> float:
        return max(1.0, float(self.usage(model, q, qd, qdd).max(initial=0.0)))

    def describe(self) -> str:
        parts = ([f"linear {self.linear:g} m/s"] if self.linear is not None else []) + \
            ([f"angular {self.angular:g} rad/s"] if self.angular is not None else [])
        return f"frame '{self.frame}' speed: " + ", ".join(parts)
