"""
core.joint_index: matching joint vectors by name, O(N), with bounded error messages.

Oracles: the index is checked by applying it (the picked values must be the wanted joints'
values); the O(N) claim is checked by counting the comparisons and hashes the matching makes on
names that count them (deterministic, unlike a timing).
"""
import numpy as np
import pytest

from robot_dynamics_ros.core import InputError, joint_index
from robot_dynamics_ros.core.joint_names import SHOWN_NAMES, inverse

from counting import CountingName

WANTED = ("j1", "j2", "j3")


def test_index_picks_the_wanted_joints_from_any_order_and_supersets():
    given = ["gripper", "j3", "j1", "j2"]
    values = np.array([9.0, 3.0, 1.0, 2.0])          # value i belongs to given[i]
    np.testing.assert_array_equal(values[joint_index(WANTED, given, "msg")], [1.0, 2.0, 3.0])


def test_exact_match_and_its_inverse():
    given = ("j2", "j3", "j1")
    index = joint_index(WANTED, given, "request", allow_extra=False)
    model_values = np.array([1.0, 2.0, 3.0])
    request_values = model_values[inverse(index)]     # model -> request order
    assert list(request_values) == [2.0, 3.0, 1.0]
    np.testing.assert_array_equal(request_values[index], model_values)


@pytest.mark.parametrize("given, allow_extra, words", [
    (["j1", "j2"], True, "missing joint(s) ['j3']"),
    (["j1", "j2", "j3", "j1"], True, "joint 'j1' appears twice"),
    (["j1", "j2", "j3", "x"], False, "unknown joint(s) ['x']"),
    (["j1", "j2", "j2"], False, "joint 'j2' appears twice, missing joint(s) ['j3']"),
])
def test_errors_name_the_joints(given, allow_extra, words):
    with pytest.raises(InputError, match="^msg: ") as info:
        joint_index(WANTED, given, "msg", allow_extra)
    assert words in str(info.value)


def test_error_messages_are_capped():
    """100,000 unknown names, and absurdly long ones, give a message of bounded size (N4)."""
    given = [f"unknown_{i}" for i in range(100_000)] + ["x" * 10_000]
    with pytest.raises(InputError) as info:
        joint_index(WANTED, given, "msg", allow_extra=False)
    text = str(info.value)
    assert len(text) < 1000 and "(99993 more)" in text
    with pytest.raises(InputError) as info:
        joint_index(WANTED, ["x" * 10_000] * 3, "msg")
    assert len(str(info.value)) < 1000
    assert SHOWN_NAMES >= 3


@pytest.mark.parametrize("allow_extra", [True, False])
def test_matching_is_linear_in_the_number_of_names(allow_extra):
    """30,000 names (N3): a quadratic check makes ~10^8 comparisons, a linear one ~10^5."""
    n = 30_000
    wanted = [CountingName(f"j{i}") for i in range(n)]
    given = [CountingName(f"j{i}") for i in reversed(range(n))]
    CountingName.ops = 0
    index = joint_index(wanted, given, "msg", allow_extra)
    assert index[0] == n - 1
    assert CountingName.ops <= 10 * n, CountingName.ops
    CountingName.ops = 0
    with pytest.raises(InputError):
        joint_index(wanted, given[:-1] + [given[0]], "msg", allow_extra)
    assert CountingName.ops <= 10 * n, CountingName.ops
