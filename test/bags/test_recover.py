"""
bag recover (robot_dynamics_ros.bags.recover) and what a killed writer leaves (bags.storage).

Oracles: rosbag2's reindexer test (rosbag2_tests/test_reindexer.cpp: the metadata it must
rebuild for Humble's split and zstd-compressed test bags, test/data/bags/rosbag2); a writer
process killed with SIGKILL while writing messages stamped with the wall clock, whose last
second is all it may lose (the documented bound).
"""

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from rosbags.rosbag2.metadata import parse_qos
from ruamel.yaml import YAML

from locations import DATA, REPO
from robot_dynamics_ros.bags.reader import open_bag
from robot_dynamics_ros.bags.recover import recover
from robot_dynamics_ros.bags.storage import output_bag
from robot_dynamics_ros.bags.types import typestore
from robot_dynamics_ros.commands.cli import main
from robot_dynamics_ros.core import BagError
from robot_dynamics_ros.messages.cdr import JOINT_STATE, BatchDecoder, JointStateTemplate

REINDEX = DATA / "bags" / "rosbag2" / "humble" / "rosbag2_tests" / "resources" / \
    "reindex_test_bags"


@pytest.mark.parametrize("name", ["multiple_files", "file_compression"])
def test_rosbag2s_reindex_bags_recover_to_the_metadata_rosbag2_expects(tmp_path, name):
    shutil.copytree(REINDEX / name, tmp_path / name)
    report = recover(tmp_path / name)
    assert report.output == str(tmp_path / f"{name}_recovered")
    target = YAML(typ="safe").load((REINDEX / "target_metadata" / name / "metadata.yaml")
                                   .read_text())["rosbag2_bagfile_information"]
    expected = {t["topic_metadata"]["name"]: t for t in target["topics_with_message_count"]
                if t["message_count"]}
    with open_bag(report.output) as bag:
        assert bag.message_count == target["message_count"]
        got = {c.topic: c for c in bag.connections}
        assert set(got) == set(expected)
        for topic, entry in expected.items():
            assert got[topic].msgcount == entry["message_count"]
            assert got[topic].msgtype == entry["topic_metadata"]["type"]
            assert got[topic].ext.offered_qos_profiles == \
                parse_qos(entry["topic_metadata"]["offered_qos_profiles"])
        assert sum(1 for _ in bag.messages()) == target["message_count"]
    assert sorted(os.listdir(tmp_path / name)) == sorted(os.listdir(REINDEX / name))  # untouched


WRITER = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {repo!r})
    from robot_dynamics_ros.bags.storage import RECORD_FLUSH_PERIOD, output_bag
    from robot_dynamics_ros.bags.types import typestore
    from robot_dynamics_ros.messages.cdr import JOINT_STATE, JointStateTemplate
    template = JointStateTemplate(["a", "b"], ("position",))
    with output_bag(sys.argv[1], sys.argv[2], flush_period=RECORD_FLUSH_PERIOD) as writer:
        connection = writer.add_connection("/joint_states", JOINT_STATE, typestore=typestore())
        k = 0
        while True:                              # until killed
            now = time.time_ns()
            writer.write(connection, now, template.encode(divmod(now, 10**9), position=[k, -k]))
            if k == 20:
                print("writing", flush=True)
            k += 1
            time.sleep(0.002)
""")


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_a_writer_killed_outright_loses_at_most_a_second(tmp_path, storage):
    writer = subprocess.Popen([sys.executable, "-c", WRITER.format(repo=str(REPO)),
                               str(tmp_path / "run"), storage], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert writer.stdout.readline() == "writing\n"
        time.sleep(2.5)
        killed = time.time_ns()
        writer.send_signal(signal.SIGKILL)
        writer.wait(10)
    finally:
        writer.kill()
    partial = tmp_path / f".run.partial-{writer.pid}"
    assert partial.is_dir() and not (tmp_path / "run").exists()
    with pytest.raises(BagError, match="bag recover"):        # reading it says what to do
        open_bag(tmp_path / "run").__enter__()
    report = recover(tmp_path / "run")                # found by the bag's name
    assert report.output == str(tmp_path / "run") and not partial.exists()
    with open_bag(tmp_path / "run") as bag:
        items = [(t, bytes(raw)) for _, t, raw in bag.messages()]
    times = np.array([t for t, _ in items])
    assert killed - times[-1] < 1_000_000_000, (killed - times[-1]) * 1e-9
    assert len(items) > 500 and (np.diff(times) > 0).all()
    # every message is there from the first on, each one as written
    groups, others = BatchDecoder().decode([raw for _, raw in items])
    assert others == [] and len(groups) == 1
    np.testing.assert_array_equal(groups[0].position[:, 0], np.arange(len(items)))


def test_cut_off_mcap_and_uncommitted_sqlite_keep_what_reached_the_disk(tmp_path):
    template = JointStateTemplate(["a"], ("position",))
    for kind in ("mcap", "sqlite3"):
        killed = tmp_path / f"killed_{kind}"                 # the files as a kill leaves them
        killed.mkdir()
        with output_bag(tmp_path / kind, kind) as writer:
            connection = writer.add_connection("/joint_states", JOINT_STATE,
                                               typestore=typestore())
            for k in range(300):
                writer.write(connection, k * 1000, template.encode((0, k * 1000), position=[k]))
                if k in (99, 199):
                    writer.flush()
            for path in writer.path.iterdir():      # SQLite3: with its hot journal
                shutil.copy(path, killed)
        report = recover(killed, tmp_path / f"recovered_{kind}")
        assert report.counts == {"/joint_states": 200}, report
        with open_bag(tmp_path / f"recovered_{kind}") as bag:
            assert [t for _, t, _ in bag.messages()] == [k * 1000 for k in range(200)]
    # an MCAP file cut in the middle of a chunk keeps the chunks before it
    mcap = next((tmp_path / "mcap").glob("*.mcap"))
    cut = tmp_path / "cut"
    cut.mkdir()
    data = mcap.read_bytes()
    (cut / mcap.name).write_bytes(data[:len(data) // 2])
    report = recover(cut)
    assert 0 < report.counts["/joint_states"] < 300
    assert any("cut off" in note for note in report.notes)


def test_a_recording_still_running_is_not_touched(tmp_path):
    staging = tmp_path / f".live.partial-{os.getppid()}"
    (staging / "live").mkdir(parents=True)
    with pytest.raises(BagError, match=f"process {os.getppid()} is still recording into it"):
        recover(tmp_path / "live")
    assert staging.is_dir()


def test_the_command_line_recovers_and_names_problems(tmp_path, capsys):
    shutil.copytree(REINDEX / "multiple_files", tmp_path / "bag")
    assert main(["bag", "recover", str(tmp_path / "bag"), "-o", str(tmp_path / "out")]) == 0
    assert "recovered 52 messages" in capsys.readouterr().out
    assert main(["bag", "recover", str(tmp_path / "bag"), "-o", str(tmp_path / "out")]) == 1
    assert "exists already" in capsys.readouterr().err
    assert main(["bag", "recover", str(tmp_path / "nothing")]) == 1
    assert "no interrupted recording" in capsys.readouterr().err
