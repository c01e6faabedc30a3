"""The drive coupling of a robot file: read, validated with the field named, kept by to_dict."""
import copy

import numpy as np
import pytest
import yaml

from coupled_wrist import wrist
from robot_dynamics_ros.core import RobotModel, rnea
from robot_dynamics_ros.core.errors import RobotDescriptionError
from robot_dynamics_ros.core.model.dh_description import (modified_dh_description,
                                                          robot_yaml_text)
from robot_dynamics_ros.core.model.urdf_export import urdf_text


def test_matrix_is_placed_on_the_named_joints():
    spec = wrist()
    spec["coupling"] = {"joints": ["joint6", "joint5"], "matrix": [[1, 1], [0, 1]]}
    model = RobotModel.from_dict(spec)
    # rows and columns in the order of coupling.joints: joint6's drive turns with both
    assert np.array_equal(model.coupling, [[1.0, 0.0], [1.0, 1.0]])
    assert model.coupled_drives == (1,)
    again = RobotModel.from_dict(model.to_dict())
    assert np.array_equal(again.coupling, model.coupling)


def test_identity_block_couples_nothing():
    spec = wrist()
    spec["coupling"]["matrix"] = [[1, 0], [0, 1]]
    model = RobotModel.from_dict(spec)
    assert not model.has_coupling


BAD = [
    ({"joints": ["joint5", "wrist9"]}, "coupling.joints: unknown joint(s) ['wrist9']"),
    ({"joints": ["joint5", "joint5"]}, "coupling.joints: joint(s) ['joint5'] listed more"),
    ({"joints": "joint5"}, "coupling.joints: must be a non-empty list"),
    ({"matrix": [[1, 0, 0], [1, 1, 0]]}, "coupling.matrix: must be a square 2 x 2"),
    ({"matrix": [[1, 0], [1]]}, "coupling.matrix: must be a square 2 x 2"),
    ({"matrix": [[1, 0], [1, ".nan"]]}, "coupling.matrix[1][1]: must be a number"),
    ({"matrix": [[1, 0], [1, float("inf")]]}, "coupling.matrix[1][1]: must be finite"),
    ({"matrix": [[1, 1], [1, 1]]}, "coupling.matrix: must be invertible"),
    ({"matrix": [[1, 0], [1e4, 1]]}, "coupling.matrix[1][0]: 10000 is out of range"),
    ({"gear": 3}, "coupling: unknown key(s) ['gear']"),
]


@pytest.mark.parametrize("change, message", BAD)
def test_bad_coupling_is_refused_naming_file_and_field(tmp_path, change, message):
    spec = wrist()
    spec["coupling"].update(change)
    path = tmp_path / "wrist.yaml"
    path.write_text(yaml.safe_dump(spec))
    with pytest.raises(RobotDescriptionError) as error:
        RobotModel.from_yaml(path)
    assert str(error.value).startswith(f"{path}: ")
    assert message in str(error.value)


def test_load_dependent_friction_on_a_coupled_drive_is_refused():
    spec = wrist()
    spec["joints"][1]["friction"]["coulomb_load"] = 0.01
    with pytest.raises(RobotDescriptionError, match=r"joints\[1\] \(joint6\)\.friction\."
                                                    r"coulomb_load: is not supported"):
        RobotModel.from_dict(spec)
    # on the drive that moves its joint alone (row (1, 0)), it is accepted; F_v2 on both
    # (drive 6's on its velocity qd5 + qd6: test/core/algorithms/test_coupled_friction_terms.py)
    spec = copy.deepcopy(wrist())
    spec["joints"][0]["friction"]["coulomb_load"] = 0.01
    spec["joints"][1]["friction"]["viscous_quadratic"] = 0.01
    assert RobotModel.from_dict(spec).has_extra_friction


def test_urdf_extension_round_trip():
    model = RobotModel.from_dict(wrist())
    text = urdf_text(model)
    assert '<robot_dynamics:coupling joints="joint5 joint6" matrix="1.0 0.0  1.0 1.0"/>' in text
    again = RobotModel.from_urdf(text)
    assert np.array_equal(again.coupling, model.coupling)
    rng = np.random.default_rng(2)
    q, qd, qdd = rng.normal(size=(3, 10, 2))
    assert np.allclose(rnea(again, q, qd, qdd), rnea(model, q, qd, qdd), rtol=1e-12,
                       atol=1e-12)
    assert "robot_dynamics:coupling" not in urdf_text(RobotModel.from_dict(wrist(False)))


URDF_BAD = [
    ('joints="joint5 joint6" matrix="1 0 1"', "<robot_dynamics:coupling matrix> (rows of a "
                                              "square matrix"),
    ('matrix="1"', "<robot_dynamics:coupling joints>: missing"),
    ('joints="joint5 joint6" matrix="1 0 1 nan"', "must be finite"),
    ('joints="joint5 joint7" matrix="1 0 1 1"', "coupling joints>: unknown joint(s) ['joint7']"),
    ('joints="joint5 joint6" matrix="1 1 1 1"', "coupling.matrix: must be invertible"),
]


@pytest.mark.parametrize("attributes, message", URDF_BAD)
def test_bad_urdf_coupling_is_refused(tmp_path, attributes, message):
    text = urdf_text(RobotModel.from_dict(wrist(False))).replace(
        '<link name="base_link">', f"<robot_dynamics:coupling {attributes}/>\n"
                                   '  <link name="base_link">')
    path = tmp_path / "wrist.urdf"
    path.write_text(text)
    with pytest.raises(RobotDescriptionError) as error:
        RobotModel.from_urdf(str(path))
    assert str(path) in str(error.value) and message in str(error.value)


def test_urdf_coupling_must_lie_in_the_chain():
    text = urdf_text(RobotModel.from_dict(wrist()))
    with pytest.raises(RobotDescriptionError, match=r"joints \['joint5'\] are in the chain .* "
                                                    r"\['joint6'\] are not"):
        RobotModel.from_urdf(text, tip_link="link1")


def test_written_robot_files_keep_the_coupling(tmp_path):
    # what `convert` and `identify -o` write (robot_yaml_text), and the modified-DH form
    model = RobotModel.from_dict(wrist())
    for spec in (model.to_dict(), modified_dh_description(model)):
        path = tmp_path / "wrist.yaml"
        path.write_text(robot_yaml_text(spec))
        again = RobotModel.from_yaml(path)
        assert np.array_equal(again.coupling, model.coupling)
        q = np.array([[0.2, -0.4], [1.0, 2.0]])
        assert np.allclose(rnea(again, q, q, q), rnea(model, q, q, q), rtol=1e-12, atol=1e-12)
