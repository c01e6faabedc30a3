"""
Random, physically consistent serial robots for tests and benchmarks.

``random_robot_dict(n, rng, ...)`` returns a description accepted by ``RobotModel.from_dict``:
generic DH parameters (no special angles, so no code path is favoured), a mix of revolute and
prismatic joints, and link inertias that are real bodies: each link is a random cloud of point
masses' second moments, i.e. a positive semi-definite tensor whose principal moments obey the
triangle inequality, turned by a random rotation (full off-diagonal terms).

Usage::

    rng = np.random.default_rng(0)
    model = RobotModel.from_dict(random_robot_dict(6, rng, convention="modified"))
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation


def random_inertia(rng: np.random.Generator, mass: float, size: float = 0.2) -> np.ndarray:
    """
    Return a rotational inertia about the CoM of a plausible body of this mass and length scale.

    With second moments s_k = integral(x_k^2 dm) >= 0, the principal moments are
    I_x = s_y + s_z etc., which makes them non-negative and satisfy I_x + I_y >= I_z.
    """
    second_moments = mass * (size * rng.uniform(0.05, 1.0, size=3)) ** 2
    principal = second_moments.sum() - second_moments
    R = Rotation.random(random_state=rng).as_matrix()
    return R @ np.diag(principal) @ R.T


def _inertia_entries(inertia: np.ndarray) -> dict:
    return {"ixx": float(inertia[0, 0]), "iyy": float(inertia[1, 1]), "izz": float(inertia[2, 2]),
            "ixy": float(inertia[0, 1]), "ixz": float(inertia[0, 2]), "iyz": float(inertia[1, 2])}


def random_body(rng: np.random.Generator, mass_range=(0.5, 5.0)) -> dict:
    mass = float(rng.uniform(*mass_range))
    return {"mass": mass, "com": rng.uniform(-0.15, 0.15, size=3).tolist(),
            "inertia": _inertia_entries(random_inertia(rng, mass))}


def random_robot_dict(n: int, rng: np.random.Generator, convention: str = "standard",
                      prismatic_prob: float = 0.3, with_motors: bool = False,
                      with_friction: bool = False, with_payload: bool = False,
                      name: str | None = None, offsets: bool = False) -> dict:
    """
    Return a random n-joint robot description (see the module docstring).

    ``convention``: "standard" or "modified" DH.  ``prismatic_prob``: chance of each joint being
    prismatic.  ``with_motors`` adds rotor inertia and gear ratios, ``with_friction`` viscous and
    Coulomb friction, ``with_payload`` a payload on the last link.  The gravity vector is a
    random direction of magnitude 9.81 (so no axis is special); base and tool are random poses.
    ``offsets`` (modified DH only) gives every joint the general offset e of ``model.Chain``
    (drawn last, so the rest of the robot is the one without it).
    """
    if convention not in ("standard", "modified"):
        raise ValueError(f"convention must be 'standard' or 'modified', got {convention!r}")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    joints = []
    for i in range(n):
        prismatic = bool(rng.uniform() < prismatic_prob)
        joint = {
            "name": f"joint{i + 1}",
            "type": "prismatic" if prismatic else "revolute",
            "dh": {"a": float(rng.uniform(-0.5, 0.5)), "alpha": float(rng.uniform(-np.pi, np.pi)),
                   "d": float(rng.uniform(-0.5, 0.5)), "theta": float(rng.uniform(-np.pi, np.pi))},
            "limits": ({"lower": -0.5, "upper": 0.5, "velocity": 1.0, "effort": 500.0} if prismatic
                       else {"lower": -3.0, "upper": 3.0, "velocity": 3.0, "effort": 200.0}),
            "link": random_body(rng),
        }
        if with_motors:
            joint["motor"] = {"rotor_inertia": float(rng.uniform(1e-5, 1e-3)),
                              "gear_ratio": float(rng.choice([-1.0, 1.0])
                                                  * rng.uniform(5.0, 150.0))}
        if with_friction:
            joint["friction"] = {"viscous": float(rng.uniform(0.0, 3.0)),
                                 "coulomb": float(rng.uniform(0.0, 2.0))}
        joints.append(joint)
    direction = rng.normal(size=3)
    pose = lambda: {"xyz": rng.uniform(-0.3, 0.3, size=3).tolist(),  # noqa: E731
                    "rpy": rng.uniform(-np.pi, np.pi, size=3).tolist()}
    robot = {"name": name or f"random{n}_{convention}", "dh_convention": convention,
             "gravity": (9.81 * direction / np.linalg.norm(direction)).tolist(),
             "base": pose(), "tool": pose(), "joints": joints}
    if with_payload:
        robot["payload"] = random_body(rng, mass_range=(0.1, 2.0))
    if offsets:
        if convention != "modified":
            raise ValueError("offsets are for modified DH robots")
        for joint in joints:
            joint["dh"]["e"] = float(rng.uniform(-0.3, 0.3))
    return robot


def random_state(model, rng: np.random.Generator, batch: int | None = None):
    """Random (q, qd, qdd) of shape (n,) or (batch, n), inside the joint limits."""
    shape = (model.n,) if batch is None else (batch, model.n)
    q = rng.uniform(model.lower, model.upper, size=shape)
    qd = rng.uniform(-1.0, 1.0, size=shape) * model.velocity_limit
    qdd = rng.uniform(-3.0, 3.0, size=shape)
    return q, qd, qdd
