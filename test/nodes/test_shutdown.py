"""
Ctrl-C ends every way of running the nodes within seconds, with exit code 0 and no traceback.

Ctrl-C is SIGINT to the whole process group, as a terminal sends it.

Each command runs in its own process group (``start_new_session``), like a job in a terminal;
once its nodes are up (seen over DDS), the group gets SIGINT twice, 0.2 s apart: what each node
of ``ros2 launch`` receives (once from the terminal, once forwarded by launch).  The node
executable is started as ``ros2 run`` starts it (``<prefix>/lib/robot_dynamics_ros/<exe>``);
``ros2 launch`` and ``ros2 run`` themselves are checked where the ros2 command line is installed
(by hand: ../shared/tools/ros2-clients; they are not on the package index, so not in CI).
Every wait is bounded.
"""
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ros_fixtures import *  # noqa: F401,F403
from ros_fixtures import ROOT, TIMEOUT, private_namespace

pytestmark = pytest.mark.ros          # starts DDS (see test/conftest.py)

EXIT_TIMEOUT = 10.0          # s from the first SIGINT to the exit ("a few seconds", with margin)


def start_group(argv, env, log: Path):
    """Start ``argv`` in a new process group (session), output into ``log``."""
    handle = open(log, "wb")
    proc = subprocess.Popen(argv, env=env, stdout=handle, stderr=subprocess.STDOUT, cwd=str(ROOT),
                            start_new_session=True)
    proc.log_handle = handle
    return proc


def interrupt_group(proc) -> tuple[int | None, float]:
    """SIGINT to the group twice; (exit code or None if still running, seconds to exit)."""
    started = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    time.sleep(0.2)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(EXIT_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(TIMEOUT)
        return None, time.monotonic() - started
    return proc.returncode, time.monotonic() - started


def check_clean_exit(proc, log: Path, client, nodes):
    """Wait for ``nodes`` ((name, namespace) pairs) over DDS, Ctrl-C the group, check the exit."""
    try:
        def all_up():
            return set(nodes) <= set(client.node.get_node_names_and_namespaces())
        up = client.spin_until(all_up, timeout=3 * TIMEOUT)
        assert up, f"nodes {nodes} not up:\n{log.read_text(errors='replace')}"
        time.sleep(0.5)                                   # idle, spinning
        code, seconds = interrupt_group(proc)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(TIMEOUT)
        proc.log_handle.close()
    text = log.read_text(errors="replace")
    assert code == 0, f"exit code {code} after {seconds:.1f} s:\n{text}"
    assert "Traceback" not in text and "KeyboardInterrupt" not in text, text
    assert seconds < EXIT_TIMEOUT


def installed_executable(name: str) -> str:
    """Find ``<prefix>/lib/robot_dynamics_ros/<name>`` as ``ros2 run`` finds it."""
    from ament_index_python.packages import get_package_prefix
    os.environ.setdefault("AMENT_PREFIX_PATH", sys.prefix)
    prefix = get_package_prefix("robot_dynamics_ros")
    return os.path.join(prefix, "lib", "robot_dynamics_ros", name)


def test_node_executable(ros_env, ros_client, tmp_path):
    ns = private_namespace("sd_exe")
    argv = [installed_executable("gravity_compensation_node"), "--ros-args", "-r", f"__ns:={ns}"]
    proc = start_group(argv, ros_env, tmp_path / "exe.log")
    check_clean_exit(proc, tmp_path / "exe.log", ros_client, [("gravity_compensation", ns)])


def test_bringup(ros_env, ros_client, tmp_path):
    ns = private_namespace("sd_bringup")
    argv = [sys.executable, "-m", "robot_dynamics_ros.commands.cli", "bringup", "--namespace", ns,
            "--joint-states", f"{ns}/joint_states"]
    proc = start_group(argv, ros_env, tmp_path / "bringup.log")
    check_clean_exit(proc, tmp_path / "bringup.log", ros_client,
                     [(kind, ns) for kind in ("inverse_dynamics", "gravity_compensation",
                                              "dynamics_service", "trajectory_scaler")])


def ros2_command():
    """Find the ros2 command line next to this interpreter, or skip (installed by hand only)."""
    ros2 = shutil.which("ros2", path=str(Path(sys.executable).parent))
    if ros2 is None:
        pytest.skip("the ros2 command line is not installed (../shared/tools/ros2-clients)")
    pytest.importorskip("launch_ros")
    return ros2


def test_ros2_launch(ros_env, ros_client, tmp_path):
    ros2 = ros2_command()
    ns = private_namespace("sd_launch")
    env = dict(ros_env, AMENT_PREFIX_PATH=ros_env.get("AMENT_PREFIX_PATH") or sys.prefix)
    argv = [ros2, "launch", "robot_dynamics_ros", "robot_dynamics.launch.py", f"namespace:={ns}",
            f"joint_states:={ns}/joint_states"]
    proc = start_group(argv, env, tmp_path / "launch.log")
    check_clean_exit(proc, tmp_path / "launch.log", ros_client,
                     [(kind, ns) for kind in ("inverse_dynamics", "gravity_compensation",
                                              "dynamics_service", "trajectory_scaler")])


def test_ros2_run(ros_env, ros_client, tmp_path):
    ros2 = ros2_command()
    ns = private_namespace("sd_run")
    env = dict(ros_env, AMENT_PREFIX_PATH=ros_env.get("AMENT_PREFIX_PATH") or sys.prefix)
    argv = [ros2, "run", "robot_dynamics_ros", "inverse_dynamics_node", "--ros-args", "-r",
            f"__ns:={ns}"]
    proc = start_group(argv, env, tmp_path / "run.log")
    check_clean_exit(proc, tmp_path / "run.log", ros_client, [("inverse_dynamics", ns)])


def test_bad_launch_argument_fails_the_launch(ros_env, tmp_path):
    """One clear message, a non-zero exit, no node started."""
    ros2 = ros2_command()
    env = dict(ros_env, AMENT_PREFIX_PATH=ros_env.get("AMENT_PREFIX_PATH") or sys.prefix)
    for argument, words in [("robot:=no_such_robot", "robot: no_such_robot: no such robot file"),
                            ("nodes:=gravity", "nodes: unknown ['gravity']"),
                            ("joint_states:=joint states", "is not a valid ROS topic name")]:
        result = subprocess.run([ros2, "launch", "robot_dynamics_ros", "robot_dynamics.launch.py",
                                 argument], env=env, capture_output=True, text=True,
                                timeout=3 * TIMEOUT)
        output = result.stdout + result.stderr
        assert result.returncode != 0 and words in output, output
        assert output.count("[ERROR]") == 1 and "process started" not in output, output
