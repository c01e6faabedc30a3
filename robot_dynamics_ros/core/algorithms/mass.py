"""The joint-space inertia matrix B(q) as the package exports it: the CRBA on the route."""
from __future__ import annotations

import numpy as np

from .route import bound


def mass_matrix(model, q) -> np.ndarray:
    """
    Return B(q), the joint-space inertia matrix (Siciliano et al. 2009, eq. 7.32), rotors included.

    By the composite-rigid-body algorithm, O(n^2).  Shape (n, n), or (N, n, n) for a batch (N, n).
    """
    return bound(model).mass_matrix(q)
