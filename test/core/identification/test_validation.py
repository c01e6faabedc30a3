"""Held-out shares and the per-joint validation report (validation.py)."""

import numpy as np

from identification_data import multisine
from robot_dynamics_ros.core import RobotModel, rnea
from robot_dynamics_ros.core.identification.filtering import IdentificationData
from robot_dynamics_ros.core.identification.validation import (BLOCKS, holdout_mask,
                                                               validation_report)


def test_holdout_is_the_end_of_each_block_of_time():
    t = np.linspace(0.0, 100.0, 10001)
    held = holdout_mask(t, 0.2)
    assert abs(held.mean() - 0.2) < 0.002
    # BLOCKS stretches, each ending in a held-out run: 2 * BLOCKS - 1 switches
    assert np.count_nonzero(np.diff(held.astype(int))) == 2 * BLOCKS - 1
    assert held[-1] and not held[0]
    # jittered stamps and a subset of samples: the same blocks of time
    subset = np.sort(np.random.default_rng(1).choice(t, 3000, replace=False))
    assert np.array_equal(holdout_mask(subset, 0.2, 0.0, 100.0), holdout_mask(t, 0.2)[
        np.searchsorted(t, subset)])
    assert not holdout_mask(t, 0.0).any()


def test_report_is_what_the_models_predict():
    puma = RobotModel.named("puma560")
    q, qd, qdd = multisine(puma, np.linspace(0.0, 10.0, 200), np.random.default_rng(2))
    tau = rnea(puma, q, qd, qdd) + 0.5
    data = IdentificationData(np.zeros(200), q, qd, qdd, tau, 1.0, 100.0, 1)
    report = validation_report("check", puma.rigid(), puma, data)
    expected_after = np.full(6, 0.5)
    assert np.allclose(report.after_rms, expected_after, rtol=1e-12)
    before = np.sqrt(np.mean((tau - rnea(puma.rigid(), q, qd, qdd)) ** 2, axis=0))
    assert np.allclose(report.before_rms, before, rtol=1e-12)
    assert np.allclose(report.relative, 0.5 / np.sqrt(np.mean(tau ** 2, axis=0)))
    assert np.allclose(report.improvement, before / 0.5)
    text = report.table()
    assert "check (200 samples)" in text and "joint6" in text and "x" in text
