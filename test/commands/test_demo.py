"""
`robot-dynamics demo` (what `make demo` runs), as a child process in the session's ROS environment.

The demo closes the loop simulator -> joint_states -> inverse_dynamics (computed torque) ->
effort command -> simulator and writes a bag.  Checked against independent oracles, from the bag
read with the package's reader (not from the demo's own arithmetic):

* the tracking error recomputed from the bag's joint states against the core's sampling of the
  demo trajectory at each stamp: below a bound, and equal to the printed figure;
* the printed joint positions are the bag's at the printed times;
* every recorded controller output is the computed-torque law evaluated by the core's RNEA at
  the recorded state and the core's reference sample at the state's stamp; the simulator
  applied it (saturated at the effort limits) over the next period, and one period of the core's
  simulator from the recorded state lands on the next recorded state;
* gravity_effort against the core's g(q), the mass-matrix answer symmetric positive definite.
"""
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

from independent_readers import independent_messages, joint_state_rows
from ros_fixtures import *  # noqa: F401,F403
from ros_fixtures import ROOT, private_namespace
from robot_dynamics_ros.bags import bag_info, load_joint_states
from robot_dynamics_ros.core.trajectories.demo import demo_trajectory
from robot_dynamics_ros.core import RobotModel, rnea, simulate

pytestmark = pytest.mark.ros          # starts DDS (see test/conftest.py)

DURATION = 2.0                  # s of reference trajectory (the run lasts 0.5 s longer)
CONTROL_RATE = 500.0            # Hz: the demo's default
START_UP = 10                   # states after the release of the hold not checked one by one
KP, KD = 100.0, 20.0            # the controller's default gains


def run_demo(ros_env, tmp_path, tag, *extra, launcher=("-m", "robot_dynamics_ros.commands.cli")):
    """Run the demo on private topics; return (stdout, bag path, namespace)."""
    ns = private_namespace(tag)
    bag = tmp_path / f"{tag}_bag"
    argv = [sys.executable, *launcher, "demo", "--duration", str(DURATION),
            "--print-period", "0.25", "--namespace", ns, "--bag", str(bag),
            "--joint-states", f"{ns}/joint_states",
            "--effort-command", f"{ns}/effort_controller/commands", *extra]
    result = subprocess.run(argv, env=ros_env, cwd=str(tmp_path), capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr[-5000:]
    return result.stdout, bag, ns


@pytest.fixture(scope="module", params=["shipped", "without_friction"])
def demo_run(request, ros_env, tmp_path_factory):
    """
    Run the demo once per robot variant: (model, stdout, bag, namespace).

    The variant without friction records with ``--storage sqlite3``, so both storages are
    covered (SQLite3 once failed: the recorder writes from the spinner threads).
    """
    tmp_path = tmp_path_factory.mktemp(request.param)
    model = RobotModel.named("puma560")
    if request.param == "without_friction":
        return (model.without_friction(),
                *run_demo(ros_env, tmp_path, "demo_nf", "--without-friction",
                          "--storage", "sqlite3"))
    return (model, *run_demo(ros_env, tmp_path, "demo"))


def unique_states(bag, topic, model):
    """Return the bag's JointStates on ``topic`` with one row per stamp (the first)."""
    states = load_joint_states(bag, topic, joint_names=model.joint_names)
    stamps, first = np.unique(states.stamp, return_index=True)
    return stamps, states.position[first], states.velocity[first], states.effort[first]


def printed_max_error(out: str) -> float:
    return float(re.search(r"tracking error .*? max ([0-9.e+-]+) rad", out).group(1))


def test_tracking_error_from_the_bag_against_the_core(demo_run):
    model, out, bag, ns = demo_run
    stamps, q, _, _ = unique_states(bag, f"{ns}/joint_states", model)
    t = stamps * 1e-9
    assert t[0] == 0.0 and t[-1] >= DURATION + 0.5 - 1e-9
    np.testing.assert_allclose(np.diff(t), 1.0 / CONTROL_RATE, atol=1e-9)   # no state missing
    q_ref = demo_trajectory(model, DURATION).sample(t)[0]
    error = np.abs(q_ref - q).max()
    np.testing.assert_allclose(printed_max_error(out), error, rtol=6e-3)    # printed: 3 digits
    # friction: the start-from-rest lag (README, closed loop); exact model: the 1e-3 rad
    assert error < (1e-3 if not np.any(model.coulomb) else 0.1), error
    assert f"inspect it:  robot-dynamics bag info {bag.name}" in out.replace(str(bag), bag.name)


def test_printed_positions_are_the_recorded_ones(demo_run):
    model, out, bag, ns = demo_run
    stamps, q, _, _ = unique_states(bag, f"{ns}/joint_states", model)
    rows = re.findall(r"^\s*([0-9.]+)\s+/joint_states position \[rad\]\s+(.*)$", out, re.M)
    assert len(rows) == int((DURATION + 0.5) / 0.25) + 1, out
    for t, values in rows:
        k = int(np.searchsorted(stamps, round(float(t) * 1e9)))
        np.testing.assert_allclose([float(v) for v in values.split()], q[k], atol=6e-5)


def test_controller_outputs_are_computed_torque_and_the_plant_applies_them(demo_run):
    model, _, bag, ns = demo_run
    stamps, q, qd, applied = unique_states(bag, f"{ns}/joint_states", model)
    ff_stamps, _, _, tau = unique_states(bag, f"{ns}/feedforward_effort", model)
    assert np.array_equal(ff_stamps, stamps)          # one output per joint state
    t = stamps * 1e-9
    traj = demo_trajectory(model, DURATION)

    # The node samples the reference at each joint state's stamp (not at its clock, which /clock
    # sets and which was now and then a period away from the stamp): every output is the
    # computed-torque law at its own state and the core's reference sample at that stamp.
    q_ref, qd_ref, qdd_ref = traj.sample(t)
    np.testing.assert_allclose(tau, rnea(model, q, qd, qdd_ref + KD * (qd_ref - qd)
                                         + KP * (q_ref - q)), rtol=0, atol=1e-7)
    # The answers to the held initial state (all nearly the same torque, the arm at rest at the
    # reference's start) may still be applied in the first few periods after the release: the
    # Float64MultiArray commands carry no stamp to pair them with states.  From the 10th state
    # (20 ms) on, every applied effort must match.
    settled = slice(START_UP, None)
    # each state's effort is the previous command, clipped at the effort limits
    limit = model.effort_limit
    np.testing.assert_allclose(applied[1:][settled], np.clip(tau[:-1], -limit, limit)[settled],
                               atol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                   # (saturation warnings)
        for k in np.linspace(START_UP, len(t) - 2, 25).astype(int):
            step = simulate(model, q[k], qd[k], 1.0 / CONTROL_RATE, dt=1e-3, torque=tau[k])
            np.testing.assert_allclose(step.q[-1], q[k + 1], atol=1e-9)
            np.testing.assert_allclose(step.qd[-1], qd[k + 1], atol=1e-7)


def test_bag_holds_the_run_and_the_nodes_answered(demo_run):
    model, out, bag, ns = demo_run
    info = bag_info(bag, check=True)
    assert f"{bag} ({info.storage})" in out
    # the independent readers (foxglove's mcap, plain sqlite3) decode the same joint states
    rows = joint_state_rows(independent_messages(bag), f"{ns}/joint_states")
    states = load_joint_states(bag, f"{ns}/joint_states", joint_names=model.joint_names)
    assert rows["stamp"] == states.stamp.tolist() and rows["time"] == states.time.tolist()
    np.testing.assert_array_equal(rows["position"], states.position)
    np.testing.assert_array_equal(rows["velocity"], states.velocity)
    counts = {topic.name: topic.count for topic in info.topics}
    types = {topic.name: topic.msgtype for topic in info.topics}
    states = counts[f"{ns}/joint_states"]
    assert states >= (DURATION + 0.5) * CONTROL_RATE
    assert counts[f"{ns}/effort_controller/commands"] >= states - 2
    assert types[f"{ns}/effort_controller/commands"] == "std_msgs/msg/Float64MultiArray"
    assert counts[f"{ns}/feedforward_effort"] >= states - 2
    assert counts[f"{ns}/gravity_effort"] >= states - 2
    assert counts[f"{ns}/reference_trajectory"] == 1 and counts[f"{ns}/scaled_trajectory"] == 1
    assert float(out.split("vs core g(q) at the same stamp: max |difference|")[1].split()[0]) \
        < 1e-9
    rows = out.split("mass_matrix [kg m^2] (row-major, shown as rows):")[1].strip()
    B = np.array([[float(v) for v in row.split()] for row in rows.splitlines()[:6]])
    np.testing.assert_allclose(B, B.T, atol=2e-3)           # printed with 3 decimals
    assert np.linalg.eigvalsh(B).min() > 0.0
    assert "uniform: success" in out


def test_a_recording_far_behind_the_loop_still_holds_the_whole_run(ros_env, tmp_path):
    """
    The demo lets the nodes answer every joint state and drains its recording before closing.

    Every bag write is held up 4 ms (``slow_bag_writer``), so at the end of the run the
    recorder is seconds behind the loop with hundreds of messages queued, deterministically
    (a CI run on a loaded machine lost the last 0.17 s of the run with SQLite3 that way).
    """
    rate = 100.0
    out, bag, ns = run_demo(ros_env, tmp_path, "demo_slow", "--duration", "1", "--control-rate",
                            str(rate), "--storage", "sqlite3",
                            launcher=(str(ROOT / "test" / "support" / "slow_bag_writer.py"),
                                      "0.004"))
    model = RobotModel.named("puma560")
    stamps = unique_states(bag, f"{ns}/joint_states", model)[0]
    t = stamps * 1e-9
    assert t[0] == 0.0 and t[-1] >= 1.0 + 0.5 - 1e-9, t[-1]
    np.testing.assert_allclose(np.diff(t), 1.0 / rate, atol=1e-9)         # no state missing
    for output in ("feedforward_effort", "gravity_effort"):        # every state answered
        answers = load_joint_states(bag, f"{ns}/{output}", require_position=False)
        assert np.array_equal(np.unique(answers.stamp), stamps), output
    counts = {topic.name: topic.count for topic in bag_info(bag, check=True).topics}
    assert counts[f"{ns}/effort_controller/commands"] == counts[f"{ns}/feedforward_effort"]
    assert "the bag misses" not in out


def test_demo_refuses_an_existing_bag(ros_env, tmp_path):
    (tmp_path / "taken").mkdir()
    result = subprocess.run([sys.executable, "-m", "robot_dynamics_ros.commands.cli", "demo",
                             "--bag", str(tmp_path / "taken")], env=ros_env, cwd=str(ROOT),
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and "exists already" in result.stderr, result
    assert list((tmp_path / "taken").iterdir()) == []
