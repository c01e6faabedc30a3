"""
What every formulation shares: the two DH views of a model, input conversion, 3-vector helpers.

**Standard-DH view** (Milićević et al., Turney et al. 1980, Siciliano et al. 2009, Asada &
Slotine 1986): frame i at the distal end of link i, joint i
about z_{i-1}, i-1A_i = Rz(theta_i) Tz(d_i) Tx(a_i) Rx(alpha_i) (Milićević et al., eq. 2.1).  A
standard-DH model is used as written.  A modified-DH model (internal frames F_i on joint axis i,
``model.chain``) is converted exactly: S_i = F_i Tx(a_i) Rx(alpha_i) with (a_i, alpha_i) taken from
the *next* row (a_i := a_prev[i+1], alpha_i := alpha_prev[i+1]; zero for the last link), and the
fixed offset Rx(alpha_0) Tx(a_0) of the first row goes into the base: S_0 = base Rx(alpha_0)
Tx(a_0).  Link centres of mass and inertias are re-expressed in S_i once.  A general offset
(``model.Chain``: O_{i+1} at Rx(alpha_i) (a_i, e_{i+1}, d_{i+1}) in F_i, e = 0 for DH rows) adds
Ty(e_i) (e_i := e_prev[i+1]) after Rx(alpha_i): i-1A_i = Rz(theta_i) Tz(d_i) Tx(a_i) Rx(alpha_i)
Ty(e_i), the rotation unchanged, the translation :func:`translation_standard`.

**Modified-DH view** (Renaud 1987): ``model.chain`` itself, which is that same conversion in the
other direction for standard-DH models (see ``core/model.py``).

All formulations compute the *rigid-body* torque: rotor inertia, gear ratios and friction in the
model are ignored, i.e. the result equals ``rnea(model.rigid(), ...)``.  (Rotors and friction are
the main ``rnea``'s job; FGL's viscous b_i qd_i of Milićević et al., Tables 1-2 is the same
friction term.)

Everything here is plain float precomputation; the recursions themselves live in the formulation
modules and are written on numpy arrays whose entries may be floats or counting scalars
(``opcount.Counted``), so that the same code is timed and counted.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..algorithms.kinematics import tool_pose
from ..errors import InputError
from ..inputs import joint_arrays, vector_argument
from ..model.cache import model_constant
from ..transforms import exact_cos_sin, homogeneous, placement, rot_x
from .opcount import Counted, OpCount, counted_array, counting, value_of


@dataclass(frozen=True, eq=False)
class DHView:
    """
    One DH description of the rigid robot, arrays of length n (n x 3, n x 3 x 3).

    ``convention`` "standard": row i is (theta_i, d_i, a_i, alpha_i) of i-1A_i, com/inertia in the
    distal frame S_i.  "modified": row i is (alpha_{i-1}, a_{i-1}, theta_i, d_i) of T_{i-1,i},
    com/inertia in frame F_i on joint axis i.
    """

    convention: str
    a: np.ndarray
    e: np.ndarray                # the offset e of each row (module docstring); 0 for DH rows
    cos_alpha: np.ndarray
    sin_alpha: np.ndarray
    theta0: np.ndarray
    d0: np.ndarray
    prismatic: np.ndarray
    mass: np.ndarray
    com: np.ndarray              # centre of mass in the link frame
    inertia: np.ndarray          # about the centre of mass, link-frame axes
    base: np.ndarray             # world -> frame 0 of this view
    tool: np.ndarray             # last frame of this view -> tool frame

    @property
    def n(self) -> int:
        return len(self.a)

    @property
    def tool_point(self) -> np.ndarray:
        """Return the tool point in the last frame (where f_ext's moment is taken)."""
        return self.tool[:3, 3]


def _view(convention, a, e, alpha, theta0, d0, prismatic, mass, com, inertia, base,
          tool) -> DHView:
    cs = np.array([exact_cos_sin(x) for x in alpha]).reshape(-1, 2)
    frozen = lambda x: np.array(x, dtype=float)  # noqa: E731
    return DHView(convention, frozen(a), frozen(e), cs[:, 0], cs[:, 1], frozen(theta0), frozen(d0),
                  np.array(prismatic, dtype=bool), frozen(mass), frozen(com), frozen(inertia),
                  frozen(base), frozen(tool))


def standard_view(model) -> DHView:
    """Return the model in standard DH (see module docstring); computed once per model."""
    return model_constant(model, "standard_dh_view", _standard_view)


def _standard_view(model) -> DHView:
    prismatic = [t == "prismatic" for t in model.joint_types]
    if model.convention == "standard":
        view = _view("standard", model.dh_a, np.zeros(model.n), model.dh_alpha, model.dh_theta,
                     model.dh_d, prismatic, model.mass, model.com, model.inertia, model.base,
                     model.tool)
    else:
        ch = model.chain
        a, e = np.append(ch.a_prev[1:], 0.0), np.append(ch.e_prev[1:], 0.0)
        alpha = np.append(ch.alpha_prev[1:], 0.0)
        # S_i = F_i L_i with L_i = Tx(a_i) Rx(alpha_i) Ty(e_i): points map as
        # p_S = Rx(alpha)^T (p_F - a x) - e y.
        R = np.array([rot_x(al) for al in alpha])
        com = (np.einsum("nji,nj->ni", R, ch.com - np.outer(a, [1.0, 0.0, 0.0]))
               - np.outer(e, [0.0, 1.0, 0.0]))
        inertia = np.einsum("nji,njk,nkl->nil", R, ch.inertia, R)
        base = ch.base @ homogeneous(rot_x(ch.alpha_prev[0]),
                                     placement(ch.alpha_prev[0], ch.a_prev[0], ch.e_prev[0], 0.0))
        view = _view("standard", a, e, alpha, ch.theta0, ch.d0, prismatic, ch.mass, com,
                     inertia, base, model.tool)
    return view


def modified_view(model) -> DHView:
    """
    Return the model in modified DH: ``model.chain`` (exact for both file conventions).

    Computed once per model.
    """
    return model_constant(model, "modified_dh_view", lambda m: _view(
        "modified", m.chain.a_prev, m.chain.e_prev, m.chain.alpha_prev, m.chain.theta0,
        m.chain.d0,
        m.chain.prismatic, m.chain.mass, m.chain.com, m.chain.inertia, m.chain.base,
        m.chain.flange))


def joint_angles(view: DHView, q) -> tuple[list, list]:
    """theta_i and d_i of every joint for the joint vector q (floats or counting scalars)."""
    theta = [t0 if p else t0 + qi for t0, p, qi in zip(view.theta0, view.prismatic, q)]
    d = [d0 + qi if p else d0 for d0, p, qi in zip(view.d0, view.prismatic, q)]
    return theta, d


def cos_sin(angle):
    """Return cos and sin of a joint angle; counted when it is a counting scalar."""
    if isinstance(angle, Counted):
        return angle.cos(), angle.sin()
    return math.cos(angle), math.sin(angle)


def rotation_standard(ct, st, ca, sa) -> np.ndarray:
    """i-1R_i of standard DH (Milićević et al., eq. 2.1; Turney et al. 1980, eq. 1.10)."""
    return np.array([[ct, -st * ca, st * sa], [st, ct * ca, -ct * sa], [0.0, sa, ca]])


def translation_standard(view: DHView, i: int, ct, st, d) -> np.ndarray:
    """
    Return the translation of i-1A_i in frame i-1.

    Rz(theta_i) (a_i, e_i cos alpha_i, d_i + e_i sin alpha_i): (a_i cos theta_i, a_i sin theta_i,
    d_i) of Milićević et al., eq. 2.1 when e_i = 0 (every DH row: no operation is added), the
    general offset of the module docstring otherwise.
    """
    a, e = view.a[i], view.e[i]
    if e == 0.0:
        return np.array([a * ct, a * st, d])
    y = e * view.cos_alpha[i]
    return np.array([a * ct - y * st, a * st + y * ct, d + e * view.sin_alpha[i]])


def translation_in_link(view: DHView, i: int, d) -> np.ndarray:
    """
    Return ^ip_i*, the translation of i-1A_i in frame i.

    (a_i, d_i sin alpha_i + e_i, d_i cos alpha_i): Turney et al. 1980, eq. 1.14 (Milićević et
    al., Table 2) when e_i = 0; Rx(alpha_i)^T of :func:`translation_standard`'s vector before Rz
    otherwise.
    """
    sa, ca = view.sin_alpha[i], view.cos_alpha[i]
    y = d * sa if view.e[i] == 0.0 else d * sa + view.e[i]
    return np.array([view.a[i], y, d * ca])


def rotation_modified(ct, st, ca, sa) -> np.ndarray:
    """R_{i-1,i} of modified DH (Renaud 1987, T_{i-1,i} of the extrinsic calculation)."""
    return np.array([[ct, -st, 0.0], [ca * st, ca * ct, -sa], [sa * st, sa * ct, ca]])


@dataclass(frozen=True)
class Inputs:
    """One configuration, ready for a recursion: everything in the view's frames."""

    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    gravity: np.ndarray          # actual gravity vector (pointing down), in frame 0 of the view
    force: np.ndarray | None     # f_ext force, last frame of the view
    moment: np.ndarray | None    # f_ext moment about the tool point, last frame of the view


def prepare(model, view: DHView, q, qd, qdd, gravity=None, f_ext=None) -> Inputs:
    """
    Validate one configuration and express gravity and the wrench in the view's frames.

    ``f_ext``: the wrench [force; moment] the end effector exerts on the environment, world frame,
    moment about the tool point (the same as for ``rnea``).
    """
    (q, qd, qdd), batched = joint_arrays(model, q=q, qd=qd, qdd=qdd)
    if batched:
        raise InputError(f"the formulations take one configuration of shape ({model.n},), "
                         f"got a batch of shape {q.shape}; use rnea() for batches")
    g_world = model.gravity if gravity is None else vector_argument(gravity, 3, "gravity", None)
    g = view.base[:3, :3].T @ g_world
    force = moment = None
    if f_ext is not None:
        f_ext = vector_argument(f_ext, 6, "f_ext", None)
        # Orientation of the view's last frame in the world: tool pose times (last -> tool)^-1.
        R_last = tool_pose(model, q)[:3, :3] @ view.tool[:3, :3].T
        force, moment = R_last.T @ f_ext[:3], R_last.T @ f_ext[3:]
    return Inputs(q, qd, qdd, g, force, moment)


def evaluate(torques, view_of, model, q, qd, qdd, gravity=None, f_ext=None) -> np.ndarray:
    """
    Return a recursive formulation's torques of one configuration as a float array.

    ``torques(view, inputs)`` is the formulation's recursion on ``prepare``'s inputs,
    ``view_of(model)`` its DH view (standard or modified): the common body of each module's
    ``inverse_dynamics``.
    """
    view = view_of(model)
    return np.array(torques(view, prepare(model, view, q, qd, qdd, gravity, f_ext)), dtype=float)


# -- 3-vector helpers that work on float and object arrays alike (np.cross is slow on 3-vectors) --
def cross(u, v) -> np.ndarray:
    return np.array([u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2],
                     u[0] * v[1] - u[1] * v[0]])


def dot(u, v):
    return u[0] * v[0] + u[1] * v[1] + u[2] * v[2]


def skew(v) -> np.ndarray:
    """
    Return the cross-product tensor v^ (Renaud 1987, operations on vectors and tensors).

    skew(v) @ x == cross(v, x).
    """
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def acceleration_tensor(w, dw) -> np.ndarray:
    """
    Return the matrix A with A b = dw x b + w x (w x b).

    A b is the acceleration of a point at b on a body turning at w, dw (TML's A_i, Turney et al.
    1980 Sect. 5; Renaud's b = a^ + w^ w^, Renaud 1987, step (4)); 15 additions and 6 products.
    """
    xx, yy, zz = w[0] * w[0], w[1] * w[1], w[2] * w[2]
    xy, xz, yz = w[0] * w[1], w[0] * w[2], w[1] * w[2]
    return np.array([[-(yy + zz), xy - dw[2], xz + dw[1]],
                     [xy + dw[2], -(xx + zz), yz - dw[0]],
                     [xz - dw[1], yz + dw[0], -(xx + yy)]])


def count_operations(formulation, model, q, qd, qdd) -> tuple[OpCount, np.ndarray]:
    """
    Operations of one inverse-dynamics evaluation of ``formulation`` (a module of this package).

    Free motion (no wrench, as in the source texts' counts), the model's gravity as a constant.
    The joint state is counted; the robot's constants are not.  Returns the tally and the torque it
    computed (which must equal the float evaluation).
    """
    view = formulation.view_of(model)
    floats = prepare(model, view, q, qd, qdd)
    inp = Inputs(counted_array(floats.q), counted_array(floats.qd), counted_array(floats.qdd),
                 floats.gravity, None, None)
    with counting() as tally:
        tau = formulation.torques(view, inp)
    return tally, value_of(list(tau))
