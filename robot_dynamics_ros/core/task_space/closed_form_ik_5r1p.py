"""
Closed-form inverse kinematics of Asada & Slotine 1986's 5-R-1-P arm: all four solutions.

Asada and Slotine, Sect. 2.3.2, eqs. 2-42 - 2-63; the arm is shipped as
``config/robots/asada_5r1p.yaml``.  The arm (Table 2-1, standard DH): alpha = (-90, 90, 0, -90,
90, 0) deg, a = 0, d = (l0, l1, d3, 0, 0, l2), joint 3 prismatic along the axis of joint 4,
joints 4-6 a spherical wrist at W.  Steps:

1. wrist point p* = p - l2 b (2-45), b the tool's approach (third) axis;
2. theta1 from l1 = -px* s1 + py* c1 (2-48): theta1 = atan2(py*, px*) - atan2(l1, +-sqrt(px*^2 +
   py*^2 - l1^2)), the numerically safe form of (2-52) (checked numerically); a negative radicand
   means the wrist point is out of reach (Sect. 2.3);
3. theta2 = atan2(px* c1 + py* s1, pz* - l0) (2-53) and d3 = +sqrt(...) (2-54; the stroke keeps
   d3 > 0, Sect. 2.3);
4. with T' = (A1 A2 A3)^{-1} T (2-55, 2-56): theta4 = atan2(by', bx') (2-60), theta5 =
   atan2(c4 bx' + s4 by', bz') (2-61, primes restored: erratum 2), theta6 = atan2(-nx' s4 + ny' c4,
   -tx' s4 + ty' c4) (2-62);
5. the second wrist solution (theta4 + pi, -theta5, theta6 + pi) (2-63).

At the wrist singularity theta5 = 0 only theta4 + theta6 is defined: theta4 = 0 is returned.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..errors import InfeasibleError, InputError
from ..transforms import snap_unit

_ALPHA = (-0.5 * np.pi, 0.5 * np.pi, 0.0, -0.5 * np.pi, 0.5 * np.pi, 0.0)
_TYPES = ("revolute", "revolute", "prismatic", "revolute", "revolute", "revolute")


class ClosedFormSolutions(NamedTuple):
    """All inverse-kinematics solutions, one per row."""

    q: np.ndarray               # (k, 6): theta1, theta2, d3, theta4, theta5, theta6 (in (-pi, pi])
    within_limits: np.ndarray   # (k,) bool: the solution is inside the joint limits


def arm_lengths(model) -> tuple[float, float, float]:
    """Return (l0, l1, l2) of a 5-R-1-P arm (Table 2-1); InputError naming what differs."""
    problems = []
    types = tuple("revolute" if t == "continuous" else t for t in model.joint_types)
    if model.n != 6 or types != _TYPES:
        problems.append(f"joint types {list(model.joint_types)} (expected {list(_TYPES)})")
    elif model.convention != "standard":
        problems.append("modified DH (Table 2-1 is standard DH)")
    else:
        for i, name in enumerate(model.joint_names):
            if abs(model.dh_alpha[i] - _ALPHA[i]) > 1e-12 or abs(model.dh_a[i]) > 1e-12 \
                    or abs(model.dh_theta[i]) > 1e-12:
                problems.append(f"joint '{name}': alpha, a, theta = {model.dh_alpha[i]:.6g}, "
                                f"{model.dh_a[i]:.6g}, {model.dh_theta[i]:.6g} (expected "
                                f"{_ALPHA[i]:.6g}, 0, 0)")
        for i in (2, 3, 4):
            if abs(model.dh_d[i]) > 1e-12:
                problems.append(f"joint '{model.joint_names[i]}': d = {model.dh_d[i]:.6g} "
                                "(expected 0)")
    if problems:
        raise InputError(f"{model.name}: not the 5-R-1-P arm of Asada & Slotine 1986 (Table 2-1): "
                         + "; ".join(problems))
    return float(model.dh_d[0]), float(model.dh_d[1]), float(model.dh_d[5])


def _dh(theta, d, alpha):
    ca, sa = snap_unit(np.cos(alpha)), snap_unit(np.sin(alpha))
    ct, st = np.cos(theta), np.sin(theta)
    # A_i^{i-1} = Rz(theta) Tz(d) Tx(0) Rx(alpha) (Asada & Slotine 1986, eq. 2-35)
    return np.array([[ct, -st * ca, st * sa, 0.0], [st, ct * ca, -ct * sa, 0.0],
                     [0.0, sa, ca, d], [0.0, 0.0, 0.0, 1.0]])


def _wrap(angle):
    return float(np.pi - np.mod(np.pi - angle, 2.0 * np.pi))       # into (-pi, pi]


def closed_form_ik_5r1p(model, target) -> ClosedFormSolutions:
    """
    Return all solutions (up to four) that put the tool frame at ``target`` (world 4x4 pose).

    The model's base and tool transforms are taken into account.  ``InfeasibleError`` when the
    wrist point is out of reach (2-52's radicand negative) or needs d3 <= 0.
    """
    l0, l1, l2 = arm_lengths(model)
    T = np.asarray(target, dtype=float)
    if T.shape != (4, 4) or not np.isfinite(T).all():
        raise InputError(f"target: expected a finite 4x4 pose, got shape {T.shape}")
    T06 = np.linalg.inv(model.base) @ T @ np.linalg.inv(model.tool)
    b, p = T06[:3, 2], T06[:3, 3]
    px, py, pz = p - l2 * b                                                     # (2-45)
    radicand = px * px + py * py - l1 * l1
    if radicand < 0.0:
        raise InfeasibleError(
            f"{model.name}: target out of reach: the wrist point ({px:.6g}, {py:.6g}, {pz:.6g}) "
            f"is closer than l1 = {l1:.6g} to joint 1's axis (2-52 has no real root)")
    solutions = []
    for root in (1.0, -1.0):
        theta1 = np.arctan2(py, px) - np.arctan2(l1, root * np.sqrt(radicand))      # (2-52)
        c1, s1 = np.cos(theta1), np.sin(theta1)
        reach = px * c1 + py * s1
        theta2 = np.arctan2(reach, pz - l0)                                         # (2-53)
        d3 = np.hypot(reach, pz - l0)                                   # (2-54), d3 > 0
        if d3 <= 0.0:
            raise InfeasibleError(f"{model.name}: target needs d3 = 0 (the wrist point on "
                                  "joint 2's axis)")
        A123 = _dh(theta1, l0, _ALPHA[0]) @ _dh(theta2, l1, _ALPHA[1]) @ _dh(0.0, d3, 0.0)
        Tp = np.linalg.solve(A123, T06)                                             # (2-55, 2-56)
        (nx, ny), (tx, ty), (bx, by, bz) = Tp[:2, 0], Tp[:2, 1], Tp[:3, 2]
        theta4 = np.arctan2(by, bx) if np.hypot(bx, by) > 1e-12 else 0.0             # (2-60)
        for flip in (0.0, np.pi):                                                   # (2-63)
            t4 = theta4 + flip
            c4, s4 = np.cos(t4), np.sin(t4)
            theta5 = np.arctan2(c4 * bx + s4 * by, bz)                              # (2-61)
            theta6 = np.arctan2(-nx * s4 + ny * c4, -tx * s4 + ty * c4)             # (2-62)
            solutions.append([_wrap(theta1), _wrap(theta2), d3, _wrap(t4), _wrap(theta5),
                              _wrap(theta6)])
    q = _distinct(np.array(solutions))
    within = np.all((q >= model.lower - 1e-12) & (q <= model.upper + 1e-12), axis=1)
    return ClosedFormSolutions(q, within)


def _distinct(q):
    keep = [0]
    for k in range(1, len(q)):
        if all(np.abs(q[k] - q[j]).max() > 1e-10 for j in keep):
            keep.append(k)
    return q[keep]
