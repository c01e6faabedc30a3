"""
Statics and stiffness (seed 003 ch. 4), redundancy (seed 003 Sect. 3.2), payload capacity.

Oracles: the seed notes' numeric examples (4-1, 4-2, the compliance of 4-26 and the
pseudo-inverse example of Sect. 3.2.3), the RNEA's tip-wrench term (an independent code path for
J^T F), virtual work, an independent KKT solve for the weighted minimum-norm solution, and
bisection on the joint torques of the model with the payload attached (RobotModel.with_payload).
"""
import numpy as np
import pytest
from random_robots import random_state
from robot_dynamics_ros.core import (gravity_torques, InfeasibleError, InputError, jacobian,
                                     JointTrajectory, rnea, RobotModel, SingularityError,
                                     tool_pose)
from robot_dynamics_ros.core.task_space import (end_point_compliance, joint_torques_for_wrench,
                                                joint_velocities, kinematic_null_space_projector,
                                                payload_capacity, trajectory_payload_capacity,
                                                transform_wrench, weighted_pseudo_inverse,
                                                wrench_transform)
from scipy.spatial.transform import Rotation


def planar(lengths, name="planar"):
    """Build a planar arm in the x-y plane with these link lengths (standard DH, alpha = 0)."""
    joints = [{"name": f"joint{i + 1}", "type": "revolute",
               "dh": {"a": a, "alpha": 0.0, "d": 0.0, "theta": 0.0},
               "limits": {"lower": -3.0, "upper": 3.0, "velocity": 2.0, "effort": 100.0},
               "link": {"mass": 1.0, "com": [-a / 2, 0.0, 0.0],
                        "inertia": {"ixx": 0.01, "iyy": 0.1, "izz": 0.1}}}
              for i, a in enumerate(lengths)]
    return RobotModel.from_dict({"name": name, "dh_convention": "standard",
                                 "gravity": [0.0, -9.81, 0.0], "joints": joints})


# ---------------------------------------------------------------------------------- statics
def test_equivalent_joint_torques_example_4_1():
    """Check Example 4-1 (notes): l = (1, 0.8), theta = (0.3, 0.6), F = (1, 2): tau = J^T F."""
    model = planar([1.0, 0.8])
    tau = joint_torques_for_wrench(model, [0.3, 0.6], [1.0, 2.0], task=(0, 1))
    np.testing.assert_allclose(tau, [1.9830671931, 0.3679144215], atol=1e-10)


@pytest.mark.parametrize("name", ["puma560", "panda", "stanford", "asada_5r1p"])
def test_wrench_torques_are_the_rnea_tip_wrench_term_and_do_virtual_work(name):
    model = RobotModel.named(name)
    rng = np.random.default_rng(1)
    q, _, _ = random_state(model, rng)
    F = rng.normal(size=6) * [10, 10, 10, 1, 1, 1]
    tau = joint_torques_for_wrench(model, q, F)
    zero = np.zeros(model.n)
    tip_term = rnea(model, q, zero, zero, f_ext=F) - gravity_torques(model, q)
    np.testing.assert_allclose(tau, tip_term, atol=1e-9)
    # virtual work (4-9, 4-10): tau^T dq = F^T dp for a small motion dq, dp from the poses
    dq = rng.normal(size=model.n) * 1e-6
    T0, T1 = tool_pose(model, q - dq / 2), tool_pose(model, q + dq / 2)
    dR = T1[:3, :3] @ T0[:3, :3].T
    dphi = 0.5 * np.array([dR[2, 1] - dR[1, 2], dR[0, 2] - dR[2, 0], dR[1, 0] - dR[0, 1]])
    dp = np.r_[T1[:3, 3] - T0[:3, 3], dphi]
    assert tau @ dq == pytest.approx(F @ dp, rel=1e-6, abs=1e-15)


def test_wrench_transform_example_4_2_and_power():
    """
    Check Example 4-2 (notes) and power invariance.

    r = (0.1, -0.2, 0.3), P = (1, 2, 3, 0.4, 0.5, 0.6) give Q = (1, 2, 3, -0.8, 0.5, 1.0) (4-17,
    parallel frames).
    """
    pose = np.eye(4)
    pose[:3, 3] = [0.1, -0.2, 0.3]
    np.testing.assert_allclose(transform_wrench([1, 2, 3, 0.4, 0.5, 0.6], pose),
                               [1, 2, 3, -0.8, 0.5, 1.0], atol=1e-15)
    # With a rotation: power is frame-independent.  A twist [v; w] of frame a, seen in frame b:
    # w_b = R^T w_a, v_b = R^T (v_a + w_a x r) (the velocity of b's origin).
    rng = np.random.default_rng(2)
    pose[:3, :3] = Rotation.random(random_state=rng).as_matrix()
    R, r = pose[:3, :3], pose[:3, 3]
    v, w, F_b = rng.normal(size=3), rng.normal(size=3), rng.normal(size=6)
    twist_b = np.r_[R.T @ (v + np.cross(w, r)), R.T @ w]
    assert transform_wrench(F_b, pose) @ np.r_[v, w] == pytest.approx(F_b @ twist_b, rel=1e-12)
    np.testing.assert_allclose(transform_wrench(np.array([F_b, F_b]), pose)[1],
                               wrench_transform(pose) @ F_b)
    with pytest.raises(InputError, match="not a proper rotation"):
        transform_wrench(F_b, np.diag([1.0, 1.0, -1.0, 1.0]))


def test_compliance_of_the_two_link_arm_and_its_principal_axes():
    """Check (4-24), (4-26) corrected, (4-32)-(4-34): l = (1, 0.8), k = (100, 50)."""
    model = planar([1.0, 0.8])
    c = end_point_compliance(model, [0.3, 0.6], [100.0, 50.0], task=(0, 1))
    np.testing.assert_allclose(c.matrix, [[0.0163582849, -0.0196284623],
                                          [-0.0196284623, 0.0260470849]], atol=1e-10)
    np.testing.assert_allclose(c.principal_compliances, [0.0414201216, 0.0009852483], atol=1e-10)
    np.testing.assert_allclose(c.stiffness, [[638.2665275732, 480.9824408041],
                                             [480.9824408041, 400.8489143211]], rtol=1e-9)
    np.testing.assert_allclose(np.abs(c.principal_axes), [[0.6165975403, 0.7872785234],
                                                          [0.7872785234, 0.6165975403]], atol=1e-9)
    E = c.principal_axes
    np.testing.assert_allclose(E.T @ c.matrix @ E, np.diag(c.principal_compliances), atol=1e-12)
    for k in range(2):      # a force along a principal axis deflects the end point along it
        np.testing.assert_allclose(c.matrix @ E[:, k], c.principal_compliances[k] * E[:, k],
                                   atol=1e-12)


def test_compliance_is_joint_deflection_under_the_balancing_torques():
    model = RobotModel.named("puma560")
    rng = np.random.default_rng(3)
    q, _, _ = random_state(model, rng)
    k = rng.uniform(100, 1000, model.n)
    F = rng.normal(size=6)
    c = end_point_compliance(model, q, k)
    dq = joint_torques_for_wrench(model, q, F) / k             # tau = J^T F, tau = K dq (4-18)
    np.testing.assert_allclose(c.matrix @ F, jacobian(model, q) @ dq, atol=1e-14)
    singular = end_point_compliance(model, [0.0, 0.5, 0.0, 0.0, 0.0, 0.0], k)   # wrist: q5 = 0
    assert singular.stiffness is None and np.isfinite(singular.matrix).all()
    with pytest.raises(InputError, match="joint_stiffness"):
        end_point_compliance(model, q, [1.0] * 5)


# ------------------------------------------------------------------------------- redundancy
def test_pseudo_inverse_and_weighted_solution_of_the_seed_example():
    """Check notes Sect. 3.2.3: L = (1, 0.8, 0.5), q = (0.2, 0.5, -0.4), pd = (0.3, -0.1)."""
    model = planar([1.0, 0.8, 0.5], "planar3")
    q, pd = [0.2, 0.5, -0.4], [0.3, -0.1]
    qd = joint_velocities(model, q, pd, task=(0, 1))
    np.testing.assert_allclose(qd, [0.4447334212, -1.1273209050, 0.4351123791], atol=1e-10)
    W = np.diag([1.0, 2.0, 4.0])
    qd_w = joint_velocities(model, q, pd, weights=[1.0, 2.0, 4.0], task=(0, 1))
    np.testing.assert_allclose(qd_w, [0.5318618597, -1.1865284395, 0.1926581879], atol=1e-10)
    assert qd_w @ W @ qd_w == pytest.approx(3.2470452228, rel=1e-9)
    # independent: the KKT system of min qd^T W qd subject to J qd = pd (3-44 - 3-46)
    J = jacobian(model, q)[:2]
    kkt = np.block([[2 * W, -J.T], [J, np.zeros((2, 2))]])
    np.testing.assert_allclose(np.linalg.solve(kkt, np.r_[np.zeros(3), pd])[:3], qd_w,
                               atol=1e-12)


def test_null_space_motion_keeps_the_task_velocity():
    model = RobotModel.named("panda")
    rng = np.random.default_rng(4)
    q, _, _ = random_state(model, rng)
    J = jacobian(model, q)
    pd, qd0 = rng.normal(size=6), rng.normal(size=7)
    for weights in (None, rng.uniform(0.5, 2.0, 7)):
        qd = joint_velocities(model, q, pd, weights=weights, null_velocity=qd0)
        np.testing.assert_allclose(J @ qd, pd, atol=1e-12)                          # (3-42)
        P = kinematic_null_space_projector(J, weights)
        np.testing.assert_allclose(J @ P, 0.0, atol=1e-12)
        np.testing.assert_allclose(P @ P, P, atol=1e-12)
    np.testing.assert_allclose(weighted_pseudo_inverse(J), np.linalg.pinv(J), atol=1e-12)


def test_redundancy_at_a_singularity():
    model = planar([1.0, 0.8, 0.5], "planar3")
    stretched = [0.3, 0.0, 0.0]
    with pytest.raises(SingularityError, match=r"planar3: J W\^-1 J\^T is singular"):
        joint_velocities(model, stretched, [0.1, 0.1], task=(0, 1))
    qd = joint_velocities(model, stretched, [0.1, 0.1], task=(0, 1), damping=0.05)
    assert np.isfinite(qd).all()
    with pytest.raises(InputError, match="positive definite"):
        joint_velocities(model, [0.2, 0.5, -0.4], [0.1, 0.1], weights=[1.0, -1.0, 1.0],
                         task=(0, 1))


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
