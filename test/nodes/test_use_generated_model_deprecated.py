"""
The deprecated parameter use_generated_model (issue 27): accepted, ignored, said once.

The generated model is an export (robot-dynamics codegen), no longer a route: a
dynamics_service_node process given use_generated_model: true warns once, computes on the core's
compiled kernels, answers like the core (also after a run-time payload change) and rejects what
the core rejects.
"""
import numpy as np
import pytest

from ros_fixtures import *  # noqa: F401,F403
from ros_fixtures import service_case

from robot_dynamics_ros.core import RobotModel, gravity_torques, mass_matrix, rnea

from robot_dynamics_interfaces.srv import (  # noqa: E402
    GetGravityTorques, GetInverseDynamics, GetMassMatrix)

pytestmark = pytest.mark.ros          # starts DDS (see test/conftest.py)

MODEL = RobotModel.named("puma560")
NODE = "dynamics_service"
SERVICES = {"get_mass_matrix": GetMassMatrix, "get_inverse_dynamics": GetInverseDynamics,
            "get_gravity_torques": GetGravityTorques}

NS, svc, call = service_case("gen", SERVICES, {"robot_description": "puma560",
                                               "use_generated_model": True})


def test_node_warns_once_and_computes_on_the_compiled_kernels(svc):
    log = svc[0].log_text()
    assert log.count("use_generated_model is deprecated and ignored") == 1
    assert "compiled dynamics" in log and "generated dynamics" not in log


def test_the_node_answers_like_the_core(svc):
    rng = np.random.default_rng(11)
    q, qd, qdd = rng.uniform(MODEL.lower, MODEL.upper), rng.uniform(-2,
                                                                    2, 6), rng.uniform(-5, 5, 6)
    answer = call(svc, "get_inverse_dynamics", position=q.tolist(),
                  velocity=qd.tolist(), acceleration=qdd.tolist())
    assert answer.success, answer.message
    np.testing.assert_allclose(answer.effort, rnea(MODEL, q, qd, qdd), rtol=1e-12, atol=1e-10)
    answer = call(svc, "get_mass_matrix", position=q.tolist())
    assert answer.success, answer.message
    np.testing.assert_allclose(np.reshape(answer.mass_matrix, (6, 6)),
                               mass_matrix(MODEL, q), rtol=1e-12, atol=1e-12)


def test_payload_change_changes_the_answers(svc):
    _, client, _ = svc
    q = np.array([0.3, -0.4, 0.5, 0.2, -0.6, 0.1])
    results = client.set_parameters(
        f"{NS}/{NODE}", {"payload.mass": 2.0, "payload.com": [0.0, 0.0, 0.1]})
    assert all(r.successful for r in results), results
    try:
        answer = call(svc, "get_gravity_torques", position=q.tolist())
        assert answer.success, answer.message
        expected = gravity_torques(MODEL.with_payload(2.0, [0.0, 0.0, 0.1]), q)
        np.testing.assert_allclose(answer.effort, expected, rtol=1e-12, atol=1e-10)
        assert not np.allclose(answer.effort, gravity_torques(MODEL, q))
    finally:
        client.set_parameters(f"{NS}/{NODE}", {"payload.mass": 0.0})


def test_bad_request_is_refused(svc):
    answer = call(svc, "get_gravity_torques", position=[0.0, float("nan"), 0.0, 0.0, 0.0, 0.0])
    assert not answer.success and "joint2" in answer.message
