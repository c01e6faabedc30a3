"""
Renaud's extrinsic algorithm, steps (0)-(10), emitted on the expression DAG.

Renaud 1987, extrinsic calculation, with the corrections of doc/references.md (checked numerically:
sigma-bar in (3b), sigma_i t_i in (5)/(6c)/(7a), e_i(i-1) and n_i(i-1) in (7b)/(9b), and
Gamma^i = Z^t (sigma-bar n + sigma f) in (10)).  Vectors are tuples of three DAG nodes in the frame
named in the comments; tensors are 3x3 tuples.  Quantities are intrinsic (the recursions of
Renaud 1987's intrinsic calculation) and projected on the frame where they are cheapest, R_{i,i-1}
being applied as Rz(-theta_i) after Rx(-alpha_{i-1}), which is a free permutation/negation when
alpha_{i-1} is a multiple of pi/2 (its sine and cosine are snapped to exact 0/+-1, see
parameters.py).

Additions to Renaud's rigid model, from Siciliano et al. 2009 (as the core's rnea):

* rotor i on link i-1 spinning at k_r qd_i about z_i: tau_i += I_m k_r (wd_{i-1} . z_i + k_r qdd_i)
  (7.111/7.114), and link i-1's moment gets I_m k_r (qdd_i z_i + qd_i w_{i-1} x z_i) (7.113);
* friction: tau_i += F_v qd_i + F_s sgn(qd_i) (7.114).
"""
from __future__ import annotations

import numpy as np

from .expr import Graph
from ..core.transforms import exact_cos_sin
from .parameters import Link, quarter_turns


class RenaudEmitter:
    """Builds torque expressions for one robot (constants from parameters.link_constants)."""

    def __init__(self, graph: Graph, links: list[Link], gravity_base: np.ndarray):
        self.g = graph
        self.links = links
        self.gravity_base = np.asarray(gravity_base, dtype=float)

    # -- small vector algebra on nodes ----------------------------------------------------------
    def const_vec(self, v):
        return tuple(self.g.const(x) for x in v)

    def const_mat(self, m):
        return tuple(tuple(self.g.const(x) for x in row) for row in m)

    def vadd(self, u, v):
        return tuple(self.g.add(a, b) for a, b in zip(u, v))

    def scale(self, s, v):
        return tuple(self.g.mul(s, x) for x in v)

    def matvec(self, m, v):
        return tuple(self.g.dot(row, v) for row in m)

    def cross(self, u, v):
        g = self.g
        return (g.sub(g.mul(u[1], v[2]), g.mul(u[2], v[1])),
                g.sub(g.mul(u[2], v[0]), g.mul(u[0], v[2])),
                g.sub(g.mul(u[0], v[1]), g.mul(u[1], v[0])))

    # -- joint geometry -------------------------------------------------------------------------
    def joint_trig(self, link: Link, q):
        """(cos theta_i, sin theta_i, r_i) as nodes."""
        g = self.g
        if link.prismatic:
            c, s = map(g.const, exact_cos_sin(link.theta0))
            return c, s, g.add(g.const(link.d0), q)
        turns = quarter_turns(link.theta0)
        if turns is None:
            angle = g.add(q, g.const(link.theta0))
            return g.cos(angle), g.sin(angle), g.const(link.d0)
        cq, sq = g.cos(q), g.sin(q)
        c, s = [(cq, sq), (g.neg(sq), cq), (g.neg(cq), g.neg(sq)), (sq, g.neg(cq))][turns]
        return c, s, g.const(link.d0)

    def to_child(self, link: Link, trig, v):
        """R_{i,i-1} v = Rz(-theta) Rx(-alpha) v: a frame-(i-1) vector in frame i."""
        g = self.g
        c, s, _ = trig
        ca, sa = g.const(link.ca), g.const(link.sa)
        x, y, z = v
        y1 = g.add(g.mul(ca, y), g.mul(sa, z))
        z1 = g.sub(g.mul(ca, z), g.mul(sa, y))
        return (g.add(g.mul(c, x), g.mul(s, y1)), g.sub(g.mul(c, y1), g.mul(s, x)), z1)

    def to_parent(self, link: Link, trig, v):
        """R_{i-1,i} v = Rx(alpha) Rz(theta) v: a frame-i vector in frame i-1."""
        g = self.g
        c, s, _ = trig
        ca, sa = g.const(link.ca), g.const(link.sa)
        x, y, z = v
        x1 = g.sub(g.mul(c, x), g.mul(s, y))
        y1 = g.add(g.mul(s, x), g.mul(c, y))
        return (x1, g.sub(g.mul(ca, y1), g.mul(sa, z)), g.add(g.mul(sa, y1), g.mul(ca, z)))

    def offset(self, link: Link, trig):
        """p_{i-1,i}(i-1) = (a_{i-1}, -r_i sin alpha_{i-1}, r_i cos alpha_{i-1})."""
        g = self.g
        r = trig[2]
        return (g.const(link.a), g.neg(g.mul(g.const(link.sa), r)), g.mul(g.const(link.ca), r))

    def augmented(self, i: int, q_next):
        """
        Return u*i and k*i as nodes.

        Constants, plus the on-line part of step (0) when joint i+1 is prismatic (p_{i,i+1} then
        depends on q_{i+1}).
        """
        g, link = self.g, self.links[i]
        u, k = self.const_vec(link.u), self.const_mat(link.k)
        if link.u_q is not None:
            qq = g.mul(q_next, q_next)
            u = self.vadd(u, self.scale(q_next, self.const_vec(link.u_q)))
            k = tuple(tuple(g.add(k[r][c], g.add(g.mul(g.const(link.k_q[r, c]), q_next),
                                                 g.mul(g.const(link.k_qq[r, c]), qq)))
                            for c in range(3)) for r in range(3))
        return u, k

    def gyroscopic(self, k, delta):
        """
        Return w x (k w) from the products delta = w (x) w of step (2).

        Each component is a linear combination of the delta_jk with coefficients from k
        (3 multiplications for a diagonal k, instead of 9 for k w and w x (k w)).
        """
        g = self.g
        dxx, dyy, dzz, dxy, dxz, dyz = delta
        (kxx, kxy, kxz), (_, kyy, kyz), (_, _, kzz) = k

        def component(k_a, d_a, k_b, d_b1, d_b2, k_c1, k_c2, d_c, k_d, d_d):
            return g.sum((g.mul(k_a, d_a), g.mul(k_b, g.sub(d_b1, d_b2)),
                          g.mul(g.sub(k_c1, k_c2), d_c), g.neg(g.mul(k_d, d_d))))
        return (component(kxz, dxy, kyz, dyy, dzz, kzz, kyy, dyz, kxy, dxz),
                component(kxy, dyz, kxz, dzz, dxx, kxx, kzz, dxz, kyz, dxy),
                component(kyz, dxz, kxy, dxx, dyy, kyy, kxx, dxy, kxz, dyz))

    # -- the algorithm --------------------------------------------------------------------------
    def torques(self, q, qd, qdd, *, gravity: bool = True, friction: bool = True) -> list[int]:
        """Gamma (with rotor and friction terms) as nodes, for nodes q, qd, qdd (lists of n)."""
        g, links, n = self.g, self.links, len(self.links)
        zero3 = (g.zero,) * 3
        g.label = "trig"
        trig = [self.joint_trig(links[i], q[i]) for i in range(n)]
        # Initial conditions (Renaud 1987, corrected as in doc/references.md): w_0 = a_0 = 0,
        # alpha_0 = g Z, i.e. minus gravity.
        w, acc, alpha = (zero3, zero3,
                         self.const_vec(-self.gravity_base if gravity else np.zeros(3)))
        b = None
        fwd = []
        for i, link in enumerate(links):
            tr = trig[i]
            g.label = "1"
            wp = self.to_child(link, tr, w)                                      # (1a)
            g.label = "3"
            ap = self.to_child(link, tr, acc)                                    # (3a)
            qw = (g.mul(qd[i], wp[1]), g.neg(g.mul(qd[i], wp[0])), g.zero)  # qd_i w^_{i-1}(i) Z
            if link.prismatic:
                w, acc = wp, ap
                g.label = "5"
                t = self.vadd(self.scale(g.const(2.0), qw), (g.zero, g.zero, qdd[i]))   # (5)
            else:
                g.label = "1"
                w = (wp[0], wp[1], g.add(wp[2], qd[i]))                          # (1b)
                g.label = "3"
                acc = self.vadd(ap, (qw[0], qw[1], qdd[i]))                      # (3b)
                t = zero3
            wx, wy, wz = w
            g.label = "2"
            dxx, dyy, dzz = g.mul(wx, wx), g.mul(wy, wy), g.mul(wz, wz)         # (2)
            dxy, dxz, dyz = g.mul(wx, wy), g.mul(wx, wz), g.mul(wy, wz)
            ax, ay, az = acc
            g.label = "4"
            b_new = ((g.neg(g.add(dyy, dzz)), g.sub(dxy, az), g.add(dxz, ay)),  # (4)
                     (g.add(dxy, az), g.neg(g.add(dxx, dzz)), g.sub(dyz, ax)),
                     (g.sub(dxz, ay), g.add(dyz, ax), g.neg(g.add(dxx, dyy))))
            g.label = "6"
            r_prev = (alpha if b is None                                         # (6a)
                      else self.vadd(alpha, self.matvec(b, self.offset(link, tr))))
            r = self.to_child(link, tr, r_prev)                                  # (6b)
            alpha = self.vadd(r, t)                                              # (6c)
            b = b_new
            fwd.append((w, acc, b, alpha, r, t, wp, ap, qw, (dxx, dyy, dzz, dxy, dxz, dyz)))

        tau = [g.zero] * n
        e_next = n_next = zero3
        for i in range(n - 1, -1, -1):
            link = links[i]
            w, acc, b, alpha, r, t, wp, ap, qw, delta = fwd[i]
            g.label = "0"
            u, k = self.augmented(i, q[i + 1] if i + 1 < n else None)
            g.label = "7"
            e = self.vadd(e_next, self.matvec(b, u))                             # (7a)
            if link.prismatic:
                ms = g.const(link.m_star)
                e = self.vadd(e, self.scale(ms, t))
                g.label = "8"
                force = self.vadd(e, self.scale(ms, r))                          # (8)
            g.label = "9"
            moment = self.vadd(n_next, self.matvec(k, acc))                      # (9a)
            moment = self.vadd(moment, self.gyroscopic(k, delta))
            moment = self.vadd(moment, self.cross(u, alpha))
            if i + 1 < n:
                p_next = self.offset(links[i + 1], trig[i + 1])
                moment = self.vadd(moment, self.cross(p_next, e_next))
            torque = force[2] if link.prismatic else moment[2]                   # (10)
            g.label = "rotor"
            # Siciliano et al. 2009, eqs. 7.111/7.114: I_m k_r (wd_{i-1} . z_i + k_r qdd_i)
            if link.rotor != 0.0:
                rotor = g.const(link.rotor)
                torque = g.add(torque, g.mul(rotor, g.add(ap[2],
                                                          g.mul(g.const(link.gear), qdd[i]))))
                # 7.113: the rotor's reaction on link i-1, I_m k_r (qdd_i z_i + qd_i w_{i-1} x z_i)
                moment = self.vadd(moment, self.scale(rotor, (qw[0], qw[1], qdd[i])))
            g.label = "friction"
            if friction and link.viscous != 0.0:
                torque = g.add(torque, g.mul(g.const(link.viscous), qd[i]))
            if friction and link.coulomb != 0.0:
                torque = g.add(torque, g.mul(g.const(link.coulomb), g.sign(qd[i])))
            tau[i] = torque
            g.label = "7"
            e_next = self.to_parent(link, trig[i], e)                            # (7b)
            g.label = "9"
            n_next = self.to_parent(link, trig[i], moment)                       # (9b)
        return tau
