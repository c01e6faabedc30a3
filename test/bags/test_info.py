"""
bag info (robot_dynamics_ros.bags.info) against what rosbag2's own info test expects.

Oracle: rosbag2_tests/test_rosbag2_info_end_to_end.cpp on its cdr_test and
bag_with_topics_and_service_events bags (test/data/bags/rosbag2): the lines it matches, times
exact to the nanosecond.
"""

import re

import pytest

from locations import DATA
from robot_dynamics_ros.bags import bag_info, format_info, write_joint_states
from robot_dynamics_ros.bags.info import seconds_text
from robot_dynamics_ros.commands.cli import main

TESTS = DATA / "bags" / "rosbag2" / "rosbag2_tests" / "resources"


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_cdr_test_info_is_rosbag2s(storage):
    text = format_info(bag_info(TESTS / storage / "cdr_test"))
    expected_file = "cdr_test_0." + ("mcap" if storage == "mcap" else "db3")
    assert re.search(
        "Files:             " + re.escape(expected_file) + "\n"
        "Bag size:          .*B\n"
        "Storage id:        " + storage + "\n"
        "ROS Distro:        unknown\n"
        r"Duration:          0.151137181s\n"
        r"Start:             Apr  .+ 2020 .*:.*:36.763032325 \(1586406456.763032325\)\n"
        r"End:               Apr  .+ 2020 .*:.*:36.914169506 \(1586406456.914169506\)\n"
        "Messages:          7\n"
        "Topic information: ", text), text
    assert ("Topic: /array_topic | Type: test_msgs/msg/Arrays | Count: 4 | "
            "Serialization Format: cdr\n"
            "                   Topic: /test_topic | Type: test_msgs/msg/BasicTypes | Count: 3 | "
            "Serialization Format: cdr") in text


def test_service_events_are_listed_as_services():
    text = format_info(bag_info(TESTS / "mcap" / "bag_with_topics_and_service_events"))
    assert re.search(r"Duration:          0\.0706.*s\n"
                     r"Start:             Nov  7 2023 .*:30:36\..* \(1699345836\..*\)\n"
                     r"End:               Nov  7 2023 .*:30:36\..* \(1699345836\..*\)\n"
                     "Messages:          2\n", text), text
    assert "Service:           2\n" in text
    assert ("Service: /test_service1 | Type: test_msgs/srv/BasicTypes | Event Count: 4 | "
            "Serialization Format: cdr") in text
    assert "/_service_event" not in text


def test_times_are_exact_to_the_nanosecond(tmp_path):
    # 1.7e9 s: a float carries ~16 digits, a stamp 19; info printed ...000150204 for ...000150000
    t0 = 1_700_000_000_000_150_000
    write_joint_states(tmp_path / "bag", ["a"], [0.0, 0.25], [[1.0], [2.0]], start_ns=t0)
    info = bag_info(tmp_path / "bag")
    assert info.start_ns == t0 and info.end_ns == t0 + 250_000_000
    text = format_info(info)
    assert "(1700000000.000150000)" in text and "(1700000000.250150000)" in text
    assert "Duration:          0.250000000s" in text
    assert seconds_text(1_700_000_000_000_150_000) == "1700000000.000150000"
    assert seconds_text(-1) == "-0.000000001"


def test_the_command_line_exits_1_when_the_storage_disagrees_with_metadata(tmp_path, capsys):
    write_joint_states(tmp_path / "bag", ["a"], [0.0, 0.25, 0.5], [[1.0], [2.0], [3.0]],
                       storage="sqlite3")
    metadata = tmp_path / "bag" / "metadata.yaml"
    metadata.write_text(metadata.read_text().replace("message_count: 3", "message_count: 5"))
    assert main(["bag", "info", str(tmp_path / "bag")]) == 1
    assert "Problem:           topic '/joint_states': metadata.yaml lists 5 messages, its " \
           "storage files hold 3" in capsys.readouterr().out
