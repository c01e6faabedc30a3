"""
The package's robots built in the reference libraries (optional `bench` extra).

For timing and agreement checks in the same run.  Each builder returns None when its library is
not installed.
"""
from __future__ import annotations

import numpy as np


def pinocchio_model(model):
    """
    Return a pinocchio.Model of the rigid-body part of ``model``.

    It has the same internal modified-DH frames.
    """
    try:
        import pinocchio as pin
    except ImportError:
        return None
    ch = model.chain
    pm = pin.Model()
    parent = 0
    base = pin.SE3(ch.base[:3, :3], ch.base[:3, 3])
    for i in range(model.n):
        ca, sa = np.cos(ch.alpha_prev[i]), np.sin(ch.alpha_prev[i])
        ct, st = np.cos(ch.theta0[i]), np.sin(ch.theta0[i])
        # Rx(alpha) Tx(a) Rz(theta0) Tz(d0), then the joint's own motion about/along z.
        Rx = np.array([[1, 0, 0], [0, ca, -sa], [0, sa, ca]])
        Rz = np.array([[ct, -st, 0], [st, ct, 0], [0, 0, 1]])
        R = Rx @ Rz
        p = Rx @ np.array([ch.a_prev[i], 0.0, 0.0]) + R @ np.array([0.0, 0.0, ch.d0[i]])
        placement = pin.SE3(R, p)
        if i == 0:
            placement = base * placement
        joint = pin.JointModelPZ() if ch.prismatic[i] else pin.JointModelRZ()
        parent = pm.addJoint(parent, joint, placement, model.joint_names[i])
        pm.appendBodyToJoint(parent, pin.Inertia(float(ch.mass[i]), ch.com[i].copy(),
                                                 ch.inertia[i].copy()),
                             pin.SE3.Identity())
    pm.gravity = pin.Motion(np.asarray(model.gravity, dtype=float), np.zeros(3))
    return pm


def roboticstoolbox_robot(model):
    """Return a roboticstoolbox DHRobot with the file's DH table and rigid-body inertial data."""
    try:
        import roboticstoolbox as rtb
    except ImportError:
        return None
    links = []
    modified = model.convention == "modified"
    for i in range(model.n):
        inertia = model.inertia[i]
        kwargs = dict(a=float(model.dh_a[i]), alpha=float(model.dh_alpha[i]),
                      m=float(model.mass[i]), r=model.com[i].tolist(), I=inertia.tolist(),
                      Jm=0.0, G=1.0, B=0.0, Tc=[0.0, 0.0])
        if model.joint_types[i] == "prismatic":
            kwargs.update(theta=float(model.dh_theta[i]), offset=float(model.dh_d[i]))
            cls = rtb.PrismaticMDH if modified else rtb.PrismaticDH
        else:
            kwargs.update(d=float(model.dh_d[i]), offset=float(model.dh_theta[i]))
            cls = rtb.RevoluteMDH if modified else rtb.RevoluteDH
        links.append(cls(**kwargs))
    robot = rtb.DHRobot(links, name=model.name, gravity=(-np.asarray(model.gravity)).tolist())
    robot.gravity = np.asarray(model.gravity, dtype=float)
    return robot
