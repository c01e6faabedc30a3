"""
Per-link constants of the Newton-Euler recursion: plain bodies, Renaud's augmented bodies, grouped.

Inputs are the model's internal modified-DH chain (``model.chain``, so standard-DH files work
too).  Per link i (1-based in the comments, 0-based in the code), the moments at O_i in frame i
(Renaud 1987): u^i = m^i d_ii and k^i = phi^i - m^i d^_ii d^_ii =
phi^i + m^i (|d|^2 E - d d^T).  Three forms (``FORMS``) feed the one recursion
(``algorithms/newton_euler.py``), all giving the same torques:

* ``"plain"``: the bodies themselves (m^i, centre of mass d_ii, phi^i about it; and u^i, k^i),
  for the classical iteration (Milićević et al., Table 2):
  f^i = f^{i+1} + m^i (alpha_i + b_i d_ii).
* ``"augmented"``: Renaud's augmented bodies (Renaud 1987, step (0), with the
  erratum p_{i,i+1}(i)): m*i = sum_{j>=i} m^j, u*i = u^i + m*(i+1) p_{i,i+1}(i),
  k*i = k^i - m*(i+1) p^ p^, for the simplified iteration (Renaud 1987) e_i = e_{i+1} + b_i u*i +
  sigma_i m*i t_i.  When joint i+1 is prismatic, p_{i,i+1}(i) = p0 + q_{i+1} zeta (zeta =
  z_{i+1}(i)) depends on the joint variable; the constant part is folded here and the
  q-dependent part is kept as coefficients (``u_q``, ``k_q``, ``k_qq``) that the recursion
  evaluates on line (step (0) on line).
* ``"full"``: the augmented bodies with constants regrouped between neighbouring links,
  generalising Renaud's y5 - z6 observation (Renaud 1987, the 6R example; the "exhaustive
  gathering" of base parameters is the later work of Khalil, Gautier and Bennis, not in Renaud
  1987).  Every transfer moves a mass distribution that has the same motion on both links, so every
  torque is unchanged exactly:

  - revolute joint j: a distribution on the axis of joint j moves identically with link j and
    link j-1.  Two such pieces are moved from augmented body j to j-1 (or dropped, for j = 1,
    onto the fixed base):

    - a dipole at O_j along z_j carrying the first moment mu = u*j . z_j (zero mass): link j
      gets u_z = 0; link j-1 gets u += mu z_j and, the dipole being off O_{j-1},
      k += mu (2 (p.z_j) E - p z_j^T - z_j p^T) with p = p_{j-1,j};
    - a line quadrupole on the axis, zero mass and first moment, second moment
      lambda (E - z_j z_j^T) with lambda = k*j_yy: link j gets XX - YY and YY = 0; link j-1 gets
      lambda (E - z_j z_j^T) (no shift term: zero mass and first moment).

    Renaud's y5 - z6 is the first rule at j = 6 (alpha_5 = pi/2: z_6 = -y_5, p_56 = 0).
  - prismatic joint j: link j does not turn relative to link j-1, so a zero-mass,
    zero-first-moment distribution with second moment k*j (all of it) can ride on link j-1
    instead: k_{j-1} += R_{j-1,j} k*j R_{j-1,j}^T and k*j = 0.

The code generator offers ``"augmented"`` (Renaud's own table: Renaud 1987, the 6R example)
and ``"full"`` (``GROUPINGS``), the fewest operations.  The core's numeric Newton-Euler runs on
``"full"`` too, except where the DH origins lie far away (:func:`numeric_form`): the augmented
moments k* = k - m* p^ p^ carry the squared distances of the DH origins, which a URDF with almost
parallel axes put kilometres away in the plain modified-DH construction (a DH file may still
have far origins), and lose precision as their square; the classical iteration on
``"plain"`` bodies loses it only in proportion (``algorithms/newton_euler._plain_terms``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..transforms import ROUNDING as SNAP, exact_cos_sin, snap_unit
from .inertia import parallel_axis

GROUPINGS = ("full", "augmented")
FORMS = ("plain",) + GROUPINGS


def quarter_turns(angle: float) -> int | None:
    """Return k if angle is k * pi/2 (mod 2 pi) to within SNAP, else None."""
    k = round(angle / (math.pi / 2))
    return k % 4 if abs(angle - k * math.pi / 2) < SNAP else None


@dataclass
class Link:
    """Constants of link i for the recursion (arrays are numpy floats)."""

    prismatic: bool
    ca: float          # cos alpha_{i-1}, snapped
    sa: float          # sin alpha_{i-1}, snapped
    a: float           # a_{i-1}
    theta0: float      # theta_i offset (the angle itself for a prismatic joint)
    d0: float          # r_i offset (r_i itself for a revolute joint)
    e: float           # offset along y of Rx(alpha_{i-1}) (model.Chain; 0: a plain DH row)
    p0: np.ndarray     # p_{i-1,i}(i-1) at q_i = 0 (constant for a revolute joint): Chain.p_prev
    m_star: float      # m*i (augmented bodies; 0 for plain ones): f_i = e_i + m*i r_{i-1}  (8)
    u: np.ndarray      # constant part of u*i (3,)
    k: np.ndarray      # constant part of k*i (3, 3)
    u_q: np.ndarray | None = None    # u*i += q_{i+1} u_q          (joint i+1 prismatic)
    k_q: np.ndarray | None = None    # k*i += q_{i+1} k_q + q_{i+1}^2 k_qq
    k_qq: np.ndarray | None = None
    rotor: float = 0.0  # I_m k_r (Siciliano et al. 2009, eqs. 7.111/7.113)
    gear: float = 1.0   # k_r
    viscous: float = 0.0
    coulomb: float = 0.0
    mass: float = 0.0   # m^i of a plain body (0 for an augmented one)
    com: np.ndarray | None = None        # plain body: centre of mass d_ii in frame i
    inertia_c: np.ndarray | None = None  # plain body: phi^i, the inertia tensor about it

    @property
    def zeta(self) -> np.ndarray:
        """z_i in frame i-1: R_{i-1,i} Z = (0, -sin alpha_{i-1}, cos alpha_{i-1})."""
        return np.array([0.0, -self.sa, self.ca])

    def rotation_to_parent(self) -> np.ndarray:
        """R_{i-1,i} of a prismatic joint (constant): Rx(alpha_{i-1}) Rz(theta_i)."""
        ct, st = exact_cos_sin(self.theta0)
        rx = np.array([[1.0, 0.0, 0.0], [0.0, self.ca, -self.sa], [0.0, self.sa, self.ca]])
        rz = np.array([[ct, -st, 0.0], [st, ct, 0.0], [0.0, 0.0, 1.0]])
        return rx @ rz


def _shift(p: np.ndarray) -> np.ndarray:
    """-p^ p^ = |p|^2 E - p p^T: second moment about O of a unit mass at p."""
    return (p @ p) * np.eye(3) - np.outer(p, p)


def _internal_inertial(model):
    """
    Return mass, CoM and inertia per link in the internal frames.

    They are recomputed from the file frames with the fixed rotation snapped (so alpha = pi/2
    leaves exact zeros, not 1e-17 products).
    """
    offsets = model.chain.link_offset
    coms, inertias = [], []
    for i in range(model.n):
        R = np.vectorize(snap_unit)(offsets[i][:3, :3])
        coms.append(R @ model.com[i] + offsets[i][:3, 3])
        inertias.append(R @ model.inertia[i] @ R.T)
    return np.asarray(model.mass, float), np.array(coms), np.array(inertias)


def link_constants(model, grouping: str = "full") -> list[Link]:
    """Per-link constants of ``model`` in the form ``grouping`` (one of ``FORMS``; module doc)."""
    if grouping not in FORMS:
        raise ValueError(f"grouping must be one of {list(FORMS)}, got {grouping!r}")
    ch, n = model.chain, model.n
    mass, com, inertia = _internal_inertial(model)
    m_star = np.cumsum(mass[::-1])[::-1]
    links = []
    for i in range(n):
        ca, sa = exact_cos_sin(float(ch.alpha_prev[i]))
        links.append(Link(
            prismatic=bool(ch.prismatic[i]), ca=ca, sa=sa,
            a=float(ch.a_prev[i]), theta0=float(ch.theta0[i]), d0=float(ch.d0[i]),
            e=float(ch.e_prev[i]), p0=np.array(ch.p_prev[i], dtype=float),
            m_star=float(m_star[i]),
            u=mass[i] * com[i], k=parallel_axis(inertia[i], mass[i], com[i]),
            rotor=float(ch.rotor_inertia[i] * ch.gear_ratio[i]), gear=float(ch.gear_ratio[i]),
            viscous=float(ch.viscous[i]), coulomb=float(ch.coulomb[i])))
    if grouping == "plain":
        for link, m, c, phi in zip(links, mass, com, inertia):
            link.m_star, link.mass, link.com, link.inertia_c = 0.0, float(m), c, phi
        return links
    # Augmented bodies, step (0): the outer bodies' mass m*(i+1) as a point at O_{i+1}.
    for i in range(n - 1):
        nxt, ms = links[i + 1], links[i + 1].m_star
        p0, zeta = nxt.p0, nxt.zeta
        links[i].u = links[i].u + ms * p0
        links[i].k = links[i].k + ms * _shift(p0)
        if nxt.prismatic:  # p = p0 + q zeta: the q-dependent part, evaluated on line
            links[i].u_q = ms * zeta
            links[i].k_q = ms * (2.0 * (p0 @ zeta) * np.eye(3) - np.outer(p0, zeta)
                                 - np.outer(zeta, p0))
            links[i].k_qq = ms * _shift(zeta)
    if grouping == "full":
        _regroup(links)
    return links


def _regroup(links: list[Link]) -> None:
    """Move distributions shared by links j and j-1 onto link j-1, from the tip to the base."""
    for j in range(len(links) - 1, -1, -1):
        link = links[j]
        parent = links[j - 1] if j > 0 else None  # j = 0: onto the fixed base (dropped)
        if link.prismatic:
            if parent is not None:
                R = link.rotation_to_parent()
                parent.k = parent.k + R @ link.k @ R.T
            link.k = np.zeros((3, 3))
            continue
        zeta, p = link.zeta, link.p0
        mu = link.u[2]
        link.u = np.array([link.u[0], link.u[1], 0.0])
        lam = link.k[1, 1]
        link.k = link.k - lam * np.diag([1.0, 1.0, 0.0])
        link.k[1, 1] = 0.0
        if parent is not None:
            parent.u = parent.u + mu * zeta
            parent.k = (parent.k + mu * (2.0 * (p @ zeta) * np.eye(3) - np.outer(p, zeta)
                                         - np.outer(zeta, p))
                        + lam * _shift(zeta))


FAR = 10.0     # m: joint offsets beyond this make the numeric Newton-Euler run on plain bodies


def numeric_form(model) -> str:
    """
    Return the form the core's numeric Newton-Euler uses for ``model`` (module docstring).

    ``"full"`` (about 20 % fewer operations than ``"plain"``) while every joint offset |p_prev|
    is within ``FAR``: its error, of order eps kappa^2 with kappa the largest offset in metres,
    then stays within eps kappa times 10, the classical iteration's bound.  (URDF chains no
    longer have far offsets, axes_to_dh.py; a DH file may still.)
    """
    far = float(np.abs(model.chain.p_prev).max())
    return "full" if far <= FAR else "plain"


def gravity_in_base(model) -> np.ndarray:
    """
    Return the model's gravity in frame 0.

    Components below 1e-12 |g| (rounding of a base rotation) are exact zeros so that they cost
    nothing.
    """
    g = np.array(model.chain.gravity_base, dtype=float)
    scale = float(np.abs(g).max()) if g.size else 0.0
    g[np.abs(g) < SNAP * scale] = 0.0
    return g
