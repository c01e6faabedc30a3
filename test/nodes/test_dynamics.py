"""The nodes' Dynamics facade: its list paths equal the core."""

import numpy as np
import pytest


def test_dynamics_list_paths_equal_the_core(rng, shipped_model):
    """The nodes' per-message calls (lists in, list out) against the core's rnea / g(q)."""
    pytest.importorskip("rclpy")
    from robot_dynamics_ros.core import gravity_torques, rnea
    from robot_dynamics_ros.core.trajectories.uniform import friction_torques
    from robot_dynamics_ros.nodes.dynamics import Payload, select_dynamics
    model = Payload(2.5, (0.01, -0.02, 0.08), (0.01, 0.02, 0.015, 0.0, 0.001, 0.0)).applied_to(
        shipped_model("puma560"))
    dynamics = select_dynamics(model)
    assert dynamics.implementation == "compiled" and dynamics.fallback_reason == ""
    for _ in range(20):
        q, qd, qdd = rng.uniform(-2, 2, (3, model.n))
        qd[rng.integers(model.n)] = 0.0                 # sgn(0) = 0 in the friction
        held = dynamics.holding_values(q.tolist())
        assert type(held) is list and all(type(x) is float for x in held)
        np.testing.assert_allclose(held, gravity_torques(model, q), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(dynamics.holding_values(q.tolist(), qd.tolist()),
                                   gravity_torques(model, q) + friction_torques(model, qd),
                                   rtol=1e-12, atol=1e-12)
        tau = dynamics.rnea_values(q.tolist(), qd.tolist(), qdd.tolist())
        assert type(tau) is list
        np.testing.assert_allclose(tau, rnea(model, q, qd, qdd), rtol=1e-12, atol=1e-12)


def test_coupled_drives_friction_on_the_list_path():
    """A coupled wrist's gravity compensation with friction: the drives' friction through K^T."""
    pytest.importorskip("rclpy")
    from coupled_wrist import hand_friction, wrist
    from robot_dynamics_ros.core import RobotModel, gravity_torques
    from robot_dynamics_ros.nodes.dynamics import select_dynamics
    model = RobotModel.from_dict(wrist())
    q, qd = [0.3, -1.2], [2.0, -0.5]            # v6 = 1.5 > 0 while qd6 < 0
    np.testing.assert_allclose(select_dynamics(model).holding_values(q, qd),
                               gravity_torques(model, np.array(q))
                               + hand_friction(np.array(qd)), rtol=0, atol=1e-12)
