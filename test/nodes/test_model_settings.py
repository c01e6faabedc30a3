"""ModelSettings: payload and gravity parameters put on the robot as a whole, validated."""
import numpy as np
import pytest

from robot_dynamics_ros.core import RobotDescriptionError, RobotModel, gravity_torques, rnea
from robot_dynamics_ros.nodes.model_settings import ModelSettings

MODEL = RobotModel.named("puma560")


def test_unset_values_are_the_robot_files():
    own = ModelSettings.from_values({"gravity": None, "payload.mass": None}, MODEL)
    assert own == ModelSettings.of_model(MODEL)
    assert own.applied_to(MODEL) is MODEL                     # nothing to rebuild
    assert own.parameter_values()["gravity"] == MODEL.gravity.tolist()


def test_gravity_is_the_root_frame_vector_of_every_algorithm():
    q = np.array([0.3, -0.4, 0.9, 0.1, -0.2, 0.5])
    g = (0.0, 9.81 / np.sqrt(2), -9.81 / np.sqrt(2))
    model = ModelSettings.from_values({"gravity": list(g)}, MODEL).applied_to(MODEL)
    np.testing.assert_array_equal(model.gravity, g)
    # g(q) is linear in the gravity vector: the sum of the parts along y and z
    along_y = ModelSettings.from_values({"gravity": [0.0, 1.0, 0.0]}, MODEL).applied_to(MODEL)
    along_z = ModelSettings.from_values({"gravity": [0.0, 0.0, 1.0]}, MODEL).applied_to(MODEL)
    np.testing.assert_allclose(gravity_torques(model, q),
                               g[1] * gravity_torques(along_y, q)
                               + g[2] * gravity_torques(along_z, q), atol=1e-10)
    zero = np.zeros(6)
    np.testing.assert_allclose(rnea(model, q, zero, zero), gravity_torques(model, q), atol=1e-12)


def test_payload_and_gravity_together_and_refusals_name_the_parameter():
    settings = ModelSettings.from_values({"payload.mass": 2.0, "payload.com": [0.0, 0.0, 0.1],
                                          "gravity": [9.81, 0.0, 0.0]}, MODEL)
    model = settings.applied_to(MODEL)
    assert model.payload["mass"] == 2.0 and model.gravity.tolist() == [9.81, 0.0, 0.0]
    with pytest.raises(RobotDescriptionError, match="gravity: expected 3 values"):
        ModelSettings.from_values({"gravity": [1.0, 2.0]}, MODEL).applied_to(MODEL)
    with pytest.raises(RobotDescriptionError, match="gravity"):
        ModelSettings.from_values({"gravity": [np.inf, 0.0, 0.0]}, MODEL).applied_to(MODEL)
    with pytest.raises(RobotDescriptionError, match="payload"):
        ModelSettings.from_values({"payload.mass": -1.0}, MODEL).applied_to(MODEL)
