"""
Service requests refused by size before conversion (nodes/bounded_requests.py), over DDS.

Oracles: the request as rclpy's own conversion gives it (a plain service on the same node, same
request), the converted message compared field by field; what the callback receives for an
oversize request (a marker, no Python message); the Python objects alive after many requests.
"""
import gc

import pytest

from ros_fixtures import *  # noqa: F401,F403
from ros_fixtures import private_namespace

from robot_dynamics_ros.core import InputError
from robot_dynamics_ros.nodes.bounded_requests import (Oversize, bounded_trajectory_service,
                                                       refuse_oversize)

from robot_dynamics_interfaces.srv import ScaleTrajectory  # noqa: E402
from builtin_interfaces.msg import Duration  # noqa: E402
from trajectory_msgs.msg import JointTrajectoryPoint  # noqa: E402

pytestmark = pytest.mark.ros          # starts DDS (see test/conftest.py)

NS = private_namespace("bounded")


def _request(points: int, names=("a", "b"), method="time_optimal"):
    req = ScaleTrajectory.Request(method=method)
    req.trajectory.header.frame_id = "base"
    req.trajectory.header.stamp.sec, req.trajectory.header.stamp.nanosec = 12, 345
    req.trajectory.joint_names = list(names)
    req.trajectory.points = [JointTrajectoryPoint(
        positions=[0.1 * k, -2.0], velocities=[1.0, 2.5], effort=[3.0, float(k)],
        time_from_start=Duration(sec=k, nanosec=7)) for k in range(points)]
    return req


@pytest.fixture(scope="module")
def services(ros_client):
    seen = {"bounded": [], "plain": []}

    def answer(kind):
        def callback(request, response):
            seen[kind].append(request)
            response.success = not isinstance(request, Oversize)
            response.message = request.reason if isinstance(request, Oversize) else ""
            return response
        return callback
    node = ros_client.node
    bounded_trajectory_service(node, ScaleTrajectory, f"{NS}/bounded", answer("bounded"),
                               max_names=4, max_points=100)
    node.create_service(ScaleTrajectory, f"{NS}/plain", answer("plain"))
    clients = {kind: node.create_client(ScaleTrajectory, f"{NS}/{kind}") for kind in seen}
    return ros_client, clients, seen


def test_requests_within_the_bounds_arrive_as_rclpy_converts_them(services):
    client, clients, seen = services
    for points in (0, 1, 100):
        req = _request(points)
        assert client.call(clients["bounded"], req).success
        assert client.call(clients["plain"], req).success
        got, expected = seen["bounded"][-1], seen["plain"][-1]
        assert type(got) is ScaleTrajectory.Request
        assert got == expected == req


@pytest.mark.parametrize("points, names", [(101, 2), (1_000_000, 2), (3, 5)])
def test_oversize_requests_reach_the_callback_unconverted(services, points, names):
    client, clients, seen = services
    req = _request(0, names=[f"j{k}" for k in range(names)])
    req.trajectory.points = [JointTrajectoryPoint(positions=[1.0, 2.0])] * points
    answer = client.call(clients["bounded"], req, timeout=120.0)
    assert not answer.success
    assert answer.message == (f"{NS}/bounded: {names} joint names and {points} points, more than "
                              "the 4 and 100 accepted (refused unconverted)")
    assert seen["bounded"][-1] == Oversize(answer.message)


def test_no_python_object_is_left_behind(services):
    """Converted or refused, a request leaves nothing alive once answered (reference counts)."""
    client, clients, seen = services
    small, big = _request(5), _request(101)
    for req in (small, big):          # warm up
        client.call(clients["bounded"], req)
    seen["bounded"].clear()
    gc.collect()
    before = len(gc.get_objects())
    for _ in range(50):
        client.call(clients["bounded"], small)
        client.call(clients["bounded"], big)
    seen["bounded"].clear()
    gc.collect()
    # a leaked request would leave its points (>= 5 objects) or its marker (2) per call: 100+
    assert len(gc.get_objects()) - before < 50


def test_refuse_oversize_raises_the_reason():
    refuse_oversize(ScaleTrajectory.Request())
    with pytest.raises(InputError, match="too many"):
        refuse_oversize(Oversize("too many"))
