"""The world-frame velocity sums are the one velocity recursion of ``spatial_inertia``."""

import math

import numpy as np
import pytest

from dynamics_cases import CASES, make
from random_robots import random_state
from robot_dynamics_ros.core.algorithms.frames import acceleration_bias, internal_frames
from robot_dynamics_ros.core.algorithms.momentum import _forward, FIELDS
from robot_dynamics_ros.core.algorithms.spatial import chain_state, link_velocities
from robot_dynamics_ros.core.model.joint_constants import joint_fields


def _recursion_in_world(model, q, qd):
    """Return world (w, v of O_i) of each link from ``joint_velocity`` (frame-i (w; v) turned)."""
    joints = joint_fields(model, FIELDS)
    local = np.array([k[:6] for k in _forward(joints, q, qd, math.cos, math.sin)])
    T = model.chain.base @ internal_frames(model, q)
    R, p = T[:, :3, :3], T[:, :3, 3]
    return np.einsum("nij,nj->ni", R, local[:, :3]), np.einsum("nij,nj->ni", R, local[:, 3:]), p


@pytest.mark.parametrize("n, convention, seed", CASES)
def test_link_velocities_are_the_joint_velocity_recursion(n, convention, seed):
    """Plucker at the world origin: (w; v_O) with v_O = v(O_i) + p_i x w (Featherstone 2.2)."""
    model, rng = make(n, convention, seed)
    q, qd, _ = random_state(model, rng)
    w, v, p = _recursion_in_world(model, q, qd)
    V = link_velocities(chain_state(model, q), qd)
    scale = max(1.0, np.abs(V).max())
    np.testing.assert_allclose(V[:, :3], w, atol=1e-12 * scale)
    np.testing.assert_allclose(V[:, 3:], v + np.cross(p, w), atol=1e-12 * scale)


@pytest.mark.parametrize("n, convention, seed", CASES)
def test_acceleration_bias_velocities_are_the_joint_velocity_recursion(n, convention, seed):
    """The (v, w) ``acceleration_bias`` carries: v of a point on the last link = v(O_n) + w x r."""
    model, rng = make(n, convention, seed)
    q, qd, _ = random_state(model, rng)
    w, v, p = _recursion_in_world(model, q, qd)
    st = chain_state(model, q)
    target = p[-1] + rng.normal(size=3)
    axes = [(model.chain.prismatic[i], *st.axes[i], *st.origins[i]) for i in range(n)]
    _, _, v_bias, w_bias = acceleration_bias(axes, list(qd), *target)
    scale = max(1.0, np.abs(v).max(), np.abs(w).max())
    np.testing.assert_allclose(w_bias, w[-1], atol=1e-12 * scale)
    np.testing.assert_allclose(v_bias, v[-1] + np.cross(w[-1], target - p[-1]), atol=1e-12 * scale)
