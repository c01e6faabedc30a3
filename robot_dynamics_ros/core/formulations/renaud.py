"""
Renaud's Newton-Euler with augmented bodies, steps (0)-(10) (Renaud 1987, extrinsic calculation).

The recursion is the package's one Newton-Euler recursion (``algorithms/newton_euler.py``, which
is Renaud's projected algorithm), run here on Renaud's own constants: the augmented bodies of
Renaud 1987 without any further grouping (``model/bodies.py``, form ``"augmented"``), rotors and
friction left out as every formulation of this package leaves them out.  Modified DH frames
(Khalil-Kleinfinger), ``model.chain`` as is.

Body i has, at O_i (Renaud 1987, intrinsic calculation): mass m^i, first moment u^i = m^i d_ii,
and the inertia tensor k^i = phi^i - m^i d^_ii d^_ii.  Augmented body i = body i plus a point of
mass m*(i+1) = sum_{j>i} m^j at O_{i+1} (definition of augmented body i)::

    m*i = m^i + m*(i+1),  u*i = u^i + m*(i+1) p_{i,i+1},
    k*i = k^i - m*(i+1) p^_{i,i+1} p^_{i,i+1}.

It is rigid iff joint i+1 is revolute; otherwise step (0) recomputes u*, k* on line.  The
end-effector wrench (e_{n+1}, n_{n+1}) is taken about the origin of frame n (its moment about the
tool point moved there).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..algorithms import newton_euler as ne
from ..model.bodies import link_constants
from ..model.cache import model_constant
from ._common import cos_sin, cross, evaluate, joint_angles


@dataclass(frozen=True, eq=False)
class RenaudView:
    """What the recursion reads: the augmented rows, and the frames ``_common.prepare`` uses."""

    rows: tuple
    theta0: np.ndarray
    prismatic: np.ndarray
    d0: np.ndarray
    base: np.ndarray          # world -> frame 0
    tool: np.ndarray          # frame n -> tool frame

    @property
    def n(self) -> int:
        return len(self.rows)

    @property
    def tool_point(self) -> np.ndarray:
        return self.tool[:3, 3]


def view_of(model) -> RenaudView:
    """Return the augmented rows of the rigid model and its frames; once per model."""
    def build(m):
        ch = m.chain
        return RenaudView(ne.rows_of(link_constants(m.rigid(), "augmented")), ch.theta0,
                          ch.prismatic, ch.d0, ch.base, ch.flange)
    return model_constant(model, "renaud_view", build)


def augmented_parameters(model, q) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """
    m*i, u*i (n x 3) and k*i (n x 3 x 3) of the augmented bodies at q, in frames F_i (step 0).

    Only bodies followed by a prismatic joint depend on q (definition of augmented body i).
    """
    links = link_constants(model, "augmented")
    q = np.asarray(q, dtype=float)
    u, k = [], []
    for i, link in enumerate(links):
        if link.u_q is None:
            u.append(link.u), k.append(link.k)
        else:
            u.append(link.u + q[i + 1] * link.u_q)
            k.append(link.k + q[i + 1] * link.k_q + q[i + 1] ** 2 * link.k_qq)
    return np.array([link.m_star for link in links]), np.array(u), np.array(k)


def torques(view, inp) -> list:
    """Γ of steps (0)-(10) for one configuration (entries may be counting scalars)."""
    n = view.n
    theta, _ = joint_angles(view, inp.q)
    trig = [cos_sin(theta[i]) for i in range(n)]
    wrench = (0.0,) * 6
    if inp.force is not None:        # n_{n+1} about O_n: the moment about the tool point, moved
        moment = inp.moment + cross(view.tool_point, inp.force)
        wrench = tuple(inp.force) + tuple(moment)
    ws = [[0.0] * ne.N_WORKSPACE for _ in range(n)]
    tau = [0.0] * n
    ne.forward_pass(view.rows, list(inp.q), list(inp.qd), list(inp.qdd), [t[0] for t in trig],
                    [t[1] for t in trig], list(inp.gravity), ws)
    ne.backward_pass(view.rows, list(inp.q), list(inp.qd), list(inp.qdd), [0.0] * n, wrench, ws,
                     tau)
    return tau


def inverse_dynamics(model, q, qd, qdd, gravity=None, f_ext=None) -> np.ndarray:
    """Return the rigid-body Γ(q, qd, qdd) + J^T f_ext (f_ext as for ``rnea``)."""
    return evaluate(torques, view_of, model, q, qd, qdd, gravity, f_ext)
