"""
The generalized momentum p = B(q) qd and the product C(q, qd)^T qd in one O(n) recursion.

What the momentum observer needs (De Luca and Mattone, ICRA 2005; Haddadin et al., "Robot
Collisions: A Survey on Detection, Isolation, and Identification", IEEE T-RO 33(6), 2017, eq. 18):
along the robot's motion B qdd + C qd + g + tau_f = tau + tau_ext, so with B' = C + C^T
(Siciliano et al., Robotics: Modelling, Planning and Control, eq. 7.49: B' - 2C skew-symmetric)

    dp/dt = B qdd + B' qd = tau + tau_ext + C^T qd - g - tau_f.

Why not B' qd - C qd, or C^T from the matrix: for the Christoffel C (Siciliano et al., eq. 7.45)

    (C^T qd)_k = sum_ij c_ijk qd_i qd_j = 1/2 qd^T (dB/dq_k) qd = dT/dq_k,

the antisymmetric part of c_ijk cancelling in the symmetric sum: C^T qd is the gradient of the
kinetic energy T = 1/2 qd^T B qd in q.  In spatial terms (Featherstone, Rigid Body Dynamics
Algorithms, ch. 2: world-frame screws S_j, body velocities V_b = sum_{j <= b} S_j qd_j, momenta
h_b = I_b V_b, dS_j/dq_k = S_k x S_j and dI_b/dq_k = S_k x* I_b - I_b S_k x for k <= j, b)
differentiating T = sum_b 1/2 V_b . h_b gives

    dT/dq_k = (V_k x S_k) . h_k,      h_k = sum_{b >= k} h_b   (the composite momentum)

and p_k = S_k . h_k.  Both need only the link velocities (one forward pass) and the composite
momenta (one backward pass): O(n), no accelerations, no matrix.  That is cheaper than B' qd - C qd
(an RNEA for C qd plus a derivative of B along qd, which an RNEA does not give) and than C^T qd
from ``coriolis_matrix`` (O(n^2)).  Oracles in the tests: the finite-difference gradient of T,
``coriolis_matrix`` transposed, B' = C + C^T with B' by finite differences along qd, and
p = ``mass_matrix`` qd.

In link frame k (joint axis z, origin o_k on it), with the velocity (w, v) of o_k and the composite
momentum (L about o_k, l), for a revolute joint V x S = (w x z, v x z), for a prismatic one
(0, w x z), so

    revolute:   (C^T qd)_k = (w x z) . L + (v x z) . l,   p_k = L_z,
    prismatic:  (C^T qd)_k = (w x z) . l,                 p_k = l_z.

Motors (Siciliano et al. 2009, eqs. 7.22-7.30, the model of ``newton_euler.py``): rotor i sits
on link i-1, its locked inertia already in that link; spinning at k_r qd_i about z_i it adds the
kinetic energy k_r I_m qd_i (w_{i-1} . z_i) + 1/2 k_r^2 I_m qd_i^2: its spin momentum
k_r I_m qd_i z_i joins the composite momentum of link i-1 (a free vector: no linear part), and p_i
gains k_r I_m (w_{i-1} . z_i + k_r qd_i).  Coupled drives (``model/coupling.py``) add their
constant rotor inertia C = K^T D K - D: p gains C qd, and C^T qd nothing (T's added term does not
depend on q).

Why a pass of its own and not the one Newton-Euler recursion (``newton_euler.py``, compiled by
``compiled.py``): that recursion forms B qdd + C qd + g from accelerations and link forces.  It
could give p (B qd is its torque at qd = 0, qdd = qd, without gravity), but not C^T qd: it forms
C qd, and B' qd = C qd + C^T qd would need the derivative of B along qd, which no pass of it
computes.  The composite momenta that give C^T qd give p at no extra cost, so both come from
this pass, on Python floats (one configuration, ~10 us for six joints, the node's per-message
path) or numpy columns (a batch), not compiled.  The tests check p against ``mass_matrix`` and
against the one recursion's B qd.

Frames are the model's internal modified-DH frames (``newton_euler.py``): the link velocities
come up the chain by the one velocity recursion v_i = X_i v_{i-1} + S_i qd_i
(``spatial_inertia.joint_velocity``, as the ABA's); the composite momentum is a spatial force and
goes down the chain by ``spatial_inertia.force_to_parent``.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..inputs import joint_arrays
from ..model.coupling import coupling_terms
from ..model.joint_constants import joint_fields
from .spatial_inertia import force_to_parent, joint_velocity

# The per-joint constants read below (model/joint_constants.py), in the order unpacked.
FIELDS = ("prismatic", "cos_alpha", "sin_alpha", "a", "theta0", "d0", "mass", "cx", "cy", "cz",
          "ixx", "iyy", "izz", "ixy", "ixz", "iyz", "rotor", "gear_ratio", "offset", "e")


class MomentumTerms(NamedTuple):
    """p = B(q) qd and C(q, qd)^T qd, each with the shape of qd."""

    momentum: np.ndarray
    coriolis_transpose: np.ndarray


def _forward(joints, q, qd, cos, sin):
    """Per joint: (w, v) of its origin in its frame, the frame change, w_{i-1} . z_i."""
    wx = wy = wz = vx = vy = vz = 0.0
    out = []
    for i, (prism, ca, sa, a, th0, d0, *_rest) in enumerate(joints):
        e = _rest[-1]
        th, d = (th0, d0 + q[i]) if prism else (th0 + q[i], d0)
        ct, st = cos(th), sin(th)
        pwz = ca * wz - sa * wy     # w_{i-1} . z_i, z_i = (0, -sin alpha, cos alpha) in i-1
        # the child's origin in frame i-1: Rx(alpha_{i-1}) (a, e, d) (model.Chain)
        py, pz = (ca * e - sa * d, sa * e + ca * d) if e != 0.0 else (-(sa * d), ca * d)
        wx, wy, wz, vx, vy, vz = joint_velocity(prism, qd[i], ca, sa, ct, st, a, py, pz,
                                                wx, wy, wz, vx, vy, vz)
        out.append((wx, wy, wz, vx, vy, vz, ct, st, d, pwz))
    return out


def _link_momentum(w, v, m, cx, cy, cz, ixx, iyy, izz, ixy, ixz, iyz):
    """Linear momentum m v_c and angular momentum about the frame origin of one link."""
    wx, wy, wz = w
    vx, vy, vz = v
    # v_c = v + w x c;  L_o = I_c w + c x (m v_c)
    lx = m * (vx + wy * cz - wz * cy)
    ly = m * (vy + wz * cx - wx * cz)
    lz = m * (vz + wx * cy - wy * cx)
    Lx = ixx * wx + ixy * wy + ixz * wz + cy * lz - cz * ly
    Ly = ixy * wx + iyy * wy + iyz * wz + cz * lx - cx * lz
    Lz = ixz * wx + iyz * wy + izz * wz + cx * ly - cy * lx
    return lx, ly, lz, Lx, Ly, Lz


def _recursion(model, q, qd, cos, sin):
    """Return (p, C^T qd) as lists of components (floats or numpy columns)."""
    joints = joint_fields(model, FIELDS)
    n = len(joints)
    kin = _forward(joints, q, qd, cos, sin)
    p, ctq = [0.0] * n, [0.0] * n
    lx = ly = lz = Lx = Ly = Lz = 0.0            # composite momentum of the links beyond i
    for i in range(n - 1, -1, -1):
        (prism, _, _, _, _, _, m, cx, cy, cz, ixx, iyy, izz, ixy, ixz, iyz,
         rotor, kr, _, _) = joints[i]
        wx, wy, wz, vx, vy, vz, ct, st, d, pwz = kin[i]
        if i < n - 1:
            # the composite of links i+1.. with rotor i+1's spin k_r I_m qd_{i+1} z_{i+1}, from
            # frame i+1 to frame i
            ca, sa, a, e = joints[i + 1][1:4] + joints[i + 1][-1:]
            nct, nst, nd = kin[i + 1][6:9]
            next_rotor = joints[i + 1][16]
            if next_rotor != 0.0:
                Lz = Lz + next_rotor * qd[i + 1]
            Lx, Ly, Lz, lx, ly, lz = force_to_parent(Lx, Ly, Lz, lx, ly, lz, nct, nst, a, e,
                                                     nd, ca, sa)
        if m != 0.0 or ixx != 0.0 or iyy != 0.0 or izz != 0.0:
            own = _link_momentum((wx, wy, wz), (vx, vy, vz), m, cx, cy, cz, ixx, iyy, izz, ixy,
                                 ixz, iyz)
            lx, ly, lz = lx + own[0], ly + own[1], lz + own[2]
            Lx, Ly, Lz = Lx + own[3], Ly + own[4], Lz + own[5]
        if prism:
            p[i] = lz
            ctq[i] = wy * lx - wx * ly
        else:
            p[i] = Lz
            ctq[i] = wy * Lx - wx * Ly + vy * lx - vx * ly
        if rotor != 0.0:
            p[i] = p[i] + rotor * (pwz + kr * qd[i])
    return p, ctq


def momentum_terms(model, q, qd) -> MomentumTerms:
    """
    Return p = B(q) qd and C(q, qd)^T qd (see the module docstring), rotors included.

    ``q``, ``qd``: shape (n,) or (N, n); each result has the same shape.  Friction and gravity
    play no part (C is the Christoffel matrix of ``coriolis_matrix``).
    """
    (q, qd), batched = joint_arrays(model, q=q, qd=qd)
    if batched:
        p, ctq = _recursion(model, np.ascontiguousarray(q.T), np.ascontiguousarray(qd.T),
                            np.cos, np.sin)
        N = q.shape[0]
        p, ctq = (np.stack(np.broadcast_arrays(*x, np.empty(N))[:-1], axis=-1)
                  for x in (p, ctq))
    else:
        p, ctq = map(np.array, _recursion(model, q.tolist(), qd.tolist(), math.cos, math.sin))
    if model.coupled_drives:        # (constant: no term in C^T qd)
        p = p + qd @ coupling_terms(model).inertia
    return MomentumTerms(p, ctq)


def momentum_values(model, q: list, qd: list) -> tuple[list, list]:
    """:func:`momentum_terms` for lists of n finite floats: two lists (the per-message path)."""
    p, ctq = _recursion(model, q, qd, math.cos, math.sin)
    if model.coupled_drives:
        p = (np.array(p) + np.array(qd) @ coupling_terms(model).inertia).tolist()
    return p, ctq
