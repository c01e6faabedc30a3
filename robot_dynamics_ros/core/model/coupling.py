"""
Coupled drives: motors that turn more than their own joint (industrial wrists, differentials).

Motor positions are q_m = diag(k_r) K q, with k_r the joints' gear ratios and K the model's
``coupling`` (the identity but for the block a robot file gives, doc/robot_files.md): a wrist
whose motor 6 turns with joints 5 and 6, q_m6 = r (q5 + q6), has the row (1, 1) in joints 5, 6.
By the duality of velocities and forces (virtual work: the kineto-statics duality of Siciliano,
Sciavicco, Villani and Oriolo, Robotics: Modelling, Planning and Control, 2009, Sect. 3.8,
applied to the map qd -> qd_m) motor torques tau_m act on the joints as
tau = K^T diag(k_r) tau_m, so:

* the rotors' spin (rotor i of axial inertia I_m turning at k_r (K qd)_i relative to its carrier)
  has the kinetic energy 1/2 qd^T K^T D K qd, D = diag(k_r^2 I_m): inertia K^T D K at the joints;
* the friction of drive i, F_v, F_v2 and F_s of the robot file referred to the drive's output
  (its units stay joint-side ones: N m s/rad, N m s^2/rad^2, N m), acts on the drive's velocity
  v = K qd: tau_f = K^T (F_v v + F_v2 v|v| + F_s sgn(v)) (the quadratic term's floor,
  ``control.friction.viscous_quadratic_floor``, takes joint i's velocity limit as drive i's);
* a joint j whose drive is coupled may have joint-side friction as well, F_vj qd_j + F_sj
  sgn(qd_j) on joint j alone (robot file: ``friction.joint_viscous``, ``joint_coulomb``): the
  friction of the joint's own output stage, which turns at qd_j, not at the motor's K_j qd.
  FIGAROH's model of the Staubli TX40's coupled wrist has these (joint 6's fv6 qd_6 + fs6
  sgn(qd_6) beside motor 6's fvm6, fsm6 on qd_5 + qd_6: Nguyen et al., "FIGAROH: a Python
  toolbox for dynamic identification and geometric calibration of robots and humans",
  Humanoids 2023, its staubli_tx40 example); the TX40's recordings need the Coulomb term
  (doc/identification.md, "Staubli TX40").

The Newton-Euler recursion (``algorithms/newton_euler.py``) applies each joint's own rotor
(Siciliano et al. 2009, eqs. 7.111-7.114: D_i qdd_i with rotor i's carrier terms) and friction on
qd_i; what the coupling adds is kept here as model constants, applied outside the recursion as
the friction law's further terms are (``algorithms/coupled.py``):

    C = K^T D K - D = sum over coupled drives i of D_i (K_i^T K_i - e_i e_i^T)

(constant and symmetric, so tau = ... + C qdd keeps the energy balance exact), and the friction
difference on the coupled drives' rows.  For a drive whose row of K is the unit row both are
exactly zero, so a model without a coupling computes what it computed before, bit for bit.  Not
modelled: the coupled rotors' carrier terms beyond the recursion's (a torque I_m k_r times the
carrier's angular velocity and acceleration times (K_i qd - qd_i)), of order 1/k_r of the
rotor's spin inertia.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .cache import model_constant


def coupling_matrix(joint_names, coupling: dict | None) -> np.ndarray:
    """Return K (n, n): the identity with the block ``coupling`` (parse_robot's) in place."""
    n = len(joint_names)
    K = np.eye(n)
    if coupling is not None:
        index = [joint_names.index(name) for name in coupling["joints"]]
        K[np.ix_(index, index)] = np.array(coupling["matrix"], dtype=float)
    return K


class Coupling(NamedTuple):
    """What a model's coupling adds to its recursion's rotors and friction (module doc)."""

    drives: np.ndarray      # (c,) the coupled drives (rows of K other than the unit row)
    rows: np.ndarray        # (c, n) their rows K_i: drive velocity v_i = K_i qd
    viscous: np.ndarray     # (c,) F_v of those drives
    coulomb: np.ndarray     # (c,) F_s
    quadratic: np.ndarray   # (c,) F_v2
    inertia: np.ndarray     # (n, n) C = K^T D K - D
    # the friction's change as one map (friction_change): velocities [K_i qd; qd_i] of the
    # coupled drives, their F_v and F_s twice, torques back through [K_i; -e_i]
    velocities: np.ndarray  # (2c, n)
    torques: np.ndarray     # (2c, n)
    viscous_twice: np.ndarray   # (2c,)
    coulomb_twice: np.ndarray   # (2c,)
    quadratic_twice: np.ndarray     # (2c,)


def _build(model) -> Coupling:
    drives = np.array(model.coupled_drives, dtype=np.intp)
    rows = model.coupling[drives]
    spin = model.rotor_inertia[drives] * model.gear_ratio[drives] ** 2     # D_i
    unit = np.eye(model.n)[drives]
    inertia = (np.einsum("c,ci,cj->ij", spin, rows, rows)
               - np.einsum("c,ci,cj->ij", spin, unit, unit))
    viscous, coulomb = model.viscous[drives], model.coulomb[drives]
    quadratic = model.viscous_quadratic[drives]
    # the unit rows' torques are -f(qd_i): the joint-side terms enter there with their sign
    own_viscous = viscous - model.joint_viscous[drives]
    own_coulomb = coulomb - model.joint_coulomb[drives]
    return Coupling(drives, rows, viscous, coulomb, quadratic, 0.5 * (inertia + inertia.T),
                    np.vstack([rows, unit]), np.vstack([rows, -unit]),
                    np.concatenate([viscous, own_viscous]), np.concatenate([coulomb, own_coulomb]),
                    np.concatenate([quadratic, quadratic]))


def coupling_terms(model) -> Coupling:
    """Return the model's :class:`Coupling` (computed once per model)."""
    return model_constant(model, "coupling", _build)


def friction_change(model, qd, viscous: bool = True) -> np.ndarray:
    """
    Return K^T f(K qd) - f(qd) + f_j(qd) over the coupled drives ((n,), (N, n)).

    f = F_v v + F_v2 v|v| + F_s sgn(v), f_j = F_vj qd + F_sj sgn(qd) the joint-side terms:
    ``control.friction.coupled_friction`` (its documentation); ``viscous`` False: the Coulomb
    terms alone.
    """
    terms = coupling_terms(model)
    v = np.asarray(qd, dtype=float) @ terms.velocities.T
    f = terms.coulomb_twice * np.sign(v)
    if viscous:
        f = f + terms.viscous_twice * v
        if terms.quadratic.any():
            f = f + terms.quadratic_twice * v * np.abs(v)
    return f @ terms.torques


def quadratic_change(model, qd) -> np.ndarray:
    """Return the F_v2 v|v| part of :func:`friction_change` alone ((n,), (N, n))."""
    terms = coupling_terms(model)
    v = np.asarray(qd, dtype=float) @ terms.velocities.T
    return (terms.quadratic_twice * v * np.abs(v)) @ terms.torques


def drive_velocities(model, qd) -> np.ndarray:
    """Return K qd ((n,) or (N, n)): each drive's velocity referred to its joint side."""
    return np.asarray(qd, dtype=float) @ model.coupling.T


def to_joints(model, tau_drives) -> np.ndarray:
    """Return K^T tau: drive-side torques (referred to the joint side) as joint torques."""
    return np.asarray(tau_drives, dtype=float) @ model.coupling
