"""
Contact from the residual: thresholds, hysteresis, and the stated detection latency.

The latency bound -ln(1 - h / |A|) / k + (one interval) is checked against the observer itself:
a static arm under a step external torque, sampled at irregular stamps, detected at the first
sample after the closed-form crossing time and never before it.
"""

import math

import numpy as np
import pytest

from robot_dynamics_ros.core import InputError, RobotModel, gravity_torques
from robot_dynamics_ros.core.observer import (ContactDetector, MomentumObserver, ObserverOptions,
                                              detection_latency)


def test_contact_rises_above_a_threshold_and_falls_below_the_release_level():
    detector = ContactDetector([2.0, 1.0], release_ratio=0.5)
    sequence = [([0.0, 0.0], False), ([1.9, -0.9], False), ([2.1, 0.0], True),
                ([1.5, 0.0], True), ([0.9, 0.6], True), ([0.9, 0.4], False),
                ([0.0, -1.2], True), ([0.0, 0.0], False)]
    for residual, expected in sequence:
        assert detector.update(residual) is expected, residual
    assert detector.rises == 2
    assert detector.above([2.5, -1.5]) == [0, 1]
    again = ContactDetector([2.0, 1.0], release_ratio=0.5)
    np.testing.assert_array_equal(again.update_many([r for r, _ in sequence]),
                                  [e for _, e in sequence])


def test_a_step_is_detected_at_the_first_sample_after_the_closed_form_crossing(rng):
    model = RobotModel.named("puma560")
    gains = np.array([50.0, 40.0, 60.0, 80.0, 70.0, 90.0])
    q = np.array([0.2, 0.5, -0.7, 0.3, 0.4, 0.1])
    g = gravity_torques(model, q)
    thresholds = 0.05 * model.effort_limit
    for joint, ratio in ((1, 1.5), (3, 3.0), (5, 10.0)):
        step = np.zeros(6)
        step[joint] = -ratio * thresholds[joint]
        observer = MomentumObserver(model, ObserverOptions(gains, effort_timing="interval",
                                                           friction=False))
        detector = ContactDetector(thresholds)
        times = np.concatenate([[0.0], np.cumsum(rng.uniform(0.3e-3, 3e-3, 400))])
        t_s = float(times[50])
        crossing = t_s - math.log(1.0 - 1.0 / ratio) / gains[joint]
        for t in times:
            tau = g - step if t > t_s else g
            contact = detector.update(observer.update(float(t), q.tolist(), [0.0] * 6,
                                                      tau.tolist()))
            assert contact == (t > crossing), (joint, t, crossing)
        interval = np.diff(times).max()
        assert detection_latency(step[joint], thresholds[joint], gains[joint], interval) == \
            pytest.approx(crossing - t_s + interval)


def test_latency_of_a_step_below_the_threshold_is_infinite():
    assert detection_latency(1.0, 1.0, 50.0) == math.inf
    assert detection_latency(2.0, 1.0, 50.0, 1e-3) == pytest.approx(math.log(2.0) / 50.0 + 1e-3)


@pytest.mark.parametrize("thresholds, ratio, match", [([], 0.5, "thresholds"),
                                                      ([1.0, 0.0], 0.5, "thresholds"),
                                                      ([1.0, np.nan], 0.5, "thresholds"),
                                                      ([1.0], 0.0, "release_ratio"),
                                                      ([1.0], 1.5, "release_ratio")])
def test_bad_settings_are_named(thresholds, ratio, match):
    with pytest.raises(InputError, match=match):
        ContactDetector(thresholds, ratio)
