"""
``robot-dynamics bag process`` runs where rclpy and the message packages cannot be imported.

Bag processing reads and writes bags with rosbags and computes with the core: no ROS.  The
command runs in a fresh interpreter whose import system refuses rclpy and every message package
(a meta-path finder first in ``sys.meta_path``), on a bag with joint states and a reference
trajectory, both written with rosbags' types; its outputs are checked against the core.
(test/test_architecture.py checks the same statically on the modules bag process imports.)
"""
import subprocess
import sys

import numpy as np

from bag_messages import puma_run, raw_bag, serialized, ts_joint_state
from robot_dynamics_ros.bags import load_joint_states
from robot_dynamics_ros.bags.process import DEFAULT_REFERENCE, REFERENCE
from robot_dynamics_ros.bags.types import typestore
from robot_dynamics_ros.core import RobotModel, gravity_torques
from robot_dynamics_ros.messages.cdr import JOINT_STATE
from robot_dynamics_ros.messages.topics import DEFAULT_NAMESPACE

BLOCKED = ("rclpy", "sensor_msgs", "std_msgs", "trajectory_msgs", "builtin_interfaces",
           "rcl_interfaces", "rosgraph_msgs", "diagnostic_msgs", "geometry_msgs",
           "robot_dynamics_interfaces")
WITHOUT_ROS = f"""
import sys

BLOCKED = {BLOCKED!r}


class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}} (blocked by the test)",
                                      name=name)
        return None


sys.meta_path.insert(0, Blocker())
from robot_dynamics_ros.commands.cli import main
code = main(sys.argv[1:])
loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
assert not loaded, loaded
sys.exit(code)
"""


def reference_raw(joint_names) -> bytes:
    """Return a JointTrajectory (rosbags' types: no rclpy) from 0.1 s to 0.3 s, in CDR."""
    types = typestore().types
    point = types["trajectory_msgs/msg/JointTrajectoryPoint"]
    duration = types["builtin_interfaces/msg/Duration"]
    n = len(joint_names)
    points = [point(positions=np.full(n, 0.1 * k), velocities=np.zeros(n),
                    accelerations=np.array([], float), effort=np.array([], float),
                    time_from_start=duration(sec=0, nanosec=100_000_000 * k))
              for k in (1, 2, 3)]
    msg = types[REFERENCE](
        header=types["std_msgs/msg/Header"](
            stamp=types["builtin_interfaces/msg/Time"](sec=0, nanosec=0), frame_id=""),
        joint_names=list(joint_names), points=points)
    return serialized(msg, REFERENCE)


def test_bag_process_runs_with_rclpy_and_the_message_packages_blocked(tmp_path):
    puma = RobotModel.named("puma560")
    run = puma_run(puma, 0.029)                  # 30 joint states, 1 ms apart
    states = [(k * 1_000_000, serialized(ts_joint_state(
        k * 1_000_000, puma.joint_names, run.q[k], run.qd[k], run.tau[k]))) for k in range(30)]
    raw_bag(tmp_path / "in", {"/joint_states": (JOINT_STATE, states),
                              DEFAULT_REFERENCE: (REFERENCE, [(1, reference_raw(
                                  puma.joint_names))])})
    result = subprocess.run(
        [sys.executable, "-c", WITHOUT_ROS, "bag", "process", str(tmp_path / "in"),
         str(tmp_path / "out"), "--robot", "puma560", "--no-progress",
         "--outputs", "gravity,feedforward"],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    gravity = load_joint_states(tmp_path / "out", f"/{DEFAULT_NAMESPACE}/gravity_effort",
                                require_position=False)
    np.testing.assert_allclose(gravity.effort, gravity_torques(puma, run.q), atol=1e-10)
    # the reference went through the ROS-free message conversions: every later state answered
    feedforward = load_joint_states(tmp_path / "out", f"/{DEFAULT_NAMESPACE}/feedforward_effort",
                                    require_position=False)
    assert feedforward.effort.shape == (29, 6)
