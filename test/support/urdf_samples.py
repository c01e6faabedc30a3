"""
Random URDF trees for the tests, and Pinocchio models of the same chains (the oracle).

``random_urdf(rng, ...)`` writes a URDF whose chain from ``base`` to ``tool`` has revolute,
continuous and prismatic joints with rotated origins (any rpy), odd axes (not normalised,
negative, not along a coordinate axis; also parallel and collinear neighbours), links with rotated
``<inertial>`` frames, massless links, fixed links in the chain and off it, and branches to lock:
a finger pair behind a revolute joint (the second one a ``<mimic>``), a prismatic branch with a
fixed child, and an arm hanging from the root (no effect).  ``PinocchioChain`` builds the same
chain in Pinocchio: the whole URDF (``buildModelFromXML``), then ``buildReducedModel`` with the
off-chain joints locked, and maps configurations, frames and gravity between the two.
"""

from __future__ import annotations
from typing import NamedTuple

import numpy as np
import pinocchio as pin

from random_robots import random_inertia

_ODD_AXES = ("0 0 1", "0 0 -1", "1 0 0", "0 -1 0", "0.3 -0.5 0.8", "-2 1 0.5", "0 0.6 0.8",
             "1 1 0")


def _vec(v) -> str:
    return " ".join(repr(float(x)) for x in v)


def _inertial(rng, mass_range=(0.2, 4.0)) -> str:
    mass = float(rng.uniform(*mass_range))
    tensor = random_inertia(rng, mass)
    entries = " ".join(f'{name}="{float(tensor[i, j])!r}"' for name, i, j in (
        ("ixx", 0, 0), ("ixy", 0, 1), ("ixz", 0, 2), ("iyy", 1, 1), ("iyz", 1, 2), ("izz", 2, 2)))
    return (f'<inertial><origin xyz="{_vec(rng.uniform(-0.2, 0.2, 3))}" '
            f'rpy="{_vec(rng.uniform(-np.pi, np.pi, 3))}"/><mass value="{mass!r}"/>'
            f"<inertia {entries}/></inertial>")


class RandomUrdf(NamedTuple):
    """A random URDF and what the tests need to know about it."""

    text: str
    chain: list[str]            # the chain's movable joints, root to tip
    types: list[str]
    tip: str                    # the tip link ("tool")
    lockable: dict[str, tuple[float, float]]   # off-chain joints below the root -> (lower, upper)
    mimic: dict[str, tuple[str, float, float]]  # mimic joint -> (joint, multiplier, offset)


def random_urdf(rng: np.random.Generator, n: int = 6,
                types=("revolute", "continuous", "prismatic"), branches: bool = True,
                special_axes: bool = True) -> RandomUrdf:
    """Return a random URDF tree (module docstring) whose chain has ``n`` movable joints."""
    links, joints, chain, chain_types, chain_axes, lockable, mimic = [], [], [], [], [], {}, {}

    def link(name, inertial=True):
        links.append(f'<link name="{name}">{_inertial(rng) if inertial else ""}</link>')

    def joint(name, jtype, parent, child, xyz, rpy, axis="0 0 1", limit=None, extra=""):
        limit_tag = ""
        if jtype in ("revolute", "prismatic"):
            lo, hi = limit or ((-0.5, 0.5) if jtype == "prismatic" else (-2.5, 2.5))
            limit_tag = f'<limit lower="{lo!r}" upper="{hi!r}" velocity="2.0" effort="300.0"/>'
        elif jtype == "continuous":
            limit_tag = '<limit velocity="3.0" effort="200.0"/>'
        joints.append(f'<joint name="{name}" type="{jtype}"><parent link="{parent}"/>'
                      f'<child link="{child}"/><origin xyz="{_vec(xyz)}" rpy="{_vec(rpy)}"/>'
                      f'<axis xyz="{axis}"/>{limit_tag}{extra}</joint>')

    link("base")
    parent = "base"
    for i in range(n):
        if rng.uniform() < 0.4:                   # a fixed link in the chain
            link(f"spacer{i}", inertial=rng.uniform() < 0.7)
            joint(f"fix{i}", "fixed", parent, f"spacer{i}", rng.uniform(-0.3, 0.3, 3),
                  rng.uniform(-np.pi, np.pi, 3))
            parent = f"spacer{i}"
        jtype = str(rng.choice(types))
        axis = str(rng.choice(_ODD_AXES))
        xyz, rpy = rng.uniform(-0.4, 0.4, 3), rng.uniform(-np.pi, np.pi, 3)
        if special_axes and i > 0 and rng.uniform() < 0.3:    # parallel or collinear with the last
            rpy = np.zeros(3)
            axis = chain_axes[-1]
            if rng.uniform() < 0.5:
                xyz = float(rng.uniform(0.1, 0.4)) * np.array([float(x) for x in axis.split()])
        extra = ""
        if rng.uniform() < 0.5:
            extra = f'<dynamics damping="{rng.uniform(0, 2)!r}" friction="{rng.uniform(0, 1)!r}"/>'
        link(f"link{i + 1}", inertial=rng.uniform() < 0.85)
        joint(f"joint{i + 1}", jtype, parent, f"link{i + 1}", xyz, rpy, axis, extra=extra)
        chain.append(f"joint{i + 1}")
        chain_types.append(jtype)
        chain_axes.append(axis)
        parent = f"link{i + 1}"
        if branches and i == n // 2:              # fingers on a middle link, one a mimic
            link("palm")
            joint("palm_joint", "revolute", parent, "palm", rng.uniform(-0.2, 0.2, 3),
                  rng.uniform(-np.pi, np.pi, 3), "0 1 0", (-1.0, 1.0))
            lockable["palm_joint"] = (-1.0, 1.0)
            for k, sign in ((1, 1.0), (2, -1.0)):
                link(f"finger{k}")
                follow = '<mimic joint="finger1_joint" multiplier="1.0" offset="0.0"/>'
                joint(f"finger{k}_joint", "prismatic", "palm", f"finger{k}",
                      [0.0, sign * 0.03, 0.05], [0.0, 0.0, 0.0], f"0 {sign!r} 0", (0.0, 0.04),
                      follow if k == 2 else "")
                lockable[f"finger{k}_joint"] = (0.0, 0.04)
            mimic["finger2_joint"] = ("finger1_joint", 1.0, 0.0)
            link("camera")
            joint("camera_joint", "fixed", "palm", "camera", rng.uniform(-0.1, 0.1, 3),
                  rng.uniform(-np.pi, np.pi, 3))
    link("flange", inertial=False)
    joint("flange_joint", "fixed", parent, "flange", rng.uniform(-0.1, 0.1, 3),
          rng.uniform(-3, 3, 3))
    link("tool")
    joint("tool_joint", "fixed", "flange", "tool", rng.uniform(-0.1, 0.1, 3),
          rng.uniform(-3, 3, 3))
    if branches:
        link("slider")
        joint("slider_joint", "prismatic", "tool", "slider", [0.05, 0, 0], [0, 0.3, 0], "1 0 0",
              (-0.1, 0.1))
        lockable["slider_joint"] = (-0.1, 0.1)
        link("slider_tip")
        joint("slider_tip_joint", "fixed", "slider", "slider_tip", [0.0, 0.02, 0.0], [0.1, 0, 0])
        link("other_arm")                          # hangs from the root: no effect on the chain
        joint("other_arm_joint", "revolute", "base", "other_arm", [0.0, 0.5, 0.2], [0, 0, 0],
              "0 0 1")
        lockable["other_arm_joint"] = (-2.5, 2.5)
    text = '<?xml version="1.0"?>\n<robot name="random">\n  ' + "\n  ".join(links + joints) + \
        "\n</robot>\n"
    return RandomUrdf(text, chain, chain_types, "tool", lockable, mimic)


class PinocchioChain:
    """Pinocchio's model of the chain from ``root`` to ``tip`` of a URDF (the test oracle)."""

    def __init__(self, urdf_text: str, chain: list[str], tip: str,
                 locked: dict[str, float] | None = None, root: str | None = None,
                 gravity=(0.0, 0.0, -9.81)):
        full = pin.buildModelFromXML(urdf_text)
        q_ref = pin.neutral(full)
        lock = []
        for jid in range(1, full.njoints):
            name = full.names[jid]
            if name in chain:
                continue
            lock.append(jid)
            self._set(full, q_ref, name, (locked or {}).get(name, 0.0))
        self.model = pin.buildReducedModel(full, lock, q_ref) if lock else full
        self.data = self.model.createData()
        self.chain = chain
        data = self.model.createData()
        pin.framesForwardKinematics(self.model, data, pin.neutral(self.model))
        self.root_pose = pin.SE3.Identity()
        if root is not None:
            self.root_pose = data.oMf[self.model.getFrameId(root)]
        R = self.root_pose.rotation
        self.model.gravity.linear = R @ np.asarray(gravity, dtype=float)
        self.tip_id = self.model.getFrameId(tip)
        self.v_index = [self.model.joints[self.model.getJointId(j)].idx_v for j in chain]

    @staticmethod
    def _set(model, q, name, value):
        joint = model.joints[model.getJointId(name)]
        if joint.nq == 2:                 # continuous: (cos, sin)
            q[joint.idx_q:joint.idx_q + 2] = np.cos(value), np.sin(value)
        else:
            q[joint.idx_q] = value

    def q(self, q_chain) -> np.ndarray:
        q = pin.neutral(self.model)
        for name, value in zip(self.chain, q_chain):
            self._set(self.model, q, name, value)
        return q

    def v(self, v_chain) -> np.ndarray:
        v = np.zeros(self.model.nv)
        v[self.v_index] = v_chain
        return v

    def back(self, v_pin) -> np.ndarray:
        """Return a joint-space vector (or the rows and columns of a matrix) in chain order."""
        v_pin = np.asarray(v_pin)
        if v_pin.ndim == 2:
            return v_pin[np.ix_(self.v_index, self.v_index)]
        return v_pin[self.v_index]

    def rnea(self, q, qd, qdd):
        return self.back(pin.rnea(self.model, self.data, self.q(q), self.v(qd), self.v(qdd)))

    def gravity(self, q):
        return self.back(pin.computeGeneralizedGravity(self.model, self.data, self.q(q)))

    def mass_matrix(self, q):
        M = np.reshape(pin.crba(self.model, self.data, self.q(q)), (self.model.nv,) * 2)
        return self.back(np.triu(M) + np.triu(M, 1).T)

    def coriolis(self, q, qd):
        C = pin.computeCoriolisMatrix(self.model, self.data, self.q(q), self.v(qd))
        return self.back(np.reshape(C, (self.model.nv,) * 2))

    def forward_dynamics(self, q, qd, tau):
        return self.back(pin.aba(self.model, self.data, self.q(q), self.v(qd), self.v(tau)))

    def tool_pose(self, q) -> np.ndarray:
        pin.framesForwardKinematics(self.model, self.data, self.q(q))
        return (self.root_pose.inverse() * self.data.oMf[self.tip_id]).homogeneous

    def jacobian(self, q) -> np.ndarray:
        J = pin.computeFrameJacobian(self.model, self.data, self.q(q), self.tip_id,
                                     pin.LOCAL_WORLD_ALIGNED)
        J = np.reshape(J, (6, self.model.nv))[:, self.v_index]     # (6, 1) comes back as (6,)
        R = self.root_pose.rotation.T
        return np.vstack([R @ J[:3], R @ J[3:]])


def relative_error(ours, reference) -> float:
    """Return max |ours - reference| / max(1, max |reference|)."""
    reference = np.asarray(reference, dtype=float)
    return float(np.abs(np.asarray(ours) - reference).max() / max(1.0, np.abs(reference).max()))
