"""Robots with the friction law's further terms (quadratic viscous, load-dependent Coulomb)."""

import numpy as np

from robot_dynamics_ros.core import RobotModel


def with_further_friction(model, quadratic, load, viscous=None, coulomb=None):
    """
    Return ``model`` with F_v2 = ``quadratic`` and F_l = ``load`` on every joint (scalars or n).

    ``viscous``, ``coulomb``: F_v and F_s too (None: the model's own).
    """
    spec = model.to_dict()
    n = model.n
    quadratic, load = np.broadcast_to(quadratic, n), np.broadcast_to(load, n)
    for j, joint in enumerate(spec["joints"]):
        friction = joint["friction"]
        friction["viscous_quadratic"] = float(quadratic[j])
        friction["coulomb_load"] = float(load[j])
        if viscous is not None:
            friction["viscous"] = float(np.broadcast_to(viscous, n)[j])
        if coulomb is not None:
            friction["coulomb"] = float(np.broadcast_to(coulomb, n)[j])
    return RobotModel.from_dict(spec, f"{model.name} (further friction)")


def law(model, q, qd):
    """
    Return F_v qd + F_v2 qd|qd| + (F_s + F_l |g(q)|) sgn(qd), written out here.

    g(q) from the frictionless model's ``rnea`` at rest, so that the test's oracle shares no
    code with ``core.control.friction``.
    """
    from robot_dynamics_ros.core import rnea
    g = rnea(model.without_friction(), q, np.zeros_like(q), np.zeros_like(q))
    return (model.viscous * qd + model.viscous_quadratic * qd * np.abs(qd)
            + (model.coulomb + model.coulomb_load * np.abs(g)) * np.sign(qd))
