"""
World-frame spatial quantities shared by the joint-space matrix algorithms.

Spatial motion vectors are (angular; linear) at the world origin, forces (moment; force) about it
(Featherstone's Plucker coordinates).  Everything is batched over leading dimensions.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .kinematics import internal_frames
from ..transforms import skew


@dataclass(frozen=True)
class ChainState:
    """Per-configuration world-frame data of a model (Pinocchio's 'Data' in spirit)."""

    axes: np.ndarray        # (..., n, 3) world joint axes z_i
    origins: np.ndarray     # (..., n, 3) world origins of the internal frames
    S: np.ndarray           # (..., n, 6) joint motion subspaces
    inertia: np.ndarray     # (..., n, 6, 6) spatial inertia of each link, at the world origin
    composite: np.ndarray   # (..., n, 6, 6) sum of the inertias of links i..n


def chain_state(model, q: np.ndarray) -> ChainState:
    ch = model.chain
    T = ch.base @ internal_frames(model, q)
    R, p = T[..., :3, :3], T[..., :3, 3]
    z = R[..., :, 2]
    revolute = ~ch.prismatic[:, None]
    S = np.concatenate([np.where(revolute, z, 0.0), np.where(revolute, np.cross(p, z), z)],
                       axis=-1)
    # Link inertia about the world origin: [[I_O, m [c]x], [m [c]x^T, m E]], c the world CoM.
    c = np.einsum("...ij,...j->...i", R, ch.com) + p
    m = ch.mass[:, None, None]
    cx = skew(c)
    I_O = R @ ch.inertia @ np.swapaxes(R, -1, -2) - m * (cx @ cx)
    M = np.zeros(q.shape + (6, 6))
    M[..., :3, :3] = I_O
    M[..., :3, 3:] = m * cx
    M[..., 3:, :3] = -m * cx
    M[..., 3:, 3:] = m * np.eye(3)
    composite = np.flip(np.cumsum(np.flip(M, axis=-3), axis=-3), axis=-3)
    return ChainState(axes=z, origins=p, S=S, inertia=M, composite=composite)


def link_velocities(state: ChainState, qd: np.ndarray) -> np.ndarray:
    """
    Return the links' spatial velocities (w; v at the world origin), (..., n, 6).

    This is ``spatial_inertia.joint_velocity``'s recursion v_i = X_i v_{i-1} + S_i qd_i
    (Featherstone 2008, Table 5.1), not another definition: in Plucker coordinates at the world
    origin, the one frame every link is expressed in here, X_i is the identity and the recursion
    is the running sum of S_j qd_j (``test_spatial.py`` checks it against the recursion).
    """
    return np.cumsum(state.S * qd[..., None], axis=-2)


def motion_cross(v: np.ndarray) -> np.ndarray:
    """(v x) for spatial motion vectors: [[w x, 0], [v x, w x]]."""
    X = np.zeros(v.shape[:-1] + (6, 6))
    wx, vx = skew(v[..., :3]), skew(v[..., 3:])
    X[..., :3, :3] = wx
    X[..., 3:, 3:] = wx
    X[..., 3:, :3] = vx
    return X


def force_cross_bar(f: np.ndarray) -> np.ndarray:
    """Return the matrix of u -> u x* f (linear in the motion u), for spatial forces f = (n; f)."""
    X = np.zeros(f.shape[:-1] + (6, 6))
    nx, fx = skew(f[..., :3]), skew(f[..., 3:])
    X[..., :3, :3] = -nx
    X[..., :3, 3:] = -fx
    X[..., 3:, :3] = -fx
    return X
