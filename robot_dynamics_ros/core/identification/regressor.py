"""
The regressor Y(q, qd, qdd) with tau = Y pi (Siciliano et al. 2009, eqs. 7.78-7.81), batched.

pi is laid out as ``parameters.py`` describes (per joint: the link's 10 inertial parameters in
its joint frame, rotor inertia, viscous and Coulomb friction).  The columns are computed with the
Newton-Euler recursion of ``algorithms/rnea.py`` (Siciliano et al. 2009, eqs. 7.107-7.114) split by
parameter:

* forward pass (7.107)-(7.109): angular velocity w, angular acceleration wd and the acceleration a
  of the frame origin minus gravity, per link in its own frame, as in ``rnea``;
* each link's wrench is linear in its 10 parameters (m, h = m c, I_O about the origin, 7.71):
  f = m a + wd x h + w x (w x h),  n_O = h x a + I_O wd + w x (I_O w);
  so each parameter has its own wrench column (the 6 x 10 matrix of 7.79 for link i);
* backward pass (7.112)-(7.114): the columns of links i..n are carried, as wrenches, from frame
  to frame towards the base, and tau_i takes the z component of the moment (revolute) or force
  (prismatic) at joint i of every column.  Y is block upper-triangular (7.80).

Rotor i (Siciliano et al. 2009, eqs. 7.111-7.114, with rotor i on link i-1 spinning at k_r qd_i
about z_i) adds to column Im_i the direct term k_r (wd_{i-1} . z_i + k_r qdd_i) on tau_i and the
moment k_r (qd_i w_{i-1} x z_i + qdd_i z_i) on link i-1.  Friction columns (7.114) are qd_i and
sgn(qd_i) (sgn(0) = 0, as ``rnea``), an offset's column is 1 on joint i, and the further terms'
columns are qd_i |qd_i| and |g_i(q)| sgn(qd_i) (``parameters.friction_terms``).  A coupled drive
i (``core/model/coupling.py``) has its rotor column's coupling term k_r^2 (K_i^T K_i - e_i e_i^T)
qdd added and its friction columns on the drive's velocity K_i qd, acting on the joints as K_i^T.

The batch runs in chunks of ``CHUNK`` samples, every quantity a numpy column of the chunk (as in
the batched ``newton_euler`` recursion).
"""
from __future__ import annotations

import numpy as np

from ..inputs import joint_arrays
from ..model.joint_constants import joint_constants
from ..model.cache import model_constant
from ..algorithms import gravity_torques
from ..algorithms.spatial_inertia import angular_velocity
from .parameters import DRIVE_KINDS, friction_columns, friction_terms, parameter_layout

CHUNK = 1024


def _forward(model, q, qd, qdd):
    """
    Return each link's velocity, acceleration and origin acceleration.

    Per link: (w, wd, a) as 3-tuples of columns in the link's frame (7.107-7.109), and the
    parent's w and wd rotated into the intermediate frame X (z = the joint axis), for the
    rotors.
    """
    joints = joint_constants(model)
    g = model.chain.gravity_base
    zero = np.zeros(q.shape[0])
    w, wd, a = (zero, zero, zero), (zero, zero, zero), (-g[0] + zero, -g[1] + zero, -g[2] + zero)
    links = []
    for i, jc in enumerate(joints):
        ca, sa = jc.cos_alpha, jc.sin_alpha
        th = jc.theta0 + (0.0 if jc.prismatic else q[:, i])
        d = jc.d0 + (q[:, i] if jc.prismatic else 0.0)
        ct, st = np.cos(th) + zero, np.sin(th) + zero
        # parent quantities in X = Rx(-alpha) frame i-1
        rx = lambda v: (v[0], ca * v[1] + sa * v[2], ca * v[2] - sa * v[1])  # noqa: E731
        pw, pwd, v = rx(w), rx(wd), rx(a)
        # a_i = a_{i-1} + wd x p + w x (w x p), p = (a, e, d) in X   (7.109; model.Chain)
        p = (jc.a + zero, jc.e + zero, d + zero)
        wp = _cross(pw, p)
        v = tuple(v[k] + c1 + c2 for k, (c1, c2) in enumerate(zip(_cross(pwd, p), _cross(pw, wp))))
        rz = lambda u: (ct * u[0] + st * u[1], ct * u[1] - st * u[0], u[2])  # noqa: E731
        qdi, qddi = qd[:, i], qdd[:, i]
        # (7.107) w_i: the one velocity recursion's angular part (its x, y: those of R^T w_{i-1})
        w = angular_velocity(jc.prismatic, qdi, ca, sa, ct, st, *w)
        wd, a = rz(pwd), rz(v)
        if jc.prismatic:
            a = (a[0] + 2.0 * qdi * w[1], a[1] - 2.0 * qdi * w[0], a[2] + qddi)
        else:  # (7.108)
            wd = (wd[0] + qdi * w[1], wd[1] - qdi * w[0], wd[2] + qddi)
        links.append((w, wd, a, ct, st, d, pw, pwd))
    return links


def _cross(u, v):
    return (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])


def _link_wrench_columns(w, wd, a):
    """
    Return one link's 6 x 10 wrench columns as an array (6, 10, N).

    Rows f, n_O; columns m, hx, hy, hz, Ixx..Izz: f = m a + wd x h + w x (w x h) and
    n_O = h x a + I_O wd + w x (I_O w).
    """
    zero = np.zeros_like(w[0])
    cols = [(a[0], a[1], a[2], zero, zero, zero)]
    for k in range(3):
        e = tuple(1.0 if j == k else 0.0 for j in range(3))
        f = tuple(x + y for x, y in zip(_cross(wd, e), _cross(w, _cross(w, e))))
        n = _cross(e, a)
        cols.append(f + n)
    wx, wy, wz = w
    dx, dy, dz = wd
    # I wd + w x (I w) for each unit tensor entry (the off-diagonal ones symmetric)
    cols.append((zero, zero, zero, dx, wx * wz, -wx * wy))                           # Ixx
    cols.append((zero, zero, zero, dy - wx * wz, dx + wy * wz, wx * wx - wy * wy))   # Ixy
    cols.append((zero, zero, zero, dz + wx * wy, wz * wz - wx * wx, dx - wy * wz))   # Ixz
    cols.append((zero, zero, zero, -wy * wz, dy, wx * wy))                           # Iyy
    cols.append((zero, zero, zero, wy * wy - wz * wz, dz - wx * wy, dy + wx * wz))   # Iyz
    cols.append((zero, zero, zero, wy * wz, -wx * wz, dz))                           # Izz
    return np.array([[c[k] for c in cols] for k in range(6)])


def _wrench_columns(layout):
    """Return the columns that carry a wrench (link parameters and rotors), in pi's order."""
    cols = np.sort(np.concatenate([layout.link.ravel(), layout.rotor[layout.rotor >= 0]]))
    return cols, np.searchsorted(cols, layout.block_start)


def _chunk(model, q, qd, qdd, out, layout, load):
    joints = joint_constants(model)
    terms = friction_terms(model, q, qd, layout.friction, load)
    links = _forward(model, q, qd, qdd)
    cols, first = model_constant(model, ("identification.wrench_columns", layout.friction),
                                 lambda _: _wrench_columns(layout))
    # wrench of every column (6, columns, samples), carried from frame to frame towards the base;
    # samples last, so that each column's row of samples is contiguous
    M = np.zeros((6, cols.size, q.shape[0]))
    for i in range(model.n - 1, -1, -1):
        w, wd, a, ct, st, d, pw, pwd = links[i]
        s = first[i]
        M[:, s:s + 10] = _link_wrench_columns(w, wd, a)
        nxt = i + 1
        if nxt < model.n and layout.rotor[nxt] >= 0:
            # rotor i+1 on link i: moment k_r (qd w_i x z + qdd z), in X_{i+1} then frame i (7.113)
            kr, jc = model.gear_ratio[nxt], joints[nxt]
            pw_n = links[nxt][6]
            mx, my, mz = kr * qd[:, nxt] * pw_n[1], -kr * qd[:, nxt] * pw_n[0], kr * qdd[:, nxt]
            ca, sa = jc.cos_alpha, jc.sin_alpha
            c = int(np.searchsorted(cols, layout.rotor[nxt]))
            M[3, c], M[4, c], M[5, c] = mx, ca * my - sa * mz, sa * my + ca * mz
        out[:, i, cols[s:]] = (M[2, s:] if joints[i].prismatic else M[5, s:]).T
        if layout.rotor[i] >= 0:   # (7.111), (7.114): k_r (wd_{i-1} . z_i + k_r qdd_i)
            kr = model.gear_ratio[i]
            out[:, i, layout.rotor[i]] = kr * (pwd[2] + kr * qdd[:, i])
        for kind, term in terms.items():
            out[:, i, friction_columns(layout, kind)[i]] = term[:, i]
        if i == 0:
            break
        # hand the columns to frame i-1: Rz(theta) into X, moment shifted by p = (a, e, d),
        # then Rx(alpha)   (7.112), (7.113)
        jc = joints[i]
        F = M[:, s:]
        fx, fy, fz = ct * F[0] - st * F[1], st * F[0] + ct * F[1], F[2]
        nx, ny, nz = ct * F[3] - st * F[4], st * F[3] + ct * F[4], F[5]
        if jc.a != 0.0 or np.any(d != 0.0):
            nx, ny, nz = nx - d * fy, ny + d * fx - jc.a * fz, nz + jc.a * fy
        if jc.e != 0.0:
            nx, nz = nx + jc.e * fz, nz - jc.e * fx
        ca, sa = jc.cos_alpha, jc.sin_alpha
        F[0], F[1], F[2] = fx, ca * fy - sa * fz, sa * fy + ca * fz
        F[3], F[4], F[5] = nx, ca * ny - sa * nz, sa * ny + ca * nz
    if model.coupled_drives:
        _coupled_columns(model, qdd, out, layout, terms)


def _coupled_columns(model, qdd, out, layout, terms):
    """
    Give the columns of each coupled drive i their coupling terms (core/model/coupling.py).

    Rotor: the column Im_i adds k_r^2 (K_i^T K_i - e_i e_i^T) qdd to what the recursion's rotor
    term gave (the rotor's spin inertia seen through K); friction: drive i's term (on its
    velocity K_i qd) acts on the joints as K_i^T, in place of the recursion's joint i alone.
    """
    for i in model.coupled_drives:
        row, kr = model.coupling[i], float(model.gear_ratio[i])
        if layout.rotor[i] >= 0:
            spin = np.outer(row, row)
            spin[i, i] -= 1.0
            out[:, :, layout.rotor[i]] += kr * kr * (qdd @ spin)
        for kind in DRIVE_KINDS:
            if kind in terms:
                out[:, :, friction_columns(layout, kind)[i]] = terms[kind][:, i, None] * row


def regressor(model, q, qd, qdd, friction=None, load_model=None) -> np.ndarray:
    """
    Return the regressor Y with tau = Y pi.

    Y with tau = Y pi (Siciliano et al. 2009, eq. 7.81): shape (n, p) for one configuration, (N, n,
    p) for a batch.

    The columns are named by ``parameter_names(model, friction)``; with the model's own
    friction kinds (``friction=None``) ``Y @ parameter_vector(model)`` equals
    ``predicted_effort(model, q, qd, qdd)`` (``rnea``, plus the torque offset if the model has
    one).  ``q, qd, qdd``: (n,) or (N, n).  ``load_model``: the model whose gravity torques g(q)
    the load-dependent friction's column |g(q)| sgn(qd) takes (default ``model``; same joints).
    """
    (q, qd, qdd), batched = joint_arrays(model, q=q, qd=qd, qdd=qdd)
    if not batched:
        return regressor(model, q[None], qd[None], qdd[None], friction, load_model)[0]
    layout = parameter_layout(model, friction)
    N, p = q.shape[0], layout.size
    out = np.zeros((N, model.n, p))
    for start in range(0, N, CHUNK):
        stop = min(start + CHUNK, N)
        load = None if "coulomb_load" not in layout.friction else \
            gravity_torques(load_model or model, q[start:stop])
        _chunk(model, q[start:stop], qd[start:stop], qdd[start:stop], out[start:stop], layout,
               load)
    return out
