"""
Exact motion data for the identification tests: finite Fourier series and the core's rnea.

A periodic multi-sine per joint gives analytic q, qd, qdd; the torques of a "true" robot come from
``rnea`` (the oracle the regressor must reproduce); noise is added by the tests.
"""

from __future__ import annotations

import numpy as np

from robot_dynamics_ros.core import RobotModel, rnea


def multisine(model, t, rng, harmonics=5, period=10.0, amplitude=0.6):
    """
    Return a random finite Fourier series per joint.

    (q, qd, qdd) (N, n): a random finite Fourier series per joint around the middle of its
    range.
    """
    n = model.n
    w = 2 * np.pi / period * np.arange(1, harmonics + 1)
    mid = 0.5 * (np.maximum(model.lower, -np.pi) + np.minimum(model.upper, np.pi))
    half = 0.5 * (np.minimum(model.upper, np.pi) - np.maximum(model.lower, -np.pi))
    a = rng.normal(size=(n, harmonics)) / np.arange(1, harmonics + 1)
    phase = rng.uniform(0, 2 * np.pi, size=(n, harmonics))
    scale = amplitude * half / np.abs(a).sum(axis=1)
    arg = w[None, None, :] * t[:, None, None] + phase[None]
    q = mid + scale * (a * np.sin(arg)).sum(axis=-1)
    qd = scale * (a * w * np.cos(arg)).sum(axis=-1)
    qdd = -scale * (a * w ** 2 * np.sin(arg)).sum(axis=-1)
    return q, qd, qdd


def perturbed(model, factors, seed=0):
    """
    Return a perturbed copy of a robot: the real robot whose file is wrong.

    The same robot with each link's mass scaled by ``factors`` and its CoM moved by up to 2 cm:
    the 'real' robot whose file (``model``) is wrong.
    """
    rng = np.random.default_rng(seed)
    spec = model.to_dict()
    for joint, factor in zip(spec["joints"], factors):
        joint["link"]["mass"] *= factor
        moved = np.asarray(joint["link"]["com"]) + rng.uniform(-0.02, 0.02, 3)
        joint["link"]["com"] = moved.tolist()
        for key in ("ixx", "iyy", "izz"):
            joint["link"]["inertia"][key] *= factor
    return RobotModel.from_dict(spec, f"{model.name} (true)")


def torques(model, q, qd, qdd):
    return rnea(model, q, qd, qdd)
