"""Robot description files: the shipped robots load, and every validation rule gives a clear error
naming the file, the joint and the field (nothing is built from a bad file)."""
import copy
import math

import numpy as np
import pytest
import yaml

from robot_dynamics_ros.cli import main as cli_main
from robot_dynamics_ros.core import RobotDescriptionError, RobotModel, shipped_robots

SHIPPED = ["panda", "planar2", "puma560", "renaud6r", "stanford"]


def test_all_required_robots_are_shipped():
    assert set(SHIPPED) <= set(shipped_robots())


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_robot_loads(name):
    model = RobotModel.named(name)
    assert model.n == len(model.joint_names) == len(set(model.joint_names))
    assert np.all(model.lower <= model.upper) and np.all(model.effort_limit > 0)


def test_expected_structure_of_shipped_robots():
    assert RobotModel.named("puma560").convention == "standard"
    assert RobotModel.named("panda").n == 7 and RobotModel.named("panda").convention == "modified"
    assert "prismatic" in RobotModel.named("stanford").joint_types
    assert RobotModel.named("renaud6r").convention == "modified"
    puma = RobotModel.named("puma560")
    assert puma.has_motors and puma.has_friction
    rigid = puma.rigid()
    assert not rigid.has_motors and not rigid.has_friction and rigid.n == 6


def _planar():
    return RobotModel.named("planar2").to_dict()


def _error(data, tmp_path=None):
    if tmp_path is None:
        with pytest.raises(RobotDescriptionError) as info:
            RobotModel.from_dict(data, "robot.yaml")
        return str(info.value)
    path = tmp_path / "bad_robot.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(RobotDescriptionError) as info:
        RobotModel.from_yaml(path)
    return str(info.value)


def _mutated(change):
    data = _planar()
    change(data)
    return data


CASES = [
    # (description, mutation, fragments the message must contain)
    ("missing key", lambda d: d["joints"][1]["link"].pop("mass"), ["joint2", "link", "mass", "missing"]),
    ("typo key", lambda d: d["joints"][0]["limits"].update(efort=3.0), ["joint1", "limits", "efort", "unknown"]),
    ("top typo", lambda d: d.update(gravty=[0, 0, -9.81]), ["gravty", "unknown"]),
    ("wrong type", lambda d: d["joints"][0]["dh"].update(a="long"), ["joint1", "dh.a", "number"]),
    ("bool", lambda d: d["joints"][0]["link"].update(mass=True), ["joint1", "link.mass", "boolean"]),
    ("nan", lambda d: d["joints"][1]["link"]["com"].__setitem__(0, float("nan")), ["joint2", "link.com[0]", "finite"]),
    ("inf", lambda d: d["joints"][1]["dh"].update(d=float("inf")), ["joint2", "dh.d", "finite"]),
    ("negative mass", lambda d: d["joints"][0]["link"].update(mass=-1.0), ["joint1", "link.mass", ">= 0"]),
    ("not psd", lambda d: d["joints"][0]["link"]["inertia"].update(ixy=50.0), ["joint1", "link.inertia", "semi-definite"]),
    ("triangle", lambda d: d["joints"][1]["link"]["inertia"].update(ixx=0.01, iyy=1.0, izz=10.0),
     ["joint2", "link.inertia", "triangle"]),
    ("limits order", lambda d: d["joints"][0]["limits"].update(lower=1.0, upper=-1.0), ["joint1", "limits", "lower", "above upper"]),
    ("zero effort", lambda d: d["joints"][1]["limits"].update(effort=0.0), ["joint2", "limits.effort", "> 0"]),
    ("negative effort", lambda d: d["joints"][1]["limits"].update(effort=-5.0), ["joint2", "limits.effort", "> 0"]),
    ("zero velocity", lambda d: d["joints"][1]["limits"].update(velocity=0.0), ["joint2", "limits.velocity", "> 0"]),
    ("joint type", lambda d: d["joints"][0].update(type="spherical"), ["joint1", "type", "spherical"]),
    ("convention", lambda d: d.update(dh_convention="craig"), ["dh_convention", "craig"]),
    ("duplicate names", lambda d: d["joints"][1].update(name="joint1"), ["duplicate", "joint1"]),
    ("no joints", lambda d: d.update(joints=[]), ["joints", "non-empty"]),
    ("gravity length", lambda d: d.update(gravity=[0, -9.81]), ["gravity", "3 numbers"]),
    ("gear ratio", lambda d: d["joints"][0]["motor"].update(gear_ratio=0.0), ["joint1", "motor.gear_ratio", "non-zero"]),
    ("rotor", lambda d: d["joints"][0]["motor"].update(rotor_inertia=-1.0), ["joint1", "motor.rotor_inertia"]),
    ("friction", lambda d: d["joints"][0].update(friction={"viscous": -1.0}), ["joint1", "friction.viscous", ">= 0"]),
    ("friction typo", lambda d: d["joints"][0].update(friction={"viscos": 1.0}), ["joint1", "friction", "viscos"]),
    ("payload", lambda d: d.update(payload={"mass": -2.0, "com": [0, 0, 0], "inertia": {"ixx": 0, "iyy": 0, "izz": 0}}),
     ["payload.mass", ">= 0"]),
    ("bad angle expr", lambda d: d["joints"][0]["dh"].update(alpha="pi/two"), ["joint1", "dh.alpha", "pi/2"]),
    ("base typo", lambda d: d.update(base={"xyz": [0, 0, 0], "rpz": [0, 0, 0]}), ["base", "rpz"]),
]


@pytest.mark.parametrize("label, change, fragments", CASES, ids=[c[0] for c in CASES])
def test_bad_description_is_rejected_with_a_precise_message(label, change, fragments):
    message = _error(_mutated(change))
    assert message.startswith("robot.yaml: ")
    for fragment in fragments:
        assert fragment in message, (fragment, message)


def test_error_names_the_file(tmp_path):
    message = _error(_mutated(lambda d: d["joints"][1]["link"].update(mass=-3.0)), tmp_path)
    assert "bad_robot.yaml" in message and "joint2" in message and "link.mass" in message


def test_unreadable_and_invalid_yaml(tmp_path):
    with pytest.raises(RobotDescriptionError, match="cannot read"):
        RobotModel.from_yaml(tmp_path / "missing.yaml")
    bad = tmp_path / "broken.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(RobotDescriptionError, match="broken.yaml: not valid YAML"):
        RobotModel.from_yaml(bad)
    with pytest.raises(RobotDescriptionError, match="no such robot"):
        RobotModel.named("not_a_robot")


def test_pi_expressions_and_defaults():
    data = _planar()
    data["joints"][0]["dh"]["alpha"] = "-pi/2"
    data["joints"][1]["dh"]["theta"] = "3*pi/4"
    data.pop("gravity")
    model = RobotModel.from_dict(data)
    assert model.dh_alpha[0] == pytest.approx(-math.pi / 2)
    assert model.dh_theta[1] == pytest.approx(3 * math.pi / 4)
    assert model.gravity.tolist() == [0.0, 0.0, -9.81]


def test_model_is_constant():
    model = RobotModel.named("puma560")
    with pytest.raises(ValueError):
        model.mass[1] = 3.0
    before = copy.deepcopy(model.to_dict())
    model.with_payload(2.0, [0, 0, 0.1])
    model.rigid()
    assert model.to_dict() == before


def test_payload_is_validated_and_replaced():
    model = RobotModel.named("puma560")
    with pytest.raises(RobotDescriptionError, match="payload.mass"):
        model.with_payload(-1.0)
    heavy = model.with_payload(3.0, [0, 0, 0.05]).with_payload(1.0, [0, 0, 0.05])
    assert heavy.mass[-1] == pytest.approx(model.mass[-1] + 1.0)


def test_check_command(capsys, tmp_path):
    assert cli_main(["check", "puma560"]) == 0
    out = capsys.readouterr().out
    assert "joint6" in out and "37.48" in out and "OK" in out
    bad = tmp_path / "bad.yaml"
    data = _planar()
    data["joints"][0]["link"]["mass"] = -1
    bad.write_text(yaml.safe_dump(data))
    assert cli_main(["check", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "bad.yaml" in err and "joint1" in err and "link.mass" in err
