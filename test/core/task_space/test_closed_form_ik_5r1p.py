"""Closed-form inverse kinematics of the 5R-1P arm (Asada & Slotine 1986, eqs. 2-42 - 2-63)."""

import numpy as np
import pytest

from ik_checks import pose_errors
from robot_dynamics_ros.core import InfeasibleError, InputError, RobotModel, tool_pose
from robot_dynamics_ros.core.task_space import closed_form_ik_5r1p


def _difference(solutions, q):
    """Return solutions - q with the angles wrapped (column 2 is the prismatic d3)."""
    d = np.angle(np.exp(1j * (solutions - q)))
    d[..., 2] = solutions[..., 2] - q[2]
    return d


# ------------------------------------------------------------------------------ closed form
def test_closed_form_5r1p_gives_the_four_solutions_of_the_seed():
    model = RobotModel.named("asada_5r1p")
    q = np.array([0.3, 0.7, 0.8, 0.4, 0.6, -0.5])
    solutions = closed_form_ik_5r1p(model, tool_pose(model, q))
    expected = np.array([[0.3, 0.7, 0.8, 0.4, 0.6, -0.5],
                         [0.3, 0.7, 0.8, 3.5415926536, -0.6, 2.6415926536],
                         [-2.4582880659, -0.7, 0.8, 2.8775113491, 0.5829169706, -0.0572454995],
                         [-2.4582880659, -0.7, 0.8, 6.0191040027, -0.5829169706, 3.0843471541]])
    assert len(solutions.q) == 4
    for row in expected:
        assert np.abs(_difference(solutions.q, row)).max(axis=1).min() < 1e-9
    assert solutions.within_limits.all()


def test_closed_form_5r1p_round_trips_with_base_and_tool():
    data = RobotModel.named("asada_5r1p").to_dict()
    data["base"] = {"xyz": [0.1, -0.2, 0.3], "rpy": [0.2, -0.1, 0.4]}
    data["tool"] = {"xyz": [0.0, 0.02, 0.05], "rpy": [0.1, 0.0, -0.3]}
    model = RobotModel.from_dict(data)
    rng = np.random.default_rng(0)
    for _ in range(20):
        q = rng.uniform(model.lower, model.upper)
        target = tool_pose(model, q)
        solutions = closed_form_ik_5r1p(model, target)
        assert 2 <= len(solutions.q) <= 4
        for qs in solutions.q:
            p_err, o_err = pose_errors(model, qs, target)
            assert p_err < 1e-12 and o_err < 1e-10
        # the configuration we started from is one of them
        assert np.abs(_difference(solutions.q, q)).max(axis=1).min() < 1e-9


def test_closed_form_5r1p_errors():
    model = RobotModel.named("asada_5r1p")
    target = np.eye(4)
    target[:3, 3] = [0.0, 0.0, 0.5]              # wrist point on joint 1's axis: closer than l1
    with pytest.raises(InfeasibleError, match="out of reach.*closer than l1 = 0.1"):
        closed_form_ik_5r1p(model, target)
    with pytest.raises(InputError, match="not the 5-R-1-P arm"):
        closed_form_ik_5r1p(RobotModel.named("puma560"), target)
