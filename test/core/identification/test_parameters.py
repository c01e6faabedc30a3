"""Standard parameter vectors of a model, and back."""

import numpy as np
import pytest

from identification_cases import random_models
from random_robots import random_state
from robot_dynamics_ros.core import RobotModel, rnea
from robot_dynamics_ros.core.identification import (consistency_problems, model_with_parameters,
                                                    parameter_names, parameter_vector)


@pytest.mark.parametrize("model", [RobotModel.named("puma560"),
                         random_models()[3]], ids=lambda m: m.name)
def test_model_with_parameters_round_trip(model):
    pi = parameter_vector(model)
    rebuilt = model_with_parameters(model, pi)
    assert np.allclose(parameter_vector(rebuilt), pi, rtol=0, atol=1e-12)
    assert rebuilt.joint_names == model.joint_names and np.array_equal(
        rebuilt.effort_limit, model.effort_limit)
    q, qd, qdd = random_state(model, np.random.default_rng(3), batch=5)
    assert np.allclose(rnea(rebuilt, q, qd, qdd), rnea(model, q, qd, qdd), rtol=1e-12, atol=1e-10)
    assert consistency_problems(model, pi) == []
    assert len(set(parameter_names(model))) == len(parameter_names(model))
