"""Effort limits: clamp / warn / off, counted per joint; unknown limits refused for clamp."""

import math

import numpy as np
import pytest

from robot_dynamics_ros.core import InputError, RobotModel
from robot_dynamics_ros.core.control import (EffortLimiter, effective_limits,
                                             unknown_effort_limits)

NAMES = ("a", "b", "c")
LIMITS = [10.0, 5.0, 2.0]


def test_clamp_never_exceeds_and_counts_per_joint():
    limiter = EffortLimiter(LIMITS, NAMES, "clamp")
    assert limiter.apply([9.0, -5.0, 2.0]) == [9.0, -5.0, 2.0]          # at the limit: fine
    assert limiter.apply([11.0, -6.0, 1.0]) == [10.0, -5.0, 1.0]
    assert limiter.apply([0.0, 0.0, -3.0]) == [0.0, 0.0, -2.0]
    report = limiter.report()
    assert report.counts == {"a": 1, "b": 1, "c": 1} and report.new == 3
    assert report.worst_joint == "c" and report.worst_ratio == pytest.approx(1.5)
    again = limiter.report()                          # a new interval: counts kept, worst reset
    assert again.new == 0 and again.worst_ratio == 0.0 and again.worst_joint == ""
    assert again.counts == report.counts


def test_warn_publishes_as_computed_and_counts_off_counts_nothing():
    warn = EffortLimiter(LIMITS, NAMES, "warn")
    assert warn.apply([11.0, 0.0, -4.0]) == [11.0, 0.0, -4.0]
    assert warn.report().counts == {"a": 1, "b": 0, "c": 1}
    off = EffortLimiter(LIMITS, NAMES, "off")
    assert off.apply([110.0, 0.0, -40.0]) == [110.0, 0.0, -40.0]
    assert off.report().new == 0


def test_array_path_equals_list_path():
    rng = np.random.default_rng(0)
    tau = rng.normal(scale=8.0, size=(200, 3))
    rows, arrays = EffortLimiter(LIMITS, NAMES), EffortLimiter(LIMITS, NAMES)
    listed = [rows.apply(t) for t in tau.tolist()]
    np.testing.assert_array_equal(arrays.apply_array(tau), listed)
    a, b = rows.report(), arrays.report()
    assert a.counts == b.counts and a.new == b.new and a.worst_ratio == b.worst_ratio
    assert (np.abs(arrays.apply_array(tau)) <= LIMITS).all()


def test_non_finite_torque_is_left_for_the_output_check():
    limiter = EffortLimiter(LIMITS, NAMES)
    out = limiter.apply([math.nan, 1.0, 3.0])
    assert math.isnan(out[0]) and out[2] == 2.0 and limiter.report().counts["a"] == 0


def _urdf_model(effort_b: str):
    text = f"""<robot name="two"><link name="base"/><link name="l1">
      <inertial><mass value="1"/><origin xyz="0.1 0 0"/>
      <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <link name="l2"><inertial><mass value="1"/><origin xyz="0.1 0 0"/>
      <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <joint name="a" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
      <limit lower="-3" upper="3" velocity="2" effort="40"/></joint>
      <joint name="b" type="revolute"><parent link="l1"/><child link="l2"/><axis xyz="0 1 0"/>
      <origin xyz="0.3 0 0"/><limit lower="-3" upper="3" velocity="2" {effort_b}/></joint>
      </robot>"""
    return RobotModel.from_urdf(text)


def test_clamp_refuses_an_unknown_limit_naming_the_joint_unless_given():
    model = _urdf_model('effort="0"')                 # 0: "not specified" (an unknown limit)
    assert model.unknown_limits == {"b": ("effort",)}
    assert unknown_effort_limits(model) == ["b"]
    with pytest.raises(InputError, match="joint 'b'.*unknown.*effort_limits parameter"):
        EffortLimiter(effective_limits(model), model.joint_names, "clamp")
    given = [0.0, 25.0]                               # 0: the model's own limit
    assert unknown_effort_limits(model, given) == []
    limiter = EffortLimiter(effective_limits(model, given), model.joint_names, "clamp")
    np.testing.assert_array_equal(limiter.limits, [40.0, 25.0])
    warn = EffortLimiter(effective_limits(model), model.joint_names, "warn")
    assert warn.unchecked == ("b",) and warn.apply([1.0, 1e6]) == [1.0, 1e6]


@pytest.mark.parametrize("args, words", [
    ((LIMITS, NAMES, "saturate"), "effort_limit_policy: 'saturate' is not one of"),
    (([1.0, 2.0], NAMES, "clamp"), "2 values for 3 joints"),
    (([1.0, math.inf, 2.0], NAMES, "clamp"), "joint 'b'"),
])
def test_bad_limiter_settings_are_refused_by_name(args, words):
    with pytest.raises(InputError, match=words):
        EffortLimiter(*args)


def test_unknown_means_absent_zero_or_not_finite():
    """What the model loader gives for a URDF without a usable limit: NaN (absent), 0 or inf."""
    from types import SimpleNamespace
    model = SimpleNamespace(joint_names=("a", "b", "c", "d"),
                            effort_limit=np.array([40.0, math.nan, 0.0, math.inf]))
    assert unknown_effort_limits(model) == ["b", "c", "d"]
    assert unknown_effort_limits(model, [0.0, 1.0, 2.0, 0.0]) == ["d"]
    with pytest.raises(InputError, match="effort_limits: expected 4 values"):
        effective_limits(model, [1.0])
