"""
The task-space services of dynamics_service_node over DDS, good and bad requests.

The node is thin (messages -> core.task_space -> messages), so the answers are checked against the
core's functions on the same model (tested on their own oracles in test_operational_space.py and
test_inverse_kinematics.py) and against physics where a request allows it: the inverse
kinematics answer through the forward kinematics, the payload capacity through the gravity
torques of the loaded model, answers in a permuted joint order against the model order.
"""
import numpy as np
import pytest
from geometry_msgs.msg import Point, Pose, Quaternion
from robot_dynamics_interfaces.srv import (GetManipulability, GetOperationalSpaceModel,
                                           GetPayloadCapacity, SolveInverseKinematics)
from robot_dynamics_ros.core import gravity_torques, RobotModel, tool_pose
from robot_dynamics_ros.core.task_space import dynamic_manipulability, operational_space_model
from ros_fixtures import *  # noqa: F401,F403
from ros_fixtures import service_case
from scipy.spatial.transform import Rotation

pytestmark = pytest.mark.ros          # starts DDS (see test/conftest.py)

MODEL = RobotModel.named("panda")
NAMES = list(MODEL.joint_names)
SERVICES = {"get_operational_space_model": GetOperationalSpaceModel,
            "get_manipulability": GetManipulability,
            "solve_inverse_kinematics": SolveInverseKinematics,
            "get_payload_capacity": GetPayloadCapacity}
RNG = np.random.default_rng(13)
ORDER = [3, 0, 6, 1, 5, 2, 4]            # a permuted request order

NS, svc, call = service_case("ts", SERVICES, {"robot_description": "panda"})


def random_q():
    return RNG.uniform(MODEL.lower, MODEL.upper)


def pose_msg(T):
    x, y, z, w = Rotation.from_matrix(T[:3, :3]).as_quat()
    return Pose(position=Point(x=T[0, 3], y=T[1, 3], z=T[2, 3]),
                orientation=Quaternion(x=x, y=y, z=z, w=w))


def test_operational_space_model_in_model_and_permuted_order(svc):
    q, qd = random_q(), RNG.uniform(-1, 1, 7)
    answer = call(svc, "get_operational_space_model", position=q.tolist(), velocity=qd.tolist())
    assert answer.success, answer.message
    osm = operational_space_model(MODEL, q, qd)
    assert answer.frame == "tool"
    assert list(answer.task_rows) == ["vx", "vy", "vz", "wx", "wy", "wz"]
    assert answer.task_size == 6 and list(answer.joint_names) == NAMES
    # the same computation in another process: equal to rounding
    np.testing.assert_allclose(np.reshape(answer.inertia, (6, 6)), osm.Lambda, atol=1e-11)
    np.testing.assert_allclose(answer.coriolis, osm.mu, atol=1e-11)
    np.testing.assert_allclose(answer.gravity, osm.p, atol=1e-11)
    J = np.reshape(answer.jacobian, (6, 7))
    J_bar = np.reshape(answer.jacobian_inverse, (7, 6))
    np.testing.assert_allclose(J @ J_bar, np.eye(6), atol=1e-9)
    names = [NAMES[i] for i in ORDER]
    permuted = call(svc, "get_operational_space_model", joint_names=names,
                    position=q[ORDER].tolist(), velocity=qd[ORDER].tolist(), task="position",
                    frame="panda_joint6")
    assert permuted.success, permuted.message
    assert list(permuted.joint_names) == names and list(permuted.task_rows) == ["vx", "vy", "vz"]
    reference = operational_space_model(MODEL, q, qd, task="position", frame="panda_joint6")
    np.testing.assert_allclose(np.reshape(permuted.jacobian, (3, 7)), reference.J[:, ORDER],
                               atol=1e-14)
    np.testing.assert_allclose(np.reshape(permuted.jacobian_inverse, (7, 3)),
                               reference.J_bar[ORDER, :], atol=1e-11)


def test_manipulability_default_is_the_position(svc):
    q = random_q()
    answer = call(svc, "get_manipulability", position=q.tolist(), torque_limited=True)
    assert answer.success, answer.message
    assert list(answer.task_rows) == ["vx", "vy", "vz"] and answer.task_size == 3
    e = dynamic_manipulability(MODEL, q, task="position", torque_limited=True)
    np.testing.assert_allclose(answer.semi_axes, e.semi_axes, rtol=1e-10)
    np.testing.assert_allclose(np.abs(np.reshape(answer.directions, (3, 3))), np.abs(e.directions),
                               atol=1e-10)
    np.testing.assert_allclose(answer.centre, e.centre, rtol=1e-10, atol=1e-11)
    np.testing.assert_allclose(np.reshape(answer.matrix, (3, 3)), e.matrix, rtol=1e-10)


def test_inverse_kinematics_reaches_the_target_from_a_seed(svc):
    q = random_q()
    T = tool_pose(MODEL, q)
    names = [NAMES[i] for i in ORDER]
    seed = np.clip(q + 0.05, MODEL.lower, MODEL.upper)
    answer = call(svc, "solve_inverse_kinematics", target=pose_msg(T), joint_names=names,
                  seed=seed[ORDER].tolist())
    assert answer.success, answer.message
    assert list(answer.joint_names) == names
    solution = np.empty(7)
    solution[ORDER] = answer.position
    reached = tool_pose(MODEL, solution)
    assert np.linalg.norm(reached[:3, 3] - T[:3, 3]) <= 1e-6
    assert answer.position_error <= 1e-6 and answer.orientation_error <= 1e-6
    # position only, another frame, default seed
    target = Pose(position=Point(x=0.3, y=0.2, z=0.4))
    answer = call(svc, "solve_inverse_kinematics", target=target, position_only=True,
                  frame="panda_joint6")
    assert answer.success, answer.message


def test_unreachable_target_answers_the_closest_configuration(svc):
    target = Pose(position=Point(x=3.0, y=0.0, z=0.5))
    answer = call(svc, "solve_inverse_kinematics", target=target)
    assert not answer.success and "target not reached" in answer.message
    assert len(answer.position) == 7 and np.isfinite(answer.position).all()
    assert list(answer.joint_names) == NAMES and answer.position_error > 1.0


def test_payload_capacity_holds_the_limits(svc):
    q = 0.5 * random_q()
    com = [0.0, 0.02, 0.05]
    answer = call(svc, "get_payload_capacity", position=q.tolist(), com=com)
    assert answer.success, answer.message
    loaded = gravity_torques(MODEL.with_payload(answer.mass, com), q)
    np.testing.assert_allclose(answer.effort, loaded, rtol=1e-9, atol=1e-9)
    j = NAMES.index(answer.binding_joint)
    assert abs(loaded[j]) == pytest.approx(MODEL.effort_limit[j], rel=1e-9)
    assert np.all(np.abs(loaded) <= MODEL.effort_limit * (1 + 1e-9))


@pytest.mark.parametrize("service, fields, reason", [
    ("get_operational_space_model", {"position": [0.0] * 6}, "position: expected 7 values"),
    ("get_operational_space_model", {"position": [0.0] * 7, "frame": "wrist"},
     "unknown frame 'wrist'"),
    ("get_operational_space_model", {"position": [0.0] * 7, "task": "0,9"}, "task:"),
    ("get_manipulability", {"position": [0.0] * 7, "task": "speed"}, "task:"),
    ("solve_inverse_kinematics", {"target": Pose(orientation=Quaternion(w=2.0))},
     "not a unit quaternion"),
    ("solve_inverse_kinematics", {"seed": [0.0] * 3}, "seed: expected 7 values"),
    ("get_payload_capacity", {"position": [0.0] * 7, "com": [0.0, 0.1]}, "com: expected"),
])
def test_bad_requests_get_success_false_and_a_reason(svc, service, fields, reason):
    answer = call(svc, service, **fields)
    assert not answer.success
    assert reason in answer.message, answer.message
    assert svc[0].alive()
