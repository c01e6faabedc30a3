"""
dynamics_service_node over DDS: every service called from this process, good and bad requests.

Oracles: B(q) column by column from RNEA (B e_j = RNEA(q, 0, e_j) - g(q)), which is a different
algorithm from the node's composite-rigid-body mass matrix; forward dynamics checked by feeding
its answer back through RNEA; gravity equal to inverse dynamics at rest.
"""
import numpy as np
import pytest

from ros_fixtures import *  # noqa: F401,F403
from ros_fixtures import service_case

from robot_dynamics_ros.core import RobotModel, gravity_torques, rnea

from robot_dynamics_interfaces.srv import (GetForwardDynamics, GetGravityTorques,  # noqa: E402
                                           GetInverseDynamics, GetMassMatrix)

pytestmark = pytest.mark.ros          # starts DDS (see test/conftest.py)

MODEL = RobotModel.named("puma560")
NAMES = list(MODEL.joint_names)
NODE = "dynamics_service"
RNG = np.random.default_rng(3)
SERVICES = {"get_mass_matrix": GetMassMatrix, "get_inverse_dynamics": GetInverseDynamics,
            "get_gravity_torques": GetGravityTorques, "get_forward_dynamics": GetForwardDynamics}

NS, svc, call = service_case("ds", SERVICES, {"robot_description": "puma560"})


def random_q():
    return RNG.uniform(MODEL.lower, MODEL.upper)


def mass_matrix_by_rnea(model, q):
    g = gravity_torques(model, q)
    return np.column_stack([rnea(model, q, np.zeros(model.n), e) - g for e in np.eye(model.n)])


def test_mass_matrix(svc):
    q = random_q()
    answer = call(svc, "get_mass_matrix", position=q.tolist())
    assert answer.success, answer.message
    assert answer.size == 6 and list(answer.joint_names) == NAMES
    B = np.array(answer.mass_matrix).reshape(6, 6)
    np.testing.assert_allclose(B, mass_matrix_by_rnea(MODEL, q), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(B, B.T, atol=1e-12)
    assert np.linalg.eigvalsh(B).min() > 0.0


def test_mass_matrix_in_the_request_order(svc):
    q = random_q()
    order = [4, 2, 0, 5, 1, 3]
    answer = call(svc, "get_mass_matrix", joint_names=[
                  NAMES[i] for i in order], position=q[order].tolist())
    assert answer.success, answer.message
    assert list(answer.joint_names) == [NAMES[i] for i in order]
    B = np.array(answer.mass_matrix).reshape(6, 6)
    np.testing.assert_allclose(B, mass_matrix_by_rnea(
        MODEL, q)[np.ix_(order, order)], rtol=1e-9, atol=1e-10)


def test_inverse_dynamics_and_gravity(svc):
    q, qd, qdd = random_q(), RNG.uniform(-1, 1, 6), RNG.uniform(-2, 2, 6)
    answer = call(svc, "get_inverse_dynamics", position=q.tolist(),
                  velocity=qd.tolist(), acceleration=qdd.tolist())
    assert answer.success, answer.message
    np.testing.assert_allclose(answer.effort, rnea(MODEL, q, qd, qdd), rtol=1e-12, atol=1e-12)
    at_rest = call(svc, "get_inverse_dynamics", position=q.tolist())          # empty = zeros
    gravity = call(svc, "get_gravity_torques", position=q.tolist())
    assert at_rest.success and gravity.success
    np.testing.assert_allclose(gravity.effort, at_rest.effort, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gravity.effort, gravity_torques(MODEL, q), rtol=1e-12, atol=1e-12)
    order = NAMES[::-1]
    reordered = call(svc, "get_gravity_torques", joint_names=order, position=q[::-1].tolist())
    assert reordered.success and list(reordered.joint_names) == order
    np.testing.assert_allclose(reordered.effort, gravity.effort[::-1], rtol=1e-12, atol=1e-12)


def test_forward_dynamics_inverts_inverse_dynamics(svc):
    q, qd, tau = random_q(), RNG.uniform(-1, 1, 6), RNG.uniform(-20, 20, 6)
    answer = call(svc, "get_forward_dynamics", position=q.tolist(),
                  velocity=qd.tolist(), effort=tau.tolist())
    assert answer.success, answer.message
    np.testing.assert_allclose(rnea(MODEL, q, qd, np.array(
        answer.acceleration)), tau, rtol=1e-8, atol=1e-8)
    free_fall = call(svc, "get_forward_dynamics", position=q.tolist())       # no torque, at rest
    assert free_fall.success
    np.testing.assert_allclose(rnea(MODEL, q, np.zeros(
        6), np.array(free_fall.acceleration)), 0.0, atol=1e-8)


NAN = float("nan")


@pytest.mark.parametrize("service, fields, reason", [
    ("get_mass_matrix", {"position": [0.0] * 5}, "position: expected 6 values"),
    ("get_mass_matrix", {"position": []}, "position: expected 6 values"),
    ("get_mass_matrix", {"position": [0.0, 0.0, NAN, 0.0, 0.0, 0.0]},
     "position of joint 'joint3' is nan"),
    ("get_mass_matrix", {"joint_names": NAMES[:5], "position": [
     0.0] * 5}, "missing joint(s) ['joint6']"),
    ("get_gravity_torques", {
     "joint_names": NAMES[:5] + ["elbow"], "position": [0.0] * 6}, "unknown joint(s) ['elbow']"),
    ("get_gravity_torques", {"joint_names": NAMES[:5] + ["joint1"], "position": [0.0] * 6},
     "joint 'joint1' appears twice"),
    ("get_inverse_dynamics", {"position": [0.0] * 6,
     "velocity": [1.0]}, "velocity: expected 6 values"),
    ("get_inverse_dynamics", {"position": [0.0] * 6,
     "acceleration": [float("inf")] * 6}, "acceleration of joint 'joint1' is inf"),
    ("get_forward_dynamics", {"position": [0.0] * 6,
     "effort": [0.0] * 7}, "effort: expected 6 values"),
    ("get_forward_dynamics", {"position": [
     0.0] * 6, "velocity": [NAN] * 6}, "velocity of joint 'joint1' is nan"),
    # the bound of every node's input (joint_states' too): refused before any computation
    ("get_inverse_dynamics", {"position": [0.0] * 6,
     "velocity": [1e200] * 6}, "velocity of joint 'joint1' is 1e+200, beyond 1e+06"),
    ("get_forward_dynamics", {"position": [
     0.0] * 6, "velocity": [1e200] * 6}, "velocity of joint 'joint1' is 1e+200, beyond 1e+06"),
    ("get_gravity_torques", {"position": [1e308] * 6},
     "position of joint 'joint1' is 1e+308, beyond 1e+06"),
    ("get_mass_matrix", {"position": [0.0] * 5 + [2e6]},
     "position of joint 'joint6' is 2e+06, beyond 1e+06"),
    ("get_forward_dynamics", {"position": [0.0] * 6, "effort": [0.0] * 5 + [-1e7]},
     "effort of joint 'joint6' is -1e+07, beyond 1e+06"),
])
def test_bad_requests_get_success_false_and_a_reason(svc, service, fields, reason):
    answer = call(svc, service, **fields)
    assert not answer.success
    assert reason in answer.message, answer.message
    good = call(svc, service, position=[0.0] * 6)                # and the node still answers
    assert good.success, good.message
    assert svc[0].alive()


def test_payload_parameter_changes_the_answers(svc):
    _, client, _ = svc
    q = random_q()
    results = client.set_parameters(
        f"{NS}/{NODE}", {"payload.mass": 3.0, "payload.com": [0.0, 0.05, 0.08]})
    assert all(r.successful for r in results), results
    try:
        heavy = MODEL.with_payload(3.0, [0.0, 0.05, 0.08])
        answer = call(svc, "get_mass_matrix", position=q.tolist())
        np.testing.assert_allclose(np.array(answer.mass_matrix).reshape(6, 6),
                                   mass_matrix_by_rnea(heavy, q), rtol=1e-9, atol=1e-10)
        gravity = call(svc, "get_gravity_torques", position=q.tolist())
        np.testing.assert_allclose(gravity.effort, gravity_torques(
            heavy, q), rtol=1e-12, atol=1e-12)
    finally:
        client.set_parameters(f"{NS}/{NODE}", {"payload.mass": 0.0})
