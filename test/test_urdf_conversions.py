"""
URDF <-> DH YAML conversions, the commands that do them, and URDF models in every part of the core.

Round trips YAML -> URDF -> YAML (the shipped robots, rotors, friction and payload included) and
URDF -> YAML -> URDF (random trees, checked against Pinocchio on the original URDF) give the same
dynamics to 1e-12; the exported URDF's cylinders are read by Pinocchio's geometry parser;
``check`` prints what was merged and locked; the code generator, the seeds' formulations and
trajectory scaling work on URDF models; continuous joints in YAML; the ``link_frame`` and
``accept_inconsistent_inertia`` keys of the robot files.
"""
import importlib.util
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from robot_dynamics_ros.cli import main as cli_main
from robot_dynamics_ros.codegen import generated_model
from robot_dynamics_ros.commands.demo import demo_trajectory
from robot_dynamics_ros.core import (JointTrajectory, RobotDescriptionError, RobotModel,
                                     forward_kinematics, gravity_torques, jacobian, mass_matrix,
                                     rnea, tool_pose, uniform_scaling)
from robot_dynamics_ros.core.formulations import FORMULATIONS
from robot_dynamics_ros.core.model import resolve_robot_path
from robot_dynamics_ros.core.model.inertia import inertia_entries, inertia_matrix
from robot_dynamics_ros.core.model.dh_description import modified_dh_description, robot_yaml_text
from robot_dynamics_ros.core.transforms import pose_matrix
from urdf_samples import PinocchioChain, random_urdf, relative_error

TOLERANCE = 1e-12
SHIPPED = ["panda", "planar2", "puma560", "renaud6r", "stanford"]


def _states(model, rng, count=4):
    low = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    high = np.where(np.isfinite(model.upper), model.upper, np.pi)
    for _ in range(count):
        yield rng.uniform(low, high), rng.uniform(-2, 2, model.n), rng.uniform(-3, 3, model.n)


def assert_same_robot(model, other, rng=None):
    """Assert the same joints, dynamics (rotors, friction), tool pose and Jacobian to 1e-12."""
    assert other.joint_names == model.joint_names and other.joint_types == model.joint_types
    np.testing.assert_array_equal(other.lower, model.lower)
    np.testing.assert_array_equal(other.effort_limit, model.effort_limit)
    for q, qd, qdd in _states(model, rng or np.random.default_rng(0)):
        for ours, theirs in ((rnea(other, q, qd, qdd), rnea(model, q, qd, qdd)),
                             (mass_matrix(other, q), mass_matrix(model, q)),
                             (gravity_torques(other, q), gravity_torques(model, q)),
                             (tool_pose(other, q), tool_pose(model, q)),
                             (jacobian(other, q), jacobian(model, q))):
            assert relative_error(ours, theirs) <= TOLERANCE


@pytest.mark.parametrize("name", SHIPPED)
def test_yaml_to_urdf_to_yaml(tmp_path, name):
    urdf, back = tmp_path / f"{name}.urdf", tmp_path / f"{name}.yaml"
    assert cli_main(["urdf", name, "-o", str(urdf)]) == 0
    assert cli_main(["convert", str(urdf), "--tip-link", "tool0", "-o", str(back)]) == 0
    assert_same_robot(RobotModel.named(name), RobotModel.from_yaml(back))


def test_payload_survives_the_round_trip(tmp_path):
    model = RobotModel.named("puma560").with_payload(2.5, [0.01, 0.02, 0.1],
                                                     np.diag([0.01, 0.02, 0.03]))
    source, urdf, back = tmp_path / "loaded.yaml", tmp_path / "loaded.urdf", tmp_path / "back.yaml"
    source.write_text(robot_yaml_text(model.to_dict()))
    assert cli_main(["urdf", str(source), "-o", str(urdf)]) == 0
    assert "<link name=\"payload\">" in urdf.read_text()
    assert cli_main(["convert", str(urdf), "--tip-link", "tool0", "-o", str(back)]) == 0
    assert_same_robot(model, RobotModel.from_yaml(back))


def test_acceleration_limits_survive_the_round_trip(tmp_path):
    spec = RobotModel.named("panda").to_dict()
    for k, joint in enumerate(spec["joints"]):
        joint["limits"]["acceleration"] = 10.0 + k
    model = RobotModel.from_dict(spec)
    source, urdf, back = tmp_path / "panda.yaml", tmp_path / "panda.urdf", tmp_path / "back.yaml"
    source.write_text(robot_yaml_text(model.to_dict()))
    assert cli_main(["urdf", str(source), "-o", str(urdf)]) == 0
    assert cli_main(["convert", str(urdf), "--tip-link", "tool0", "-o", str(back)]) == 0
    np.testing.assert_array_equal(RobotModel.from_yaml(back).acceleration_limit,
                                  model.acceleration_limit)
    assert np.all(RobotModel.from_urdf(urdf).acceleration_limit == model.acceleration_limit)


@pytest.mark.parametrize("seed", range(6))
def test_urdf_to_yaml_to_urdf(tmp_path, seed):
    rng = np.random.default_rng(300 + seed)
    sample = random_urdf(rng, n=int(rng.integers(2, 8)))
    original, yaml_file = tmp_path / "original.urdf", tmp_path / "robot.yaml"
    urdf = tmp_path / "again.urdf"
    original.write_text(sample.text)
    assert cli_main(["convert", str(original), "--tip-link", "tool", "-o", str(yaml_file)]) == 0
    assert cli_main(["urdf", str(yaml_file), "-o", str(urdf)]) == 0
    model = RobotModel.from_urdf(original, tip_link="tool")
    again = RobotModel.from_urdf(urdf, tip_link="tool0")
    assert_same_robot(model, RobotModel.from_yaml(yaml_file), rng)
    assert_same_robot(model, again, rng)
    oracle = PinocchioChain(sample.text, sample.chain, sample.tip)     # the original, by Pinocchio
    for q, qd, qdd in _states(model, rng):
        tau = rnea(again.rigid(), q, qd, qdd)
        assert relative_error(tau, oracle.rnea(q, qd, qdd)) <= TOLERANCE
        assert relative_error(jacobian(again, q), oracle.jacobian(q)) <= TOLERANCE


def test_exported_urdf_has_cylinders_pinocchio_reads(tmp_path):
    urdf = tmp_path / "panda.urdf"
    assert cli_main(["urdf", "panda", "-o", str(urdf)]) == 0
    model = pin.buildModelFromUrdf(str(urdf))
    geometry = pin.buildGeomFromUrdf(model, str(urdf), pin.GeometryType.VISUAL)
    shapes = [g.geometry for g in geometry.geometryObjects]
    assert shapes and all("Cylinder" in type(s).__name__ for s in shapes)
    assert all(s.radius > 0 and s.halfLength > 0 for s in shapes)
    # every link of the arm shows at least its joint
    shown = {model.frames[g.parentFrame].name for g in geometry.geometryObjects}
    assert {f"link{i}" for i in range(1, 8)} <= shown


def test_check_prints_what_was_merged_and_locked(tmp_path, capsys):
    sample = random_urdf(np.random.default_rng(5), n=4)
    path = tmp_path / "robot.urdf"
    path.write_text(sample.text)
    assert cli_main(["check", str(path), "--tip-link", "tool"]) == 0
    out = capsys.readouterr().out
    assert "chain from root link 'base' to tip link 'tool', 4 joints" in out
    assert "locked off-chain joints: " in out and "finger2_joint = 0" in out
    assert "palm" in out and "camera" in out and "tool" in out        # merged into chain links
    assert "fixed to the root link (no effect on the dynamics): other_arm" in out
    assert "OK" in out


def test_check_prints_continuous_joints_without_limits(tmp_path, capsys):
    sample = random_urdf(np.random.default_rng(6), n=2, types=("continuous",), branches=False)
    path = tmp_path / "robot.urdf"
    path.write_text(sample.text)
    assert cli_main(["check", str(path), "--tip-link", "tool"]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("joint1"))
    assert line.split()[1:5] == ["continuous", line.split()[2], "none", "none"]


def test_output_files_are_not_overwritten_by_accident(tmp_path, capsys):
    target = tmp_path / "robot.urdf"
    target.write_text("mine")
    assert cli_main(["urdf", "panda", "-o", str(target)]) == 1
    assert target.read_text() == "mine" and "use --force" in capsys.readouterr().err
    assert cli_main(["urdf", "panda", "-o", str(target), "--force"]) == 0
    again = ["urdf", str(target), "--tip-link", "tool0", "-o", str(target), "--force"]
    assert cli_main(again) == 1
    assert "is the input" in capsys.readouterr().err


def test_convert_refuses_a_bad_urdf_and_writes_nothing(tmp_path, capsys):
    bad, out = tmp_path / "bad.urdf", tmp_path / "out.yaml"
    bad.write_text("<robot name='x'><link name='a'/>")
    assert cli_main(["convert", str(bad), "-o", str(out)]) == 1
    assert "malformed XML" in capsys.readouterr().err and not out.exists()


def test_codegen_on_a_urdf(tmp_path):
    sample = random_urdf(np.random.default_rng(8), n=5)
    urdf, module_path = tmp_path / "robot.urdf", tmp_path / "robot_dynamics.py"
    urdf.write_text(sample.text)
    assert cli_main(["codegen", str(urdf), "--tip-link", "tool", "-o", str(module_path)]) == 0
    spec = importlib.util.spec_from_file_location("generated_urdf_robot", module_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = RobotModel.from_urdf(urdf, tip_link="tool")
    generated = generated_model(model)
    for q, qd, qdd in _states(model, np.random.default_rng(1)):
        tau = rnea(model, q, qd, qdd)
        assert relative_error(module.rnea(q, qd, qdd), tau) <= TOLERANCE
        assert relative_error(generated.mass_matrix(q), mass_matrix(model, q)) <= TOLERANCE


@pytest.mark.parametrize("name", sorted(FORMULATIONS))
def test_formulations_on_a_urdf_model(name):
    types = ("revolute", "continuous") + (() if name == "dalembert" else ("prismatic",))
    sample = random_urdf(np.random.default_rng(9), n=5, types=types)
    model = RobotModel.from_urdf(sample.text, tip_link="tool")
    for q, qd, qdd in _states(model, np.random.default_rng(2), count=2):
        expected = rnea(model.rigid(), q, qd, qdd)
        tau = FORMULATIONS[name].inverse_dynamics(model, q, qd, qdd)
        assert relative_error(tau, expected) <= 1e-10


def test_uniform_scaling_with_continuous_joints():
    sample = random_urdf(np.random.default_rng(10), n=3, types=("continuous",), branches=False)
    model = RobotModel.from_urdf(sample.text, tip_link="tool")
    # Several turns: no position limit stops it, the torque limits do.
    q = np.array([[0.0, 0.0, 0.0], [12.0, -9.0, 20.0]])
    traj = JointTrajectory(model.joint_names, [0.0, 0.05], q, np.zeros((2, 3)), np.zeros((2, 3)))
    result = uniform_scaling(model, traj)
    assert result.scale_factor > 1.0 and np.isfinite(result.duration)


def test_from_description_accepts_every_form(tmp_path):
    text = (tmp_path / "panda.urdf")
    assert cli_main(["urdf", "panda", "-o", str(text)]) == 0
    xml_copy, no_suffix = tmp_path / "panda.xml", tmp_path / "robot_description"
    xml_copy.write_text(text.read_text())
    no_suffix.write_text(text.read_text())
    reference = RobotModel.named("panda")
    for description, tip in (("panda", None), (str(resolve_robot_path("panda")), None),
                             (str(text), "tool0"), (str(xml_copy), "tool0"),
                             (str(no_suffix), "tool0"), (text.read_text(), "tool0")):
        assert_same_robot(reference, RobotModel.from_description(description, tip_link=tip))


def test_yaml_continuous_joints():
    spec = RobotModel.named("planar2").to_dict()
    spec["joints"][0]["type"] = "continuous"
    del spec["joints"][0]["limits"]["lower"], spec["joints"][0]["limits"]["upper"]
    model = RobotModel.from_dict(spec)
    assert model.lower[0] == -np.inf and model.upper[0] == np.inf and model.lower[1] > -np.inf
    again = RobotModel.from_dict(model.to_dict())
    assert again.joint_types[0] == "continuous"
    spec["joints"][0]["limits"]["lower"] = -1.0
    with pytest.raises(RobotDescriptionError, match=r"joints\[0\] \(joint1\).limits: a "
                                                    "continuous joint has no position limits"):
        RobotModel.from_dict(spec)


def test_yaml_link_frames():
    """A link given in its own frame is the same as that link re-expressed in the DH frame."""
    model = RobotModel.named("panda")
    spec = model.to_dict()
    frame = {"xyz": [0.01, -0.02, 0.03], "rpy": [0.3, -0.2, 0.1]}
    T = pose_matrix(frame)
    link = spec["joints"][3]["link"]
    com = np.linalg.solve(T[:3, :3], np.asarray(link["com"]) - T[:3, 3])
    inertia = T[:3, :3].T @ inertia_matrix(link["inertia"]) @ T[:3, :3]
    spec["joints"][3].update(link_frame=frame, link={"mass": link["mass"], "com": com.tolist(),
                                                     "inertia": inertia_entries(inertia)})
    framed = RobotModel.from_dict(spec)
    assert_same_robot(model, framed)
    q = np.random.default_rng(0).uniform(model.lower, model.upper)
    expected = forward_kinematics(model, q)[4] @ T
    np.testing.assert_allclose(forward_kinematics(framed, q)[4], expected, atol=1e-14)
    # Standard-DH files cannot have them (the formulations read their link frames as DH frames).
    puma = RobotModel.named("puma560").to_dict()
    puma["joints"][0]["link_frame"] = frame
    with pytest.raises(RobotDescriptionError,
                       match="link frames are supported with dh_convention: modified"):
        RobotModel.from_dict(puma)


def test_yaml_opt_in_for_inconsistent_inertia():
    spec = RobotModel.named("planar2").to_dict()
    spec["joints"][0]["link"]["inertia"] = {"ixx": 1.0, "iyy": 1.0, "izz": 5.0}
    with pytest.raises(RobotDescriptionError, match="physically inconsistent"):
        RobotModel.from_dict(spec)
    spec["accept_inconsistent_inertia"] = True
    with pytest.warns(UserWarning,
                      match=r"joints\[0\] \(joint1\).link.inertia: physically inconsistent"):
        assert RobotModel.from_dict(spec).n == 2


def test_converted_yaml_is_plain_modified_dh(tmp_path):
    sample = random_urdf(np.random.default_rng(11), n=4)
    model = RobotModel.from_urdf(sample.text, tip_link="tool")
    text = robot_yaml_text(modified_dh_description(model))
    assert "link_frame" not in text and "dh_convention: modified" in text
    assert model.to_dict()["joints"][0]["link_frame"] is not None


def test_readme_worked_example(tmp_path, capsys, monkeypatch):
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    example = readme[readme.index("### Worked example"):]
    xml = example[example.index("```xml\n") + 7:example.index("```\n", example.index("```xml"))]
    shown = example[example.index("$ robot-dynamics check"):]
    shown = shown[:shown.index("...")].splitlines()[1:]
    (tmp_path / "arm.urdf").write_text(xml)
    monkeypatch.chdir(tmp_path)
    assert cli_main(["check", "arm.urdf", "--tip-link", "tool0"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[:len(shown)] == shown
    assert RobotModel.from_urdf("arm.urdf").joint_names[-1] == "finger_joint"
    assert cli_main(["convert", "arm.urdf", "--tip-link", "tool0", "-o", "arm.yaml"]) == 0
    assert "d: 0.5" in Path("arm.yaml").read_text()


def test_demo_trajectory_with_continuous_joints():
    sample = random_urdf(np.random.default_rng(12), n=3, types=("continuous", "revolute"))
    model = RobotModel.from_urdf(sample.text, tip_link="tool")
    trajectory = demo_trajectory(model, 2.0)
    assert np.all(np.isfinite(trajectory.positions))
    assert np.all(trajectory.positions >= np.maximum(model.lower, -np.pi))


def test_scale_command_takes_a_urdf(tmp_path, capsys):
    urdf = tmp_path / "puma.urdf"
    assert cli_main(["urdf", "puma560", "-o", str(urdf)]) == 0
    path = str(Path(__file__).resolve().parents[1] / "config/trajectories/puma560_path.yaml")
    assert cli_main(["scale", "puma560", path]) == 0
    from_yaml = capsys.readouterr().out.splitlines()[1]
    assert cli_main(["scale", str(urdf), path, "--tip-link", "tool0"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == from_yaml      # "uniform scaling: c = ..."


def test_bag_process_takes_a_urdf_chain(tmp_path, capsys):
    urdf = tmp_path / "puma.urdf"
    assert cli_main(["urdf", "puma560", "-o", str(urdf)]) == 0
    command = ["bag", "process", str(tmp_path / "no_bag"), str(tmp_path / "out"), "--robot",
               str(urdf), "--tip-link"]
    assert cli_main(command + ["nope"]) == 1
    assert "tip_link 'nope': no such link" in capsys.readouterr().err
    assert cli_main(command + ["tool0"]) == 1            # the robot loads; the bag does not exist
    assert "no_bag" in capsys.readouterr().err
