"""bag play's options, without DDS."""

import pytest

from robot_dynamics_ros.bags.play import parse_min_subscribers, parse_remaps
from robot_dynamics_ros.core import BagError


def test_play_options_parse_topic_pairs_and_name_what_is_wrong():
    assert parse_remaps(["joint_states:=/ns/joint_states"]) == {
        "/joint_states": "/ns/joint_states"}
    assert parse_min_subscribers(["/ns/joint_states:=2", "clock:=1"]) == {
        "/ns/joint_states": 2, "/clock": 1}
    with pytest.raises(BagError, match="--remap: expected from:=to, got 'joint_states'"):
        parse_remaps(["joint_states"])
    for bad in ("a:=0", "a:=two", "a:=-1", "a:=1.5"):
        with pytest.raises(BagError, match="--min-subscribers: count of 'a' must be an integer"):
            parse_min_subscribers([bad])
    with pytest.raises(BagError, match="--min-subscribers: expected topic:=count"):
        parse_min_subscribers([":=2"])
