"""
The nodes' warm-up when the robot is loaded (a managed node's on_configure).

What their first message or request needs is loaded then (a fresh process, so that nothing was
loaded before).
"""
import subprocess
import sys
import textwrap

import pytest

from ros_fixtures import *  # noqa: F401,F403

pytestmark = pytest.mark.ros          # starts DDS (see test/conftest.py)

SCRIPT = textwrap.dedent("""
    import sys
    import rclpy
    from rclpy.parameter import Parameter
    from robot_dynamics_ros.core.precompile import counting_compilations
    from robot_dynamics_ros.nodes.gravity_compensation import GravityCompensationNode
    from robot_dynamics_ros.nodes.trajectory_scaler import TrajectoryScalerNode

    def loaded(prefix):
        return any(name.startswith("robot_dynamics_ros_" + prefix) for name in sys.modules)

    rclpy.init()
    node = GravityCompensationNode(parameter_overrides=[
        Parameter("robot_description", value="stanford"), Parameter("autostart", value=False),
        Parameter("use_generated_model", value=False)])
    before = loaded("kernels_")
    node.trigger_configure()
    after = loaded("kernels_")
    with counting_compilations() as compiled:
        q = [0.1] * node.dynamics.model.n
        tau = node.dynamics.holding_values(q, [0.0] * len(q))
    print(before, after, len(compiled), len(tau))
    node.destroy_node()
    passes_before = loaded("topp_passes_")
    scaler = TrajectoryScalerNode(parameter_overrides=[
        Parameter("robot_description", value="stanford")])
    print(passes_before, loaded("topp_passes_"))   # (the time-optimal passes: at start)
    scaler.destroy_node()
    rclpy.shutdown()
""")


def test_configure_loads_the_kernels_so_the_first_message_finds_them(ros_env):
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=ros_env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-6:] == ["False", "True", "0", "6", "False", "True"]
