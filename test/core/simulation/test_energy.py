"""Energy conservation of the unforced frictionless simulation."""

import numpy as np
import pytest

from robot_dynamics_ros.core import RobotModel, shipped_robots, simulate
from robot_dynamics_ros.core.simulation import kinetic_energy, mechanical_energy

FREE = {"joint_limits": False, "effort_limits": False}


@pytest.mark.parametrize("name", shipped_robots())
def test_unforced_frictionless_rk4_conserves_energy(name):
    model = RobotModel.named(name).without_friction()
    rng = np.random.default_rng(1)
    q0, qd0 = 0.5 * rng.uniform(model.lower, model.upper), rng.uniform(-1.0, 1.0, model.n)
    run = simulate(model, q0, qd0, 1.0, **FREE)
    energy = mechanical_energy(model, run.q, run.qd)
    scale = max(1.0, kinetic_energy(model, run.q, run.qd).max())
    assert np.ptp(energy) < 1e-6 * scale
    # the motion is not trivial: energy moves between kinetic and potential
    assert np.ptp(kinetic_energy(model, run.q, run.qd)) > 1e-3 * scale
