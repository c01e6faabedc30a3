"""
Rigid-body inertia helpers shared by the model builders and the algorithms.

Conventions: an inertia tensor is a 3x3 matrix (URDF's: off-diagonal entries are the matrix
entries, i.e. minus the products of inertia of Siciliano et al. 2009, eq. 7.11); ``mass``, centre
of mass
``com`` and the tensor about the centre of mass describe a body.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

INERTIA_KEYS = ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")


def inertia_matrix(inertia: dict) -> np.ndarray:
    """
    Return the 3x3 tensor from named entries ixx..iyz.

    URDF convention; missing products are 0.
    """
    get = lambda k: inertia.get(k, 0.0)  # noqa: E731
    return np.array([[get("ixx"), get("ixy"), get("ixz")],
                     [get("ixy"), get("iyy"), get("iyz")],
                     [get("ixz"), get("iyz"), get("izz")]], dtype=float)


def inertia_entries(tensor: np.ndarray) -> dict:
    """
    Return the named entries ixx..iyz of a symmetric 3x3 tensor.

    The inverse of :func:`inertia_matrix`.
    """
    inertia = np.asarray(tensor, dtype=float)
    return {"ixx": float(inertia[0, 0]), "iyy": float(inertia[1, 1]), "izz": float(inertia[2, 2]),
            "ixy": float(inertia[0, 1]), "ixz": float(inertia[0, 2]), "iyz": float(inertia[1, 2])}


def check_physical_inertia(tensor: np.ndarray) -> str | None:
    """
    Why a rotational inertia about the centre of mass is not physical, or None.

    A real body has a positive semi-definite tensor whose principal moments satisfy the triangle
    inequality I1 + I2 >= I3 (each moment is an integral of a sum of two squared coordinates).
    """
    principal = np.linalg.eigvalsh(tensor)
    scale = max(float(np.abs(principal).max()), 1e-300)
    tol = 1e-9 * scale
    if principal[0] < -tol:
        return (f"not positive semi-definite: smallest principal moment {principal[0]:.6g} "
                f"({100 * -principal[0] / scale:.3g} % of the largest below 0; principal "
                f"moments {principal.tolist()})")
    if principal[0] + principal[1] < principal[2] - tol:
        short = principal[2] - principal[0] - principal[1]
        return ("principal moments violate the triangle inequality I1 + I2 >= I3 "
                f"({principal[0]:.6g} + {principal[1]:.6g} < {principal[2]:.6g}: short by "
                f"{short:.3g} kg m^2, {100 * short / principal[2]:.3g} % of I3)")
    return None


def parallel_axis(inertia: np.ndarray, mass: float, r) -> np.ndarray:
    """
    Return the inertia about a point P by Steiner's theorem.

    The body's inertia about its centre of mass C is ``inertia``, with r = C - P:
    I_P = I_C + m (|r|^2 E - r r^T).  (The sign of r does not matter.)
    """
    r = np.asarray(r, dtype=float)
    return inertia + mass * (r @ r * np.eye(3) - np.outer(r, r))


class Body(NamedTuple):
    """Mass, centre of mass and inertia about the centre of mass, in one frame."""

    mass: float
    com: np.ndarray
    inertia: np.ndarray

    def transformed(self, T: np.ndarray) -> "Body":
        """
        Return the same body expressed in another frame.

        That frame is the one in which the 4x4 pose ``T`` of the body's frame is given.
        """
        R, p = T[:3, :3], T[:3, 3]
        return Body(self.mass, R @ self.com + p, R @ self.inertia @ R.T)


def combine_bodies(a: Body, b: Body) -> Body:
    """
    Two bodies given in the same frame as one rigid body (masses add, inertias by Steiner).

    Two massless bodies keep the first one's centre of mass and add their rotational inertias
    (a lumped inertia without mass, as some data sets give).
    """
    total = a.mass + b.mass
    if total == 0.0:
        return Body(0.0, np.array(a.com, dtype=float), a.inertia + b.inertia)
    c = (a.mass * np.asarray(a.com) + b.mass * np.asarray(b.com)) / total
    return Body(total, c, parallel_axis(a.inertia, a.mass, a.com - c)
                + parallel_axis(b.inertia, b.mass, b.com - c))
