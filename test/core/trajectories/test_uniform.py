"""
Uniform dynamic scaling (Siciliano et al. 2009, Sect. 7.7, eqs. 7.117-7.126).

Oracles: the closed-form two-link model of Example 7.2 (B, C, g of eq. 7.82 written out), the c^2
law computed from it independently, inverse dynamics recomputed on the scaled trajectory, and the
binding joint touching its limit (c is the smallest admissible).
"""

import numpy as np
import pytest

from locations import EX72, PUMA_PATH
from robot_dynamics_ros.core import (InputError, JointTrajectory, Limits, RobotDescriptionError,
                                     RobotModel, ScalingError, rnea, uniform_scaling)


def ex72_closed_form(q, qd, qdd):
    """Return eq. 7.82's tau_s = B qdd + C qd and g (g = 9.81) for the Example 7.2 arm."""
    c1, c2, s2 = np.cos(q[:, 0]), np.cos(q[:, 1]), np.sin(q[:, 1])
    c12 = np.cos(q[:, 0] + q[:, 1])
    b11, b12, b22 = 200.01 + 50 * c2, 23.5 + 25 * c2, 122.5
    h = -25 * s2
    tau_s = np.stack([b11 *
                      qdd[:, 0] +
                      b12 *
                      qdd[:, 1] +
                      h *
                      (2 *
                       qd[:, 0] *
                       qd[:, 1] +
                       qd[:, 1] ** 2), b12 *
                      qdd[:, 0] +
                      b22 *
                      qdd[:, 1] -
                      h *
                      qd[:, 0] ** 2], axis=1)
    g = np.stack([784.8 * c1 + 245.25 * c12, 245.25 * c12], axis=1)
    return tau_s, g


def dense_check(model, result, density=10):
    """Max |torque| / limit of the scaled trajectory, by recomputed inverse dynamics."""
    traj = result.trajectory
    t = np.linspace(traj.times[0], traj.times[-1], density * 1000)
    tau = rnea(model, *traj.sample(t))
    lim = result.limits
    return np.maximum((tau - lim.effort_upper) / np.abs(lim.effort_upper),
                      (lim.effort_lower - tau) / np.abs(lim.effort_lower)).max(axis=0)


def test_example72_peaks_match_the_closed_form():
    model, traj = RobotModel.named("planar2"), JointTrajectory.from_yaml(EX72)
    t = np.linspace(0.0, 0.5, 2001)
    tau = rnea(model, *traj.sample(t))
    left = rnea(model, *traj.sample(0.25, side="left"))
    # from eq. 7.82 evaluated independently (the book prints no numbers): tau1 in [-4486.0, 6044.8]
    # (peak at the switch, 0.25 s), tau2 in [-3980.1, 3078.2]
    assert left[0] == pytest.approx(6044.8, abs=0.1)
    assert tau[:, 0].min() == pytest.approx(-4486.0, abs=0.1)
    assert tau[:, 1].min() == pytest.approx(-3980.1, abs=0.1)
    assert tau[:, 1].max() == pytest.approx(3078.2, abs=0.1)


def test_c_squared_law_on_example72():
    model, traj = RobotModel.named("planar2"), JointTrajectory.from_yaml(EX72)
    result = uniform_scaling(model, traj)
    # independent: c^2 = max over samples (incl. the switch's left limit) of tau_s / (limit - g)
    t = np.linspace(0.0, 0.5, 20001)
    q, qd, qdd = (np.concatenate([a, b[None]])
                  for a, b in zip(traj.sample(t), traj.sample(0.25, side="left")))
    tau_s, g = ex72_closed_form(q, qd, qdd)
    lim = model.effort_limit
    ratio = np.where(tau_s > 0, tau_s / (lim - g), tau_s / (-lim - g))
    c_expected = np.sqrt(ratio.max())
    assert c_expected > 1.05     # the example does need scaling with 5000 N m limits
    assert result.scale_factor == pytest.approx(c_expected, rel=1e-6)
    assert result.duration == pytest.approx(0.5 * c_expected, rel=1e-6)
    # the scaled torques: tau_s(t/c)/c^2 + g, from the formula, equal recomputed inverse dynamics
    c = result.scale_factor
    recomputed = rnea(model, *result.trajectory.sample(result.sample_times))
    left = np.append(np.diff(result.sample_times) == 0, False)    # left limits at the waypoint
    np.testing.assert_allclose(result.torques[~left], recomputed[~left], atol=1e-6 * 5000)
    recomputed_left = rnea(model, * result.trajectory.sample(result.sample_times[left],
                                                             side="left"))
    np.testing.assert_allclose(result.torques[left], recomputed_left, atol=1e-6 * 5000)
    tau_s_s, g_s = ex72_closed_form(*traj.sample(result.original_times[~left]))
    np.testing.assert_allclose(result.torques[~left], tau_s_s / c**2 + g_s, atol=0.05)


def test_scaled_trajectory_is_the_same_path_slower():
    model, traj = RobotModel.named("planar2"), JointTrajectory.from_yaml(EX72)
    result = uniform_scaling(model, traj)
    c = result.scale_factor
    t = np.linspace(0.0, 0.5, 101)
    q, qd, qdd = traj.sample(t)
    qn, qdn, qddn = result.trajectory.sample(c * t)
    np.testing.assert_allclose(qn, q, atol=1e-12)
    np.testing.assert_allclose(qdn, qd / c, atol=1e-9)
    np.testing.assert_allclose(qddn, qdd / c**2, atol=1e-7)


@pytest.mark.parametrize("robot, path", [("planar2", EX72), ("puma560", PUMA_PATH)])
def test_limits_hold_after_scaling_and_bind(robot, path):
    model, traj = RobotModel.named(robot), JointTrajectory.from_yaml(path)
    result = uniform_scaling(model, traj)
    excess = dense_check(model, result)
    assert excess.max() <= 1e-3                   # within limits between samples too
    assert excess.max() >= -1e-3  # ... and some joint touches its limit: c is minimal
    velocity = np.abs(result.trajectory.sample(np.linspace(0, result.duration, 5000))[1])
    assert (velocity <= model.velocity_limit * (1 + 1e-9)).all()


def test_friction_handled_exactly():
    """
    Friction is kept exactly by uniform scaling (Puma: viscous + Coulomb).

    Puma (viscous + Coulomb): the scaled torque formula tau_s/c^2 + F_v qd/c + F_s sgn + g equals
    inverse dynamics of the scaled trajectory.
    """
    model, traj = RobotModel.named("puma560"), JointTrajectory.from_yaml(PUMA_PATH)
    assert model.has_friction
    result = uniform_scaling(model, traj)
    left = np.append(np.diff(result.sample_times) == 0, False)
    recomputed = rnea(model, *result.trajectory.sample(result.sample_times))
    moving = ~left & (np.abs(result.trajectory.sample(result.sample_times)[1]).min(axis=1) > 1e-9)
    np.testing.assert_allclose(result.torques[moving], recomputed[moving], atol=1e-6)


def test_feasible_trajectory_is_not_slowed():
    model, traj = RobotModel.named("planar2"), JointTrajectory.from_yaml(EX72)
    slow = JointTrajectory(traj.joint_names, traj.times * 3, traj.positions, traj.velocities / 3)
    result = uniform_scaling(model, slow)
    assert result.scale_factor == 1.0
    assert result.trajectory.effort.shape == (3, 2)


def test_margins_and_velocity_limit():
    model, traj = RobotModel.named("planar2"), JointTrajectory.from_yaml(EX72)
    full = uniform_scaling(model, traj).scale_factor
    tight = uniform_scaling(model, traj, Limits.from_model(model, effort_margin=0.8)).scale_factor
    assert tight > full
    vel = uniform_scaling(model, traj, Limits.from_model(model, velocity_margin=0.3))
    peak = np.abs(traj.velocities).max()
    assert vel.scale_factor >= peak / (0.3 * 10.0) - 1e-9


def test_gravity_infeasible_names_joint_and_time():
    model, traj = RobotModel.named("planar2"), JointTrajectory.from_yaml(EX72)
    # 500 N m: joint 1 cannot hold the arm out
    weak = Limits.from_model(model, effort_margin=0.1)
    stretched = JointTrajectory(traj.joint_names, [0.0, 1.0], [
                                [0.0, 0.0], [0.3, 0.0]], np.zeros((2, 2)))
    with pytest.raises(ScalingError) as info:
        uniform_scaling(model, stretched, weak)
    assert "joint 'joint1'" in str(info.value) and "t = 0 s" in str(info.value)
    assert "gravity alone" in str(info.value)
    assert info.value.joint == "joint1" and info.value.time == 0.0


def test_malformed_inputs():
    model = RobotModel.named("planar2")
    with pytest.raises(ValueError, match="unknown joint"):
        uniform_scaling(model, JointTrajectory(("joint1", "elbow"), [0, 1], np.zeros((2, 2))))
    with pytest.raises(ScalingError,
                       match="joint 'joint2' at t = 0.89[0-9]* s: position 6.28[0-9]* is above "
                             "its upper limit"):
        uniform_scaling(model, JointTrajectory(("joint1", "joint2"), [0, 1], [[0, 0], [0, 7.0]]))
    # too short: an input error (the request is malformed), not "infeasible"
    with pytest.raises(InputError, match="at least 2 points"):
        uniform_scaling(model, JointTrajectory(("joint1", "joint2"), [0], [[0, 0]]))
    with pytest.raises(InputError, match="effort_margin"):
        Limits.from_model(model, effort_margin=1.5)
    for kwargs, message in ((dict(acceleration_margin=0.0), "acceleration_margin"),
                            (dict(acceleration=[1.0, -2.0]), "joint 'joint2' has limit -2.0"),
                            (dict(acceleration=[1.0, 2.0, 3.0]), "one per joint")):
        with pytest.raises(InputError, match=message):
            Limits.from_model(model, **kwargs)
    ok = Limits.from_model(model)
    for field, value, message in (("velocity", [1.0, 0.0], "limits.velocity: joint 1 is 0.0"),
                                  ("effort_upper", [1.0, np.nan], "limits.effort_upper: joint 1"),
                                  ("velocity", [1.0], "limits.velocity: expected 2 values"),
                                  ("acceleration", [1.0, -1.0], "limits.acceleration: joint 1")):
        arrays = dict(effort_lower=ok.effort_lower, effort_upper=ok.effort_upper,
                      velocity=ok.velocity, acceleration=ok.acceleration)
        arrays[field] = value
        with pytest.raises(InputError, match=message):
            Limits(**arrays)


def test_acceleration_limits_from_robot_file_and_margins():
    """
    Acceleration limits come from the robot file; margins scale every limit kind.

    limits.acceleration in the robot file (optional, > 0, bounded) is the model's
    acceleration_limit (inf where absent); the margins scale every kind of limit, and uniform
    scaling keeps |qdd| within the acceleration limit (c^2 >= |qdd| / A).
    """
    spec = RobotModel.named("planar2").to_dict()
    spec["joints"][0]["limits"]["acceleration"] = 2.0
    model = RobotModel.from_dict(spec)
    np.testing.assert_array_equal(model.acceleration_limit, [2.0, np.inf])
    limits = Limits.from_model(model, 0.5, 0.25, 0.8)
    np.testing.assert_allclose(limits.effort_upper, 0.5 * model.effort_limit)
    np.testing.assert_allclose(limits.velocity, 0.25 * model.velocity_limit)
    np.testing.assert_allclose(limits.acceleration, [1.6, np.inf])
    assert Limits.from_model(model, acceleration=3.0).acceleration.tolist() == [3.0, 3.0]
    traj = JointTrajectory.from_yaml(EX72)
    result = uniform_scaling(model, traj, Limits.from_model(model, acceleration_margin=0.8))
    t = np.linspace(0, result.duration, 4001)
    assert np.abs(result.trajectory.sample(t)[2][:, 0]).max() <= 1.6 * (1 + 1e-6)
    for bad, message in ((0.0, "must be > 0"), (-1.0, "must be > 0"), (1e9, "out of range")):
        spec["joints"][0]["limits"]["acceleration"] = bad
        with pytest.raises(RobotDescriptionError, match=f"limits.acceleration.*{message}"):
            RobotModel.from_dict(spec)
    traj = JointTrajectory(("joint1", "joint2"), [0, 1], [[0, 0], [0.1, 0.1]])
    for samples in (1, 2e9, 2.5, True):     # bounded work per request: 2e9 samples never allocated
        with pytest.raises(InputError, match="samples"):
            uniform_scaling(model, traj, samples=samples)


def test_further_friction_terms_scale_as_the_inverse_dynamics_says():
    """
    F_v2 qd|qd| scales by 1/c^2, F_l |g(q)| sgn(qd) not at all: the formula's torques are rnea's.

    The Puma path with strong further friction: the original and the scaled torques the
    scaling reports at its samples equal rnea of the model (the law applied by the core) at the
    sampled states of the original and the scaled trajectory.
    """
    from further_friction import with_further_friction
    model = with_further_friction(RobotModel.named("puma560"), 3.0, 0.3)
    traj = JointTrajectory.from_yaml(PUMA_PATH)
    result = uniform_scaling(model, traj)
    assert result.scale_factor > 1.0
    q, qd, qdd = traj.sample(result.original_times)
    reference = rnea(model, q, qd, qdd)
    tolerance = 1e-9 * np.abs(reference).max()
    np.testing.assert_allclose(result.original_torques, reference, rtol=0, atol=tolerance)
    q, qd, qdd = result.trajectory.sample(result.sample_times)
    np.testing.assert_allclose(result.torques, rnea(model, q, qd, qdd), rtol=0,
                               atol=1e-6 * np.abs(reference).max())
    plain = uniform_scaling(with_further_friction(RobotModel.named("puma560"), 0.0, 0.0), traj)
    assert result.scale_factor != plain.scale_factor


def test_torque_parts_from_a_compiled_route_match_the_core_rnea():
    """
    torque_parts with the caller's Torques (one rnea and the generated gravity) = the core's two.

    On a Puma with every friction term (quadratic viscous, load-dependent Coulomb), whose
    parts the route must split alike: the parts' sum is the full inverse dynamics either way.
    """
    from further_friction import with_further_friction
    from robot_dynamics_ros.core.algorithms.route import select
    from robot_dynamics_ros.core.trajectories.topp.torques import torque_functions
    from robot_dynamics_ros.core.trajectories.uniform import torque_parts
    model = with_further_friction(RobotModel.named("puma560"), 3.0, 0.3)
    rng = np.random.default_rng(7)
    q, qd, qdd = (rng.uniform(-1.5, 1.5, (50, model.n)) for _ in range(3))
    core = torque_parts(model, q, qd, qdd)
    routed = torque_parts(model, q, qd, qdd, torque_functions(model, select(model)))
    scale = np.abs(rnea(model, q, qd, qdd)).max()
    for a, b in zip(core, routed):
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(sum(routed[:3]), rnea(model, q, qd, qdd), rtol=0,
                               atol=1e-12 * scale)
