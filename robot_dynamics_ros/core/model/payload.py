"""A payload in the tool frame, folded into the last link (Siciliano et al. 2009, Sect. 7.4)."""
from __future__ import annotations

import numpy as np

from .inertia import Body, combine_bodies, inertia_matrix


def fold_payload(link: Body, payload: dict, tool: np.ndarray) -> Body:
    """
    Return the last link (in its frame) carrying ``payload``.

    ``payload`` is {mass, com, inertia} about its centre of mass, in the tool frame, whose pose in
    the last link frame is ``tool``.
    """
    load = Body(payload["mass"], np.asarray(payload["com"], dtype=float),
                inertia_matrix(payload["inertia"]))
    return combine_bodies(link, load.transformed(tool))
