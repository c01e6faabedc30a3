"""The source texts' formulations on models imported from URDF (link frames, continuous joints)."""

import numpy as np
import pytest

from generated_checks import random_states
from robot_dynamics_ros.core import RobotModel, rnea
from robot_dynamics_ros.core.formulations import FORMULATIONS
from urdf_samples import random_urdf, relative_error


@pytest.mark.parametrize("name", sorted(FORMULATIONS))
def test_formulations_on_a_urdf_model(name):
    types = ("revolute", "continuous") + (() if name == "dalembert" else ("prismatic",))
    sample = random_urdf(np.random.default_rng(9), n=5, types=types)
    model = RobotModel.from_urdf(sample.text, tip_link="tool")
    for q, qd, qdd in random_states(model, np.random.default_rng(2), count=2):
        expected = rnea(model.rigid(), q, qd, qdd)
        tau = FORMULATIONS[name].inverse_dynamics(model, q, qd, qdd)
        assert relative_error(tau, expected) <= 1e-10
