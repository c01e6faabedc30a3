"""
A two-joint wrist whose second motor turns with both joints: q_m6 = r6 (q5 + q6).

As Staeubli, ABB and KUKA wrists have it (the issue's case).  Joint 5 turns about the base's
vertical z; joint 6 about a horizontal axis (standard DH alpha_5 = pi/2), carried by link 5.
With these axes the recursion's own rotor terms (Siciliano et al. 2009, eqs. 7.111-7.114) are
exactly diag(k_r^2 I_m): rotor 6 rides on link 5, whose angular velocity and acceleration are
along z_5, perpendicular to z_6, so no carrier term reaches either joint.  The whole rotor
contribution to B is then the hand-derived K^T diag(k_r^2 I_m) K:

    [[D5 + D6, D6],
     [D6,      D6]],   D_i = k_ri^2 I_mi,

and the friction, drive i's F_v, F_s on its velocity v = K qd, maps back through K^T:

    tau_5 = F_v5 qd5 + F_s5 sgn(qd5) + F_v6 v6 + F_s6 sgn(v6),   tau_6 = F_v6 v6 + F_s6 sgn(v6),
    v6 = qd5 + qd6.

The numbers are made up for the test (no vendor's).
"""
from __future__ import annotations

import copy

import numpy as np

R5, R6 = 80.0, 50.0              # gear ratios
IM5, IM6 = 2.0e-5, 1.5e-5        # rotor inertias [kg m^2], motor side
K = np.array([[1.0, 0.0], [1.0, 1.0]])
D = np.diag([R5 ** 2 * IM5, R6 ** 2 * IM6])
FV = np.array([1.2, 0.8])        # drives' viscous friction, joint side [N m s/rad]
FS = np.array([0.9, 0.6])        # drives' Coulomb friction [N m]

WRIST = {
    "name": "wrist2",
    "dh_convention": "standard",
    "gravity": [0.0, 0.0, -9.81],
    "joints": [
        {"name": "joint5", "type": "revolute",
         "dh": {"a": 0.0, "alpha": "pi/2", "d": 0.0, "theta": 0.0},
         "limits": {"lower": -3.0, "upper": 3.0, "velocity": 6.0, "effort": 50.0},
         "link": {"mass": 1.5, "com": [0.0, -0.02, 0.01],
                  "inertia": {"ixx": 0.004, "iyy": 0.003, "izz": 0.0045}},
         "motor": {"rotor_inertia": IM5, "gear_ratio": R5},
         "friction": {"viscous": float(FV[0]), "coulomb": float(FS[0])}},
        {"name": "joint6", "type": "revolute",
         "dh": {"a": 0.0, "alpha": 0.0, "d": 0.1, "theta": 0.0},
         "limits": {"lower": -6.0, "upper": 6.0, "velocity": 8.0, "effort": 30.0},
         "link": {"mass": 0.8, "com": [0.05, 0.01, -0.02],
                  "inertia": {"ixx": 0.001, "iyy": 0.0015, "izz": 0.0012, "ixy": 0.0001}},
         "motor": {"rotor_inertia": IM6, "gear_ratio": R6},
         "friction": {"viscous": float(FV[1]), "coulomb": float(FS[1])}},
    ],
    "coupling": {"joints": ["joint5", "joint6"], "matrix": [[1.0, 0.0], [1.0, 1.0]]},
}


def wrist(coupled: bool = True, coulomb: bool = True) -> dict:
    """Return the wrist's description (a copy): without ``coupling``, or without F_s."""
    spec = copy.deepcopy(WRIST)
    if not coupled:
        del spec["coupling"]
    if not coulomb:
        for joint in spec["joints"]:
            joint["friction"]["coulomb"] = 0.0
    return spec


def hand_rotor_matrix() -> np.ndarray:
    """K^T diag(k_r^2 I_m) K written out (module docstring)."""
    d5, d6 = D[0, 0], D[1, 1]
    return np.array([[d5 + d6, d6], [d6, d6]])


def hand_friction(qd: np.ndarray, coulomb: bool = True) -> np.ndarray:
    """Return the drives' friction as joint torques, written out (module docstring)."""
    fs = FS if coulomb else np.zeros(2)
    v6 = qd[..., 0] + qd[..., 1]
    f6 = FV[1] * v6 + fs[1] * np.sign(v6)
    return np.stack([FV[0] * qd[..., 0] + fs[0] * np.sign(qd[..., 0]) + f6, f6], axis=-1)


# The wrist with the further terms of a coupled drive (core/model/coupling.py): drive 6's
# quadratic viscous F_v2 v6|v6|, and joint 6's joint-side F_vj qd6 + F_sj sgn(qd6), on joint 6
# alone.  Written out:
#   tau_5 = F_v5 qd5 + F_s5 sgn(qd5) + f6,   tau_6 = f6 + F_vj qd6 + F_sj sgn(qd6),
#   f6 = F_v6 v6 + F_v2 v6|v6| + F_s6 sgn(v6).
FV2 = -0.02                       # N m s^2/rad^2 (>= -F_v6 / (2 x 8 rad/s) = -0.05)
FVJ, FSJ = 0.15, 0.3              # joint 6's joint-side viscous and Coulomb friction


def wrist_with_joint_side(coulomb: bool = True) -> dict:
    """Return :func:`wrist` with drive 6's F_v2 and joint 6's joint-side friction."""
    spec = wrist(coulomb=coulomb)
    spec["joints"][1]["friction"].update(viscous_quadratic=FV2, joint_viscous=FVJ,
                                         joint_coulomb=FSJ if coulomb else 0.0)
    return spec


def hand_friction_joint_side(qd: np.ndarray, coulomb: bool = True) -> np.ndarray:
    """Return the friction of :func:`wrist_with_joint_side` as joint torques, written out."""
    fs, fsj = (FS, FSJ) if coulomb else (np.zeros(2), 0.0)
    q5, q6 = qd[..., 0], qd[..., 1]
    v6 = q5 + q6
    f6 = FV[1] * v6 + FV2 * v6 * np.abs(v6) + fs[1] * np.sign(v6)
    return np.stack([FV[0] * q5 + fs[0] * np.sign(q5) + f6,
                     f6 + FVJ * q6 + fsj * np.sign(q6)], axis=-1)


def power_sides(model, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                friction: np.ndarray) -> tuple[float, float]:
    """
    Return the two sides of the power balance at one state: qd^T (tau - f), qd^T (B qdd + ...).

    d/dt (1/2 qd^T B qd) + dU/dt = qd^T (tau - f); C(q, qd) qd's power is qd^T (Bdot / 2) qd
    (skew Bdot - 2C), Bdot by central differences of B along qd (step 1e-6): the right side is
    qd^T (B qdd + (Bdot / 2) qd + g).  ``friction``: the hand-derived friction torques at qd.
    """
    from robot_dynamics_ros.core import mass_matrix, rnea
    h = 1e-6
    B = mass_matrix(model, q)
    bdot = (mass_matrix(model, q + h * qd) - mass_matrix(model, q - h * qd)) / (2 * h)
    g = rnea(model.without_friction(), q, np.zeros(qd.size), np.zeros(qd.size))
    return qd @ (rnea(model, q, qd, qdd) - friction), qd @ (B @ qdd + 0.5 * bdot @ qd + g)
