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


def real_robot(model, seed=5, payload=True):
    """
    Return the 'real' robot behind a robot file, with friction, torque offsets and a payload.

    Each link's mass and whole inertia tensor scaled by one factor in [0.8, 1.25] (so the tensor
    stays a real body's), its centre of mass moved by up to 2 cm; per joint viscous friction
    1 % and Coulomb friction 2 % of the effort limit (per rad/s and N m), a torque offset of
    +-1 % of it (alternating signs); a 1 kg payload 5 cm out along the tool z axis.
    """
    rng = np.random.default_rng(seed)
    spec = model.to_dict()
    effort = model.effort_limit
    for j, joint in enumerate(spec["joints"]):
        factor = rng.uniform(0.8, 1.25)
        link = joint["link"]
        link["mass"] *= factor
        link["com"] = (np.asarray(link["com"]) + rng.uniform(-0.02, 0.02, 3)).tolist()
        link["inertia"] = {k: v * factor for k, v in link["inertia"].items()}
        joint["friction"] = {"viscous": 0.01 * effort[j], "coulomb": 0.02 * effort[j],
                             "offset": 0.01 * effort[j] * (-1) ** j}
    if payload:
        spec["payload"] = {"mass": 1.0, "com": [0.0, 0.0, 0.05],
                           "inertia": {"ixx": 2e-3, "iyy": 2e-3, "izz": 1e-3}}
    return RobotModel.from_dict(spec, f"{model.name} (real)")


def tracked_run(model, real, duration, seed, dt=2e-3, period=15.0, gains=(900.0, 60.0)):
    """
    Return the simulator's run of ``real`` tracking a multi-sine under ``model``'s control.

    Computed-torque control with the file's model (``core.simulate``, RK4, Coulomb friction as
    stick-slip): what a recording of the real robot would hold, before sensor noise.
    """
    from robot_dynamics_ros.core import simulate
    t = np.arange(0.0, duration, dt)
    q, qd, qdd = multisine(model, t, np.random.default_rng(seed), period=period)
    kp, kd = gains

    def controller(time, position, velocity):
        k = min(int(round(time / dt)), t.size - 1)
        return rnea(model, position, velocity,
                    qdd[k] + kp * (q[k] - position) + kd * (qd[k] - velocity))

    return simulate(real, q[0], qd[0], duration, dt=dt, torque=controller)
