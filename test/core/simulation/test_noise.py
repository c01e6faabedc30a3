"""Measurement noise: the requested statistics, reproducible."""

import numpy as np
import pytest

from robot_dynamics_ros.core import InputError, RobotModel, simulate
from robot_dynamics_ros.core.simulation import MeasurementNoise, measured


# --------------------------------------------------------------------------------- noise
def test_measurement_noise_has_the_requested_statistics_and_is_reproducible():
    model = RobotModel.named("planar2")
    run = simulate(model, [0.1, 0.2], [0.0, 0.0], 5.0)
    noisy = measured(run, position=1e-3, velocity=[1e-2, 2e-2], effort=0.5, seed=7)
    again = measured(run, position=1e-3, velocity=[1e-2, 2e-2], effort=0.5, seed=7)
    np.testing.assert_array_equal(noisy.q, again.q)
    for got, exact, std in ((noisy.q, run.q, [1e-3, 1e-3]), (noisy.qd, run.qd, [1e-2, 2e-2]),
                            (noisy.tau, run.tau, [0.5, 0.5])):
        err = got - exact
        np.testing.assert_allclose(err.std(axis=0), std, rtol=0.05)
        assert np.all(np.abs(err.mean(axis=0)) < 4 * np.array(std) / np.sqrt(len(err)))
    np.testing.assert_array_equal(noisy.qdd, run.qdd)
    with pytest.raises(InputError, match="velocity noise"):
        MeasurementNoise(2, velocity=-1.0)


def test_measured_efforts_carry_the_sensor_offset():
    model = RobotModel.named("planar2")
    run = simulate(model, [0.1, 0.2], [0.0, 0.0], 1.0)
    offset = measured(run, offset=[0.5, -0.25])
    np.testing.assert_allclose(offset.tau - run.tau, np.tile([0.5, -0.25], (len(run.t), 1)),
                               rtol=0, atol=1e-12)
    np.testing.assert_array_equal(offset.q, run.q)
