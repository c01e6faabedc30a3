"""The drive coupling of a robot file: read, validated with the field named, kept by to_dict."""
import copy

import numpy as np
import pytest
import yaml

from coupled_wrist import wrist
from robot_dynamics_ros.core import RobotModel
from robot_dynamics_ros.core.errors import RobotDescriptionError


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


def test_further_friction_on_a_coupled_drive_is_refused():
    spec = wrist()
    spec["joints"][1]["friction"]["viscous_quadratic"] = 0.01
    with pytest.raises(RobotDescriptionError, match=r"joints\[1\] \(joint6\)\.friction\."
                                                    r"viscous_quadratic: is not supported"):
        RobotModel.from_dict(spec)
    # on the drive that moves its joint alone (row (1, 0)), it is accepted
    spec = copy.deepcopy(wrist())
    spec["joints"][0]["friction"]["viscous_quadratic"] = 0.01
    assert RobotModel.from_dict(spec).has_extra_friction
