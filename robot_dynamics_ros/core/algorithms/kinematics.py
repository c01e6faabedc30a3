"""Forward kinematics and the geometric Jacobian (seed 003 ch. 2-3; seed 002, 7.16-7.19).

All Cartesian results are in the world frame: the frame in which the file's gravity is given and
in which ``base`` places the robot (the robot's frame 0 when the file has no base transform).
"""
from __future__ import annotations

import numpy as np

from ..inputs import joint_arrays


def joint_transforms(model, q: np.ndarray) -> np.ndarray:
    """T_{i-1,i}(q) of the internal chain, shape q.shape + (4, 4), batched over leading dims."""
    ch = model.chain
    theta = ch.theta0 + np.where(ch.prismatic, 0.0, q)
    d = ch.d0 + np.where(ch.prismatic, q, 0.0)
    ct, st = np.cos(theta), np.sin(theta)
    ca, sa = np.cos(ch.alpha_prev), np.sin(ch.alpha_prev)
    T = np.zeros(q.shape + (4, 4))
    # Rx(alpha_{i-1}) Tx(a_{i-1}) Rz(theta_i) Tz(d_i)   (seed 004, T_{i-1,i})
    T[..., 0, 0], T[..., 0, 1], T[..., 0, 3] = ct, -st, ch.a_prev
    T[..., 1, 0], T[..., 1, 1], T[..., 1, 2], T[..., 1, 3] = ca * st, ca * ct, -sa, -sa * d
    T[..., 2, 0], T[..., 2, 1], T[..., 2, 2], T[..., 2, 3] = sa * st, sa * ct, ca, ca * d
    T[..., 3, 3] = 1.0
    return T


def internal_frames(model, q: np.ndarray) -> np.ndarray:
    """Poses of the internal (joint-axis) frames relative to the robot base, (..., n, 4, 4)."""
    A = joint_transforms(model, q)
    frames = np.empty_like(A)
    frames[..., 0, :, :] = A[..., 0, :, :]
    for i in range(1, model.n):
        frames[..., i, :, :] = frames[..., i - 1, :, :] @ A[..., i, :, :]
    return frames


def forward_kinematics(model, q) -> np.ndarray:
    """World poses of the robot base and every link frame of the file (its DH convention).

    Returns shape (n+1, 4, 4), or (N, n+1, 4, 4) for a batch: index 0 is the base (frame 0),
    index i the frame of link i.
    """
    (q,), _ = joint_arrays(model, q=q)
    frames = model.chain.base @ internal_frames(model, q) @ model.chain.link_offset
    base = np.broadcast_to(model.chain.base, q.shape[:-1] + (1, 4, 4))
    return np.concatenate([base, frames], axis=-3)


def tool_pose(model, q) -> np.ndarray:
    """World pose of the tool frame (the last link frame times the file's tool transform)."""
    (q,), _ = joint_arrays(model, q=q)
    return model.chain.base @ internal_frames(model, q)[..., -1, :, :] @ model.chain.flange


def joint_axes(model, q: np.ndarray):
    """World joint axes z_i, their origins p_i and the tool point, for Jacobian-type algorithms."""
    T = model.chain.base @ internal_frames(model, q)
    tool = T[..., -1, :, :] @ model.chain.flange
    return T[..., :3, 2], T[..., :3, 3], tool[..., :3, 3]


def jacobian(model, q) -> np.ndarray:
    """Geometric Jacobian at the tool point, world frame, rows [v; w]: shape (6, n) or (N, 6, n).

    Column i is [z_i x (p_tool - p_i); z_i] for a revolute joint and [z_i; 0] for a prismatic one
    (seed 002, 7.18-7.19; seed 003 ch. 3).
    """
    (q,), _ = joint_arrays(model, q=q)
    z, p, p_tool = joint_axes(model, q)
    revolute = ~model.chain.prismatic[:, None]
    linear = np.where(revolute, np.cross(z, p_tool[..., None, :] - p), z)
    angular = np.where(revolute, z, 0.0)
    return np.concatenate([np.swapaxes(linear, -1, -2), np.swapaxes(angular, -1, -2)], axis=-2)
