"""Payload capacity: equal to bisection on the loaded model; batches, trajectories and errors."""

import numpy as np
import pytest

from random_robots import random_state
from robot_dynamics_ros.core import (InfeasibleError, InputError, JointTrajectory, RobotModel,
                                     gravity_torques, rnea)
from robot_dynamics_ros.core.task_space import payload_capacity, trajectory_payload_capacity


# --------------------------------------------------------------------------- payload capacity
def _bisect(fits, hi):
    lo = 0.0
    while fits(hi):
        lo, hi = hi, 2 * hi
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


@pytest.mark.parametrize("name", ["puma560", "panda", "stanford", "asada_5r1p", "planar2"])
def test_payload_capacity_matches_bisection_on_the_loaded_model(name):
    model = RobotModel.named(name)
    rng = np.random.default_rng(5)
    com = [0.02, -0.01, 0.05]
    q, qd, qdd = random_state(model, rng)
    q, qd, qdd = 0.5 * q, 0.3 * qd, 0.3 * qdd     # where the unloaded arm is within its limits
    for args, torques in (((q,), lambda m: gravity_torques(m, q)),
                          ((q, qd, qdd), lambda m: rnea(m, q, qd, qdd))):
        result = payload_capacity(model, *args, com=com)

        def fits(mass):
            return np.all(np.abs(torques(model.with_payload(mass, com))) <= model.effort_limit)

        assert result.mass == pytest.approx(_bisect(fits, 1.0), rel=1e-9)
        loaded = torques(model.with_payload(result.mass, com))
        np.testing.assert_allclose(result.torques, loaded, atol=1e-8)
        j = model.joint_names.index(result.binding_joint)
        assert abs(loaded[j]) == pytest.approx(model.effort_limit[j], rel=1e-9)


def test_payload_capacity_batch_and_trajectory():
    model = RobotModel.named("puma560")
    rng = np.random.default_rng(6)
    Q = rng.uniform(-1.0, 1.0, (5, 6))
    batch = payload_capacity(model, Q)
    for k in range(5):
        single = payload_capacity(model, Q[k])
        assert batch.mass[k] == pytest.approx(single.mass)
        assert batch.binding_joint[k] == single.binding_joint
    traj = JointTrajectory(model.joint_names, [0.0, 1.0, 2.0], Q[:3], np.zeros((3, 6)))
    along = trajectory_payload_capacity(model, traj, samples=200)
    # samples: 200 grid times, then the 3 waypoints as left limits, then as right limits
    side = "left" if 200 <= along.sample < 203 else "right"
    q, qd, qdd = traj.sample(np.array([along.time]), side=side)

    def fits(mass):
        return np.all(np.abs(rnea(model.with_payload(mass), q, qd, qdd)) <= model.effort_limit)

    assert along.mass <= min(batch.mass[:3]) + 1e-9
    assert along.mass == pytest.approx(_bisect(fits, 1.0), rel=1e-9)
    # the capacity holds along the whole trajectory, finely resampled
    Qs, QDs, QDDs = traj.sample(np.linspace(0, 2, 1001))
    tau = rnea(model.with_payload(along.mass), Qs, QDs, QDDs)
    assert np.all(np.abs(tau) <= model.effort_limit * (1 + 1e-3))


def test_payload_capacity_errors_and_unbounded_case():
    model = RobotModel.named("puma560")
    weak = model.to_dict()
    weak["joints"][1]["limits"]["effort"] = 1.0
    weak = RobotModel.from_dict(weak)
    with pytest.raises(InfeasibleError,
                       match="joint 'joint2' needs .* beyond its effort limit 1") as info:
        payload_capacity(weak, np.zeros(6))
    assert info.value.joint == "joint2"
    # gravity along the joint axes of a planar arm: the structure carries any payload
    flat = RobotModel.named("planar2").to_dict()
    flat["gravity"] = [0.0, 0.0, -9.81]
    result = payload_capacity(RobotModel.from_dict(flat), [0.3, 0.4])
    assert result.mass == np.inf and result.binding_joint is None
    with pytest.raises(InputError, match="com"):
        payload_capacity(model, np.zeros(6), com=[0.0, 0.0])
