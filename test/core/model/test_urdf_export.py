"""
URDF <-> DH YAML conversions, the commands that do them, and URDF models in every part of the core.

Round trips YAML -> URDF -> YAML (the shipped robots, rotors, friction and payload included) and
URDF -> YAML -> URDF (random trees, checked against Pinocchio on the original URDF) give the same
dynamics to 1e-12; the exported URDF's cylinders are read by Pinocchio's geometry parser;
``check`` prints what was merged and locked; the code generator, the source texts' formulations and
trajectory scaling work on URDF models; continuous joints in YAML; the ``link_frame`` and
``accept_inconsistent_inertia`` keys of the robot files.
"""

import numpy as np
import pinocchio as pin
import pytest
import yaml

from generated_checks import TOLERANCE, assert_same_robot, random_states
from robot_dynamics_ros.commands.cli import main as cli_main
from robot_dynamics_ros.core import RobotModel, jacobian, rnea
from robot_dynamics_ros.core.model.dh_description import modified_dh_description, robot_yaml_text
from urdf_samples import PinocchioChain, random_urdf, relative_error

SHIPPED = ["panda", "planar2", "puma560", "renaud6r", "stanford"]


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


def test_torque_offsets_survive_the_round_trips(tmp_path):
    """friction.offset: YAML -> URDF (robot_dynamics:friction) -> YAML, and YAML -> YAML."""
    spec = RobotModel.named("puma560").to_dict()
    offsets = [0.3, -1.2, 0.0, 0.05, -0.01, 0.2]
    for joint, offset in zip(spec["joints"], offsets):
        joint["friction"]["offset"] = offset
    model = RobotModel.from_dict(spec)
    assert np.array_equal(model.torque_offset, offsets) and model.has_torque_offset
    text = robot_yaml_text(spec)
    assert "offset: -1.2" in text and text.count("offset:") == 5     # zero offsets left out
    assert np.array_equal(RobotModel.from_dict(yaml.safe_load(text)).torque_offset, offsets)
    source, urdf, back = tmp_path / "offsets.yaml", tmp_path / "offsets.urdf", tmp_path / "b.yaml"
    source.write_text(text)
    assert cli_main(["urdf", str(source), "-o", str(urdf)]) == 0
    assert urdf.read_text().count("<robot_dynamics:friction offset=") == 5
    assert np.array_equal(RobotModel.from_urdf(urdf, tip_link="tool0").torque_offset, offsets)
    assert cli_main(["convert", str(urdf), "--tip-link", "tool0", "-o", str(back)]) == 0
    assert np.array_equal(RobotModel.from_yaml(back).torque_offset, offsets)
    # an offset is no torque on the robot: the dynamics are those of the robot without it
    q, qd, qdd = np.zeros((3, 6)) + 0.3
    assert np.array_equal(rnea(model, q, qd, qdd), rnea(RobotModel.named("puma560"), q, qd, qdd))


def test_further_friction_terms_survive_the_round_trips(tmp_path):
    """viscous_quadratic, coulomb_load: YAML -> URDF (robot_dynamics:friction) -> YAML."""
    from further_friction import with_further_friction
    quadratic, load = [0.5, 0.0, 0.1, -0.01, 0.0, 0.2], [0.05, 0.1, 0.0, 0.0, 0.02, 0.0]
    model = with_further_friction(RobotModel.named("puma560"), quadratic, load)
    text = robot_yaml_text(model.to_dict())
    assert text.count("viscous_quadratic:") == 4 and text.count("coulomb_load:") == 3
    again = RobotModel.from_dict(yaml.safe_load(text))
    assert np.array_equal(again.viscous_quadratic, quadratic)
    assert np.array_equal(again.coulomb_load, load)
    source, urdf, back = tmp_path / "f.yaml", tmp_path / "f.urdf", tmp_path / "b.yaml"
    source.write_text(text)
    assert cli_main(["urdf", str(source), "-o", str(urdf)]) == 0
    assert urdf.read_text().count("<robot_dynamics:friction ") == 6
    from_urdf = RobotModel.from_urdf(urdf, tip_link="tool0")
    assert np.array_equal(from_urdf.viscous_quadratic, quadratic)
    assert np.array_equal(from_urdf.coulomb_load, load)
    assert cli_main(["convert", str(urdf), "--tip-link", "tool0", "-o", str(back)]) == 0
    converted = RobotModel.from_yaml(back)
    assert np.array_equal(converted.coulomb_load, load)
    q, qd, qdd = np.random.default_rng(2).normal(size=(3, 6))
    np.testing.assert_allclose(rnea(converted, q, qd, qdd), rnea(model, q, qd, qdd),
                               rtol=1e-10, atol=1e-10)
    # URDF's own readers see the extension's rules: a bad value is refused by name
    bad = urdf.read_text().replace('coulomb_load="0.1"', 'coulomb_load="1.5"', 1)
    with pytest.raises(Exception, match="coulomb_load"):
        RobotModel.from_urdf(bad, tip_link="tool0")


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
    for q, qd, qdd in random_states(model, rng):
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


def test_converted_yaml_is_plain_modified_dh(tmp_path):
    sample = random_urdf(np.random.default_rng(11), n=4)
    model = RobotModel.from_urdf(sample.text, tip_link="tool")
    text = robot_yaml_text(modified_dh_description(model))
    assert "link_frame" not in text and "dh_convention: modified" in text
    assert model.to_dict()["joints"][0]["link_frame"] is not None
