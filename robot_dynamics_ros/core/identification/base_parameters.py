"""
The base (identifiable) parameters of a model, found numerically.

Siciliano et al. 2009, Sect. 7.4.

Joint torques do not depend on every parameter of pi separately: some columns of the regressor are
zero (the parameter never acts, e.g. the mass of link 1 on a fixed vertical axis) and some are
linear combinations of others (Siciliano et al. 2009, Example 7.2: only 5 of the 8 non-null
parameters of the planar arm are independent, footnote 6; "remove (number of parameters in the
combination - 1) columns per combination", Siciliano et al. 2009, Sect. 7.4).  Let W be Y stacked
over random samples (7.85):

1. columns whose norm is below ``ZERO`` x the largest are *unidentifiable* (no effect at all);
2. the others are scaled to unit norm and the rank r of W comes from a QR decomposition with
   column pivoting (diagonal of R above ``RANK_TOL`` x its first entry; the gap to the next entry
   is kept in ``rank_gap``);
3. r independent columns are then picked greedily in a preferred order (QR without pivoting on
   the reordered W): links from the base to the tip, and in each link Ixx, Ixy, Ixz, Iyz, Izz,
   mx, my before mz, m, Iyy, and rotor inertias, friction and offsets after all link
   parameters.  So the
   parameters of an outer link are folded into the inner ones, as Khalil and Gautier's grouping
   rules and the code generator's regrouping (``model/bodies.py``, form "full") do: what lies on a
   revolute joint's axis (m, mz, and Iyy - Ixx) moves with the previous link.  Were this order
   to reach a lower rank (it never did on the shipped robots), the pivoted selection is used;
4. each dependent column is the exact combination W_d = W_b beta (least squares, residual
   checked), so tau = Y pi = W_b pi_b with pi_b = pi_independent + beta pi_dependent: the base
   parameters are the sums printed by :meth:`BaseParameters.expressions`.

The samples are random (fixed seed), so only structural dependencies (those of the kinematics and
the gravity direction) are found, never ones of a particular trajectory.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from ..model.cache import model_constant
from .parameters import LINK_KINDS, friction_columns, friction_kinds, parameter_layout
from .regressor import regressor

ZERO = 1e-10
RANK_TOL = 1e-8
_LINK_PREFERENCE = ("Ixx", "Ixy", "Ixz", "Iyz", "Izz", "mx", "my", "mz", "m", "Iyy")


@dataclass(frozen=True, eq=False)
class BaseParameters:
    """The identifiable combinations pi_b = K pi of a model's parameters (module docstring)."""

    parameter_names: tuple[str, ...]   # all p parameters (columns of the regressor)
    # (b,) columns kept: base parameter k is led by parameter independent[k]
    independent: np.ndarray
    dependent: np.ndarray              # columns expressed through the kept ones
    unidentifiable: np.ndarray         # columns with no effect on any torque
    combination: np.ndarray            # K, (b, p): pi_b = K pi
    rank_gap: float                    # last kept / first dropped diagonal of the pivoted R

    @property
    def count(self) -> int:
        return int(self.independent.size)

    @property
    def names(self) -> tuple[str, ...]:
        """
        Return one name per base parameter.

        One name per base parameter: its leading parameter, with ``R`` if others are
        regrouped in.
        """
        out = []
        for k, col in enumerate(self.independent):
            grouped = np.count_nonzero(self.combination[k]) > 1
            out.append(self.parameter_names[col] + ("R" if grouped else ""))
        return tuple(out)

    def values(self, pi) -> np.ndarray:
        """pi_b = K pi for a full parameter vector pi."""
        return self.combination @ np.asarray(pi, dtype=float)

    def columns(self, Y: np.ndarray) -> np.ndarray:
        """Return the base regressor W_b from a regressor Y (..., p): tau = W_b pi_b."""
        return Y[..., self.independent]

    def expressions(self, precision: int = 6) -> list[str]:
        """
        Return each base parameter as a sum of named parameters.

        For example ``Izz[joint1]R = Izz[joint1] + 0.186 m[joint2] + ...``.
        """
        lines = []
        for name, row in zip(self.names, self.combination):
            terms = []
            for col in np.flatnonzero(row):
                c = row[col]
                mag = abs(c)
                coef = "" if abs(mag - 1.0) < 10.0 ** -precision else f"{mag:.{precision}g} "
                sign = "-" if c < 0 else "+"
                terms.append((sign, f"{coef}{self.parameter_names[col]}"))
            text = ("-" if terms[0][0] == "-" else "") + terms[0][1]
            text += "".join(f" {s} {t}" for s, t in terms[1:])
            lines.append(f"{name} = {text}")
        return lines

    def summary(self) -> str:
        """Return the count and the expressions, as printed by the command line."""
        p = len(self.parameter_names)
        head = (f"{self.count} base parameters of {p} ({self.unidentifiable.size} with no effect, "
                f"{self.dependent.size} regrouped)")
        return "\n".join([head] + ["  " + line for line in self.expressions()])


def preferred_order(model, friction=None) -> list[int]:
    """Column order in which independent parameters are picked (module docstring, step 3)."""
    layout = parameter_layout(model, friction)
    order = []
    for i in range(model.n):
        order += [int(layout.link[i][LINK_KINDS.index(kind)]) for kind in _LINK_PREFERENCE]
    for columns in (layout.rotor,) + tuple(friction_columns(layout, kind)
                                           for kind in layout.friction):
        order += [int(c) for c in columns if c >= 0]
    return order


def sample_states(model, count: int, rng: np.random.Generator):
    """
    Return random states for structural ranks.

    Random (q, qd, qdd) within the position limits (at most +-pi wide), for structural ranks.
    """
    lower = np.maximum(model.lower, -np.pi)
    upper = np.minimum(model.upper, np.pi)
    upper = np.where(upper > lower, upper, lower + 1.0)
    q = rng.uniform(lower, upper, size=(count, model.n))
    return q, rng.normal(size=(count, model.n)), rng.normal(size=(count, model.n))


def _greedy(Wn: np.ndarray, order: list[int], tol: float) -> list[int]:
    """
    Pick independent columns in the given order.

    Columns of the unit-norm matrix Wn, in ``order``, that are not combinations of earlier kept
    ones (Gram-Schmidt with re-orthogonalisation).
    """
    basis, kept = [], []
    for col in order:
        r = Wn[:, col].copy()
        for _ in range(2):
            for b in basis:
                r -= (b @ r) * b
        norm = np.linalg.norm(r)
        if norm > tol:
            basis.append(r / norm)
            kept.append(col)
    return kept


def _build(model, friction) -> BaseParameters:
    layout = parameter_layout(model, friction)
    p = layout.size
    samples = max(60, (6 * p) // model.n)
    rng = np.random.default_rng(20240607)
    W = regressor(model, *sample_states(model, samples, rng), friction).reshape(-1, p)
    norms = np.linalg.norm(W, axis=0)
    zero = norms <= ZERO * norms.max()
    live = np.flatnonzero(~zero)
    Wn = np.zeros_like(W)
    Wn[:, live] = W[:, live] / norms[live]
    _, R, piv = scipy.linalg.qr(Wn[:, live], mode="economic", pivoting=True)
    diag = np.abs(np.diag(R))
    rank = int(np.count_nonzero(diag > RANK_TOL * diag[0]))
    gap = float(diag[rank - 1] / diag[rank]) if rank < diag.size and diag[rank] > 0 else np.inf
    order = [c for c in preferred_order(model, friction) if not zero[c]]
    kept = _greedy(Wn, order, tol=np.sqrt(RANK_TOL))
    if len(kept) != rank:
        kept = sorted(live[piv[:rank]].tolist())
    independent = np.array(sorted(kept), dtype=int)
    dependent = np.array([c for c in live if c not in set(kept)], dtype=int)
    K = np.zeros((rank, p))
    K[np.arange(rank), independent] = 1.0
    if dependent.size:
        beta, *_ = np.linalg.lstsq(W[:, independent], W[:, dependent], rcond=None)
        # exact structural coefficients: rounding noise below 1e-10 of the largest is zero
        beta[np.abs(beta) < 1e-10 * max(1.0, np.abs(beta).max())] = 0.0
        K[:, dependent] = beta
    return BaseParameters(
        parameter_names=layout.names,
        independent=independent,
        dependent=dependent,
        unidentifiable=np.flatnonzero(zero),
        combination=K,
        rank_gap=gap)


def base_parameters(model, friction=None) -> BaseParameters:
    """
    Return the model's base parameters (computed once per model; see the module docstring).

    ``friction``: the friction kinds with columns (``parameters.py``); None: the model's own.
    """
    kinds = friction_kinds(model, friction)
    return model_constant(model, ("identification.base_parameters", kinds),
                          lambda m: _build(m, kinds))
