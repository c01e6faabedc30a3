"""RobotModel's constructors: every description form, continuous joints and link frames in YAML."""

import warnings

import numpy as np

import pytest

from generated_checks import assert_same_robot
from robot_dynamics_ros.commands.cli import main as cli_main
from robot_dynamics_ros.core import RobotDescriptionError, RobotModel, forward_kinematics
from robot_dynamics_ros.core.model import resolve_robot_path
from robot_dynamics_ros.core.model.inertia import inertia_entries, inertia_matrix
from robot_dynamics_ros.core.transforms import pose_matrix


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
        RobotModel.from_dict(spec, strict_inertia=True)
    with pytest.warns(UserWarning,
                      match=r"joints\[0\] \(joint1\).link.inertia: physically inconsistent"):
        assert RobotModel.from_dict(spec).n == 2            # the default: a warning
    spec["accept_inconsistent_inertia"] = True             # the file's opt-in: silent, even strict
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert RobotModel.from_dict(spec, strict_inertia=True).n == 2
