"""
Robot description files: the shipped robots load, and bad files get clear errors.

Every validation rule gives an error naming the file, the joint and the field (nothing is built
from a bad file).
"""

import copy
import dataclasses
import math

import numpy as np
import pytest
import yaml

from robot_dynamics_ros.core import (RobotDescriptionError, RobotModel, coriolis_matrix,
                                     forward_dynamics, mass_matrix, rnea, shipped_robots,
                                     tool_pose)
from robot_dynamics_ros.core.algorithms.kinematics import internal_frames
from robot_texts import planar_dict

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


def _error(data, tmp_path=None):
    """Return the error of ``data`` (under the strict inertia check: the default warns)."""
    if tmp_path is None:
        with pytest.raises(RobotDescriptionError) as info:
            RobotModel.from_dict(data, "robot.yaml", strict_inertia=True)
        return str(info.value)
    path = tmp_path / "bad_robot.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(RobotDescriptionError) as info:
        RobotModel.from_yaml(path)
    return str(info.value)


def _mutated(change):
    data = planar_dict()
    change(data)
    return data


CASES = [
    # (description, mutation, fragments the message must contain)
    ("missing key", lambda d: d["joints"][1]["link"].pop(
        "mass"), ["joint2", "link", "mass", "missing"]),
    ("typo key", lambda d: d["joints"][0]["limits"].update(
        efort=3.0), ["joint1", "limits", "efort", "unknown"]),
    ("top typo", lambda d: d.update(gravty=[0, 0, -9.81]), ["gravty", "unknown"]),
    ("wrong type", lambda d: d["joints"][0]["dh"].update(a="long"), ["joint1", "dh.a", "number"]),
    ("bool", lambda d: d["joints"][0]["link"].update(
        mass=True), ["joint1", "link.mass", "boolean"]),
    ("nan", lambda d: d["joints"][1]["link"]["com"].__setitem__(
        0, float("nan")), ["joint2", "link.com[0]", "finite"]),
    ("inf", lambda d: d["joints"][1]["dh"].update(d=float("inf")), ["joint2", "dh.d", "finite"]),
    ("negative mass", lambda d: d["joints"][0]["link"].update(
        mass=-1.0), ["joint1", "link.mass", ">= 0"]),
    ("not psd", lambda d: d["joints"][0]["link"]["inertia"].update(
        ixy=50.0), ["joint1", "link.inertia", "semi-definite"]),
    ("triangle", lambda d: d["joints"][1]["link"]["inertia"].update(ixx=0.01, iyy=1.0, izz=10.0),
     ["joint2", "link.inertia", "triangle"]),
    ("limits order", lambda d: d["joints"][0]["limits"].update(
        lower=1.0, upper=-1.0), ["joint1", "limits", "lower", "above upper"]),
    ("zero effort", lambda d: d["joints"][1]["limits"].update(
        effort=0.0), ["joint2", "limits.effort", "> 0"]),
    ("negative effort", lambda d: d["joints"][1]["limits"].update(
        effort=-5.0), ["joint2", "limits.effort", "> 0"]),
    ("zero velocity", lambda d: d["joints"][1]["limits"].update(
        velocity=0.0), ["joint2", "limits.velocity", "> 0"]),
    ("joint type", lambda d: d["joints"][0].update(
        type="spherical"), ["joint1", "type", "spherical"]),
    ("convention", lambda d: d.update(dh_convention="craig"), ["dh_convention", "craig"]),
    ("duplicate names", lambda d: d["joints"][1].update(name="joint1"), ["duplicate", "joint1"]),
    ("no joints", lambda d: d.update(joints=[]), ["joints", "non-empty"]),
    ("gravity length", lambda d: d.update(gravity=[0, -9.81]), ["gravity", "3 numbers"]),
    ("gear ratio", lambda d: d["joints"][0]["motor"].update(
        gear_ratio=0.0), ["joint1", "motor.gear_ratio", "non-zero"]),
    ("rotor", lambda d: d["joints"][0]["motor"].update(
        rotor_inertia=-1.0), ["joint1", "motor.rotor_inertia"]),
    ("friction", lambda d: d["joints"][0].update(friction={
     "viscous": -1.0}), ["joint1", "friction.viscous", ">= 0"]),
    ("friction typo", lambda d: d["joints"][0].update(
        friction={"viscos": 1.0}), ["joint1", "friction", "viscos"]),
    ("offset not a number", lambda d: d["joints"][0].update(
        friction={"offset": "0.3 Nm"}), ["joint1", "friction.offset", "must be a number"]),
    ("offset out of range", lambda d: d["joints"][0].update(
        friction={"offset": -1e12}), ["joint1", "friction.offset", "out of range"]),
    ("payload", lambda d: d.update(payload={"mass": -2.0, "com": [0, 0, 0],
                                            "inertia": {"ixx": 0, "iyy": 0, "izz": 0}}),
     ["payload.mass", ">= 0"]),
    ("bad angle expr", lambda d: d["joints"][0]["dh"].update(
        alpha="pi/two"), ["joint1", "dh.alpha", "pi/2"]),
    ("base typo", lambda d: d.update(base={"xyz": [0, 0, 0], "rpz": [0, 0, 0]}), ["base", "rpz"]),
    ("joint not a mapping", lambda d: d["joints"].__setitem__(
        1, "joint2"), ["joints[1]", "mapping", "str"]),
    ("joints not a list", lambda d: d.update(joints={"joint1": {}}), ["joints", "list"]),
    ("dh as a list", lambda d: d["joints"][0].update(
        dh=[1.0, 0.0, 0.0, 0.0]), ["joint1", "dh", "mapping", "list"]),
    ("inertia wrongly nested",
     lambda d: d["joints"][0]["link"].update(inertia={"inertia": {"ixx": 1}}),
     ["joint1", "link.inertia", "unknown", "'inertia'"]),
    ("inertia typo", lambda d: d["joints"][1]["link"]["inertia"].update(
        ixyy=0.0), ["joint2", "link.inertia", "ixyy"]),
    ("string for a number", lambda d: d["joints"][0]["link"].update(mass="55"),
     ["joint1", "link.mass", "number", "'55'"]),
    ("huge integer", lambda d: d["joints"][0]["link"].update(
        mass=10**400), ["joint1", "link.mass", "finite"]),
    ("pi over zero", lambda d: d["joints"][0]["dh"].update(
        theta="pi/0"), ["joint1", "dh.theta", "zero"]),
    ("angle for a prismatic limit", lambda d: (d["joints"][1].update(type="prismatic"),
                                               d["joints"][1]["limits"].update(lower="-pi/2")),
     ["joint2", "limits.lower", "number"]),
    ("payload typo", lambda d: d.update(payload={"mass": 1.0, "comm": [0, 0, 0],
                                                 "inertia": {"ixx": 0, "iyy": 0, "izz": 0}}),
     ["payload", "comm", "unknown"]),
    ("payload inertia", lambda d: d.update(payload={"mass": 1.0, "com": [0, 0, 0],
                                                    "inertia": {"ixx": 1, "iyy": 0, "izz": 0}}),
     ["payload.inertia", "triangle"]),
    ("description", lambda d: d.update(description=["not", "text"]), ["description", "string"]),
    ("load friction of 1", lambda d: d["joints"][0].update(friction={"coulomb_load": 1.0}),
     ["joint1", "friction.coulomb_load", "[0, 1)", "got 1.0"]),
    ("negative load friction", lambda d: d["joints"][1].update(
        friction={"coulomb_load": -0.1}), ["joint2", "friction.coulomb_load", ">= 0"]),
    ("quadratic friction below its floor", lambda d: d["joints"][0].update(
        friction={"viscous": 1.0, "viscous_quadratic": -1.0}),
     ["joint1", "friction.viscous_quadratic", "velocity limit", "got -1.0"]),
    ("quadratic friction not a number", lambda d: d["joints"][0].update(
        friction={"viscous_quadratic": "fast"}), ["joint1", "friction.viscous_quadratic"]),
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


@pytest.mark.parametrize("text, fragments", [
    ("", ["empty"]),
    ("# only a comment\n", ["empty"]),
    ("- name: planar2\n- joints: []\n", ["robot", "mapping", "list"]),
    ("just a string\n", ["robot", "mapping", "str"]),
])
def test_yaml_that_is_not_a_robot_mapping(tmp_path, text, fragments):
    path = tmp_path / "odd.yaml"
    path.write_text(text)
    with pytest.raises(RobotDescriptionError) as info:
        RobotModel.from_yaml(path)
    assert str(info.value).startswith(f"{path}: ")
    for fragment in fragments:
        assert fragment in str(info.value)


def test_a_repeated_key_is_an_error_not_silently_overwritten(tmp_path):
    text = yaml.safe_dump(planar_dict(), sort_keys=False).replace(
        "  link:\n    mass: 55.0\n", "  link:\n    mass: 55.0\n    mass: 5.0\n")
    assert "mass: 5.0" in text
    path = tmp_path / "twice.yaml"
    path.write_text(text)
    with pytest.raises(RobotDescriptionError, match=r"(?s)twice.yaml: .*duplicate key 'mass'"):
        RobotModel.from_yaml(path)


def test_exponent_floats_and_unicode_names_in_files(tmp_path):
    """
    Unquoted 2e-4 and 5.5e1 are numbers (YAML 1.2, JSON), quoted numbers are rejected.

    YAML 1.1 reads the unquoted forms as text; quoted numbers stay text.
    """
    data = planar_dict()
    data["joints"][0]["name"] = "épaule_肩"
    text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    text = text.replace("rotor_inertia: 0.01",
                        "rotor_inertia: 1e-2").replace("mass: 50.0", "mass: 5e1")
    assert "1e-2" in text and "5e1" in text
    path = tmp_path / "exp.yaml"
    path.write_text(text, encoding="utf-8")
    model = RobotModel.from_yaml(path)
    assert model.rotor_inertia[0] == 0.01 and model.mass[1] == 50.0
    assert model.joint_names[0] == "épaule_肩"
    path.write_text(text.replace("mass: 5e1", "mass: '5e1'"), encoding="utf-8")
    with pytest.raises(RobotDescriptionError,
                       match=r"joint2.*link.mass: must be a number, got str"):
        RobotModel.from_yaml(path)


def test_numpy_scalars_are_numbers():
    data = planar_dict()
    data["joints"][0]["link"]["mass"] = np.float32(55.0)
    data["joints"][1]["dh"]["a"] = np.int64(1)
    model = RobotModel.from_dict(data)
    assert model.mass[0] == 55.0 and model.dh_a[1] == 1.0
    assert RobotModel.named("puma560").with_payload(
        np.int64(2), np.array([0, 0, 1])).mass[-1] > 2.0


@pytest.mark.parametrize("label, inertia", [
    ("point mass", {"ixx": 0.0, "iyy": 0.0, "izz": 0.0}),
    ("thin rod along x", {"ixx": 0.0, "iyy": 0.8, "izz": 0.8}),
    ("thin disc in the x-y plane (I1 + I2 = I3)", {"ixx": 0.25, "iyy": 0.25, "izz": 0.5}),
    ("thin plate (I1 + I2 = I3, floats that do not add exactly)",
     {"ixx": 0.1, "iyy": 0.2, "izz": 0.3}),
    ("rod along (1, 1, 0), rotated tensor", {"ixx": 0.5, "iyy": 0.5, "izz": 1.0, "ixy": -0.5}),
    ("rod along (1, 1, 1)", {"ixx": 2 / 3, "iyy": 2 / 3,
     "izz": 2 / 3, "ixy": -1 / 3, "ixz": -1 / 3, "iyz": -1 / 3}),
])
def test_degenerate_but_physical_inertias_are_accepted(label, inertia):
    """Bodies at the boundary of physical consistency are real bodies and must pass."""
    tensor = np.array([[inertia.get("ixx", 0), inertia.get("ixy", 0), inertia.get("ixz", 0)],
                       [inertia.get("ixy", 0), inertia.get("iyy", 0), inertia.get("iyz", 0)],
                       [inertia.get("ixz", 0), inertia.get("iyz", 0), inertia.get("izz", 0)]])
    principal = np.linalg.eigvalsh(tensor)
    # really on the boundary
    assert principal[0] > -1e-12 and principal[0] + principal[1] > principal[2] - 1e-12
    data = planar_dict()
    data["joints"][1]["link"]["inertia"] = inertia
    model = RobotModel.from_dict(data)
    np.testing.assert_allclose(model.inertia[1], tensor, atol=1e-15)


@pytest.mark.parametrize("inertia, problem", [
    # a rod whose moments do not match
    ({"ixx": 0.0, "iyy": 0.8, "izz": 0.81}, "triangle"),
    ({"ixx": 0.5, "iyy": 0.5, "izz": 1.0, "ixy": -0.51}, "semi-definite"),
])
def test_just_unphysical_inertias_are_rejected(inertia, problem):
    """Strict: refused; by default: accepted with one warning naming the link, by how much."""
    data = planar_dict()
    data["joints"][1]["link"]["inertia"] = inertia
    with pytest.raises(RobotDescriptionError, match=f"joint2.*link.inertia.*{problem}"):
        RobotModel.from_dict(data, "robot.yaml", strict_inertia=True)
    with pytest.warns(UserWarning, match=f"joint2.*link.inertia.*{problem}.*% of"):
        assert RobotModel.from_dict(data, "robot.yaml").n == 2


def test_pi_expressions_and_defaults():
    data = planar_dict()
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
    for field in dataclasses.fields(model.chain):
        array = getattr(model.chain, field.name)
        assert not array.flags.writeable, field.name
    before = copy.deepcopy(model.to_dict())
    attributes = set(vars(model))
    model.with_payload(2.0, [0, 0, 0.1])
    model.rigid()
    q = np.full(6, 0.3)
    rnea(model, q, q, q)
    rnea(model, np.tile(q, (3, 1)), np.tile(q, (3, 1)), np.tile(q, (3, 1)))
    mass_matrix(model, q)
    forward_dynamics(model, q, q, q)
    coriolis_matrix(model, q, q)
    assert model.to_dict() == before
    assert set(vars(model)) == attributes          # no caches or other state stored on the model


def test_payload_is_validated_and_replaced():
    model = RobotModel.named("puma560")
    with pytest.raises(RobotDescriptionError, match="payload.mass"):
        model.with_payload(-1.0)
    with pytest.raises(RobotDescriptionError, match="payload.com: must be a list of 3 numbers"):
        model.with_payload(1.0, 0.1)
    with pytest.raises(ValueError, match="symmetric"):
        model.with_payload(1.0, [0, 0, 0], [[1, 0, 0], [0, 1, 0], [0.1, 0, 1]])
    heavy = model.with_payload(3.0, [0, 0, 0.05]).with_payload(1.0, [0, 0, 0.05])
    assert heavy.mass[-1] == pytest.approx(model.mass[-1] + 1.0)


def test_puma560_data_follow_armstrong_corke():
    """
    The Puma 560 file is Corke's mdl_puma560 with the file's documented conversions.

    mdl_puma560: motor-side Jm, G, B, Tc+/-; Armstrong et al. link data.  Conversions:
    viscous = B G^2, coulomb = |G| mean(|Tc+|, |Tc-|) on the joint side.
    """
    puma = RobotModel.named("puma560")
    G = np.array([-62.6111, 107.815, -53.7063, 76.0364, 71.923, 76.686])
    B = np.array([1.48e-3, 0.817e-3, 1.38e-3, 71.2e-6, 82.6e-6, 36.7e-6])
    Tc = np.array([[0.395, -0.435], [0.126, -0.071], [0.132, -0.105],
                   [11.2e-3, -16.9e-3], [9.26e-3, -14.5e-3], [3.96e-3, -10.5e-3]])
    np.testing.assert_allclose(puma.gear_ratio, G)
    np.testing.assert_allclose(puma.rotor_inertia, [200e-6] * 3 + [33e-6] * 3)
    np.testing.assert_allclose(puma.viscous, B * G**2, rtol=2e-5)       # file: 6 digits
    np.testing.assert_allclose(puma.coulomb, np.abs(G) * np.abs(Tc).mean(axis=1), rtol=1e-5)
    np.testing.assert_allclose(puma.mass, [0.0, 17.4, 4.8, 0.82, 0.34, 0.09])
    np.testing.assert_allclose(puma.dh_a, [0, 0.4318, 0.0203, 0, 0, 0])
    np.testing.assert_allclose(puma.dh_d, [0, 0, 0.15005, 0.4318, 0, 0])
    np.testing.assert_allclose(puma.dh_alpha, np.array([1, 0, -1, 1, -1, 0]) * np.pi / 2)
    np.testing.assert_allclose(np.degrees(puma.lower),
                               [-160, -45, -225, -110, -100, -266], atol=1e-3)
    np.testing.assert_allclose(np.degrees(puma.upper), [160, 225, 45, 170, 100, 266], atol=1e-3)
    # Published diagonal inertias, except the two documented physical-consistency changes.
    published = np.array([[0, 0.35, 0], [0.13, 0.524, 0.539], [0.066, 0.086, 0.0125],
                          [1.8e-3, 1.3e-3, 1.8e-3], [0.3e-3, 0.4e-3, 0.3e-3],
                          [0.15e-3, 0.15e-3, 0.04e-3]])
    diagonal = np.diagonal(puma.inertia, axis1=1, axis2=2)
    np.testing.assert_allclose(diagonal[[1, 3, 4, 5]], published[[1, 3, 4, 5]])
    assert diagonal[0, 1] == 0.35 and diagonal[2, 1:].tolist() == [0.086, 0.0125]
    assert diagonal[2, 0] + diagonal[2, 2] >= diagonal[2, 1] > published[2, 0] + published[2, 2]


def test_panda_follows_franka_documentation_and_gaz():
    """Franka's modified-DH table, limits and the link masses of Gaz et al. (2019)."""
    panda = RobotModel.named("panda")
    np.testing.assert_allclose(panda.dh_a, [0, 0, 0, 0.0825, -0.0825, 0, 0.088])
    np.testing.assert_allclose(panda.dh_d, [0.333, 0, 0.316, 0, 0.384, 0, 0])
    np.testing.assert_allclose(panda.dh_alpha, np.array([0, -1, 1, 1, -1, 1, 1]) * np.pi / 2)
    np.testing.assert_allclose(panda.tool[:3, 3], [0, 0, 0.107])
    np.testing.assert_allclose(
        panda.upper, [2.8973, 1.7628, 2.8973, -0.0698, 2.8973, 3.7525, 2.8973])
    np.testing.assert_allclose(
        panda.lower, [-2.8973, -1.7628, -2.8973, -3.0718, -2.8973, -0.0175, -2.8973])
    np.testing.assert_allclose(panda.velocity_limit, [2.175] * 4 + [2.61] * 3)
    np.testing.assert_allclose(panda.effort_limit, [87] * 4 + [12] * 3)
    np.testing.assert_allclose(
        panda.mass, [4.970684, 0.646926, 3.228604, 3.587895, 1.225946, 1.666555, 0.735522])


def test_joint_offset_e_in_modified_dh_files():
    """
    A modified-DH row may carry e: O_i = Rx(alpha) (a, e, d) in frame i-1 (model.Chain).

    Zero is plain DH (not kept in the normalised description); a standard-DH row refuses it,
    naming the joint.  The offset moves the joint's origin along y of Rx(alpha): the tool pose
    moves by exactly that.
    """
    data = RobotModel.named("renaud6r").to_dict()
    data["joints"][2]["dh"]["e"] = 0.0
    assert "e" not in RobotModel.from_dict(data).to_dict()["joints"][2]["dh"]
    base = RobotModel.from_dict(data)
    data["joints"][2]["dh"]["e"] = 0.25
    model = RobotModel.from_dict(data)
    assert model.to_dict()["joints"][2]["dh"]["e"] == 0.25 and model.dh_e[2] == 0.25
    assert RobotModel.from_dict(model.to_dict()).chain.p_prev.tolist() == \
        model.chain.p_prev.tolist()
    alpha = model.dh_alpha[2]
    frame = base.chain.base @ internal_frames(base, np.zeros(model.n))[1]
    shift = frame[:3, :3] @ np.array([0.0, 0.25 * np.cos(alpha), 0.25 * np.sin(alpha)])
    q = np.zeros(model.n)
    np.testing.assert_allclose(tool_pose(model, q)[:3, 3] - tool_pose(base, q)[:3, 3], shift,
                               atol=1e-15)
    standard = RobotModel.named("puma560").to_dict()
    standard["joints"][1]["dh"]["e"] = 0.1
    message = _error(standard)
    assert "joints[1]" in message and "dh.e" in message and "modified only" in message


def test_further_friction_terms_load_and_files_without_them_load_as_before():
    """F_v2, F_l: read where given (F_v2 down to -F_v / (2 v_max)); absent: nothing changes."""
    data = planar_dict()
    plain = RobotModel.from_dict(data)
    assert all(set(j["friction"]) == {"viscous", "coulomb", "offset"}
               for j in plain.to_dict()["joints"])
    assert not plain.has_extra_friction and np.all(plain.viscous_quadratic == 0.0)
    velocity = data["joints"][0]["limits"]["velocity"]
    data["joints"][0]["friction"] = {"viscous": 2.0, "viscous_quadratic": -1.0 / velocity,
                                     "coulomb_load": 0.25}
    model = RobotModel.from_dict(data)
    assert model.has_extra_friction and model.has_friction
    assert model.viscous_quadratic[0] == -1.0 / velocity and model.coulomb_load[0] == 0.25
    assert model.without_friction().has_extra_friction is False
