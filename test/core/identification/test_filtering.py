"""Velocities and accelerations estimated from noisy sampled positions."""

import numpy as np
import pytest

from identification_data import multisine
from robot_dynamics_ros.core import InputError, RobotModel
from robot_dynamics_ros.core.identification import derivatives


# -- identification ------------------------------------------------------------------------------
PUMA = RobotModel.named("puma560")


# -- filtering -----------------------------------------------------------------------------------
def test_derivatives_from_noisy_positions():
    fs, t = 1000.0, np.arange(0.0, 20.0, 1e-3)
    q, qd, qdd = multisine(PUMA, t, np.random.default_rng(8))
    noisy = q + np.random.default_rng(9).normal(size=q.shape) * 1e-4
    inner = slice(2000, -2000)
    for method in ("butterworth", "savgol"):
        d = derivatives(t, noisy, method=method)
        # the motion's highest harmonic is 0.5 Hz; the cut-off lies above it and far below fs/2
        assert 0.5 < d.cutoff < 5.0 and d.sample_rate == pytest.approx(fs)
        assert np.abs(d.qd[inner] - qd[inner]).max() < 0.01 * np.abs(qd).max()
        assert np.abs(d.qdd[inner] - qdd[inner]).max() < 0.02 * np.abs(qdd).max()
    with pytest.raises(InputError, match="not increasing"):
        derivatives(t[::-1], q)
