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
from robot_dynamics_ros.bags import write_joint_states
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
    # written for 2.5 s (each pass sleeps 2 ms: slower on a loaded machine, so no fixed count)
    assert times[-1] - times[0] > 1_000_000_000 and (np.diff(times) > 0).all()
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


# ------------------------------------------------------------------- files cut short (B1, B2)
def cut_bag(tmp_path, source, fraction):
    """Return a directory holding the first ``fraction`` of ``source``'s bytes (no metadata)."""
    cut = tmp_path / f"cut_{source.suffix[1:]}_{round(fraction * 100)}"
    cut.mkdir()
    data = source.read_bytes()
    (cut / source.name).write_bytes(data[:int(len(data) * fraction)])
    return cut


def recovered_messages(path):
    """(topic, time, bytes) of every message of a bag, read with rosbags."""
    with open_bag(path) as bag:
        return [(c.topic, t, bytes(raw)) for c, t, raw in bag.messages()]


def mcap_messages_and_ends(path):
    """
    (topic, time, bytes) and the file offset just after each message record, in file order.

    The oracle: foxglove's ``mcap`` reader, its chunk indexes and message indexes (offsets in
    the uncompressed chunk; the chunks here are uncompressed, so file offset = chunk start +
    the chunk record's header + the offset).
    """
    from mcap.reader import make_reader
    from mcap.records import MessageIndex
    from mcap.stream_reader import StreamReader
    with open(path, "rb") as stream:
        reader = make_reader(stream)
        summary = reader.get_summary()
        messages = [(c.topic, m.log_time, m.data) for _, c, m in reader.iter_messages()]
        places = []
        for chunk in summary.chunk_indexes:
            assert chunk.compression == ""
            header = 9 + 8 + 8 + 8 + 4 + 4 + len(chunk.compression) + 8
            stream.seek(chunk.chunk_start_offset + chunk.chunk_length)
            indexes = [r for _, r in zip(range(len(chunk.message_index_offsets)),
                                         StreamReader(stream, skip_magic=True).records)]
            for index in indexes:
                assert isinstance(index, MessageIndex)
                places += [(t, chunk.chunk_start_offset + header + o) for t, o in index.records]
    places.sort()                                     # log time order, as iter_messages
    ends = [start + 9 + 22 + len(data) for (_, start), (_, _, data) in zip(places, messages)]
    order = np.argsort(ends)
    return [messages[k] for k in order], [ends[k] for k in order]


def sqlite_messages_and_ends(path):
    """
    (topic, time, bytes) and the end of the leaf page holding each, in row id order.

    The oracle: SQLite's own ``dbstat`` table on the intact file (each leaf page of the
    messages table in tree order, with its cell count: rows in id order fill them in turn).
    """
    import sqlite3
    with sqlite3.connect(path) as connection:
        size = connection.execute("PRAGMA page_size").fetchone()[0]
        leaves = connection.execute(
            "SELECT pageno, ncell, pagetype FROM dbstat WHERE name='messages' "
            "AND pagetype != 'internal' ORDER BY path").fetchall()
        assert {kind for _, _, kind in leaves} == {"leaf"}        # no overflow pages here
        topics = dict(connection.execute("SELECT id, name FROM topics"))
        rows = [(topics[k], t, bytes(d)) for k, t, d in connection.execute(
            "SELECT topic_id, timestamp, data FROM messages ORDER BY id")]
    ends = [page * size for page, cells, _ in leaves for _ in range(cells)]
    assert len(ends) == len(rows)
    return rows, ends


def joint_state_bag(path, storage, count, seed):
    """Write a bag of ``count`` joint states (6 joints, random values: incompressible)."""
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(count, 6))
    write_joint_states(path, [f"j{k}" for k in range(6)], np.arange(count) * 1e-3, q, q, q,
                       storage=storage)
    return next(p for p in path.iterdir() if p.suffix in (".mcap", ".db3"))


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_a_bag_cut_anywhere_keeps_every_whole_message_before_the_cut(tmp_path, storage):
    source = joint_state_bag(tmp_path / "bag", storage, 5000, 1)    # MCAP: two chunks
    messages, ends = (mcap_messages_and_ends if storage == "mcap" else
                      sqlite_messages_and_ends)(source)
    assert len(messages) == 5000
    size = source.stat().st_size
    for tenth in range(1, 11):
        cut = cut_bag(tmp_path, source, tenth / 10)
        before = [m for m, end in zip(messages, ends) if end <= size * tenth // 10]
        report = recover(cut, tmp_path / f"out_{tenth}")
        assert recovered_messages(tmp_path / f"out_{tenth}") == before, tenth
        assert report.counts == {"/joint_states": len(before)}
        assert len(before) > 5000 * (tenth - 1) // 10           # the oracle is no trivial one
        assert (tenth == 10) == (report.notes == [])


def test_a_cut_compressed_chunk_is_read_up_to_the_cut(tmp_path):
    """Chunks compressed with zstd (rosbags' storage compression): streamed to the cut."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.rosbag2.enums import CompressionFormat, CompressionMode
    rng = np.random.default_rng(3)
    template = JointStateTemplate([f"j{k}" for k in range(6)], ("position", "velocity"))
    writer = Writer(tmp_path / "bag", version=9, storage_plugin=StoragePlugin.MCAP)
    writer.set_compression(CompressionMode.STORAGE, CompressionFormat.ZSTD)
    written = []
    with writer:
        connection = writer.add_connection("/joint_states", JOINT_STATE, typestore=typestore())
        for k in range(4000):                           # about 1.2 chunks of 1 MiB
            data = template.encode((0, k), position=rng.normal(size=6),
                                   velocity=rng.normal(size=6))
            writer.write(connection, k, data)
            written.append(("/joint_states", k, bytes(data)))
    source = tmp_path / "bag" / "bag.mcap"
    counts = []
    for tenth in range(1, 11):
        cut = cut_bag(tmp_path, source, tenth / 10)
        try:
            recover(cut, tmp_path / f"out_{tenth}")
        except BagError as exc:                         # less than a zstd block: nothing
            assert "nothing to recover" in str(exc) and tenth < 3
            counts.append(0)
            continue
        got = recovered_messages(tmp_path / f"out_{tenth}")
        assert got == written[:len(got)]                # each one as written, in order
        counts.append(len(got))
    assert counts == sorted(counts) and counts[-1] == 4000
    # the first chunk (about 2,800 messages) is cut at 30 %: part of it is streamed out
    assert 0 < counts[2] < counts[5] < 4000, counts


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
@pytest.mark.parametrize("content", [b"", bytes(4096), b"\x89MCAP0\r"])
def test_a_file_with_nothing_to_keep_is_an_error_and_leaves_no_output(
        tmp_path, capsys, storage, content):
    bag = tmp_path / "bag"
    bag.mkdir()
    name = f"bag.{'mcap' if storage == 'mcap' else 'db3'}"
    (bag / name).write_bytes(content)
    assert main(["bag", "recover", str(bag)]) == 1
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "nothing to recover" in error[0] and name in error[0], error
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bag"]        # nothing written


def test_a_schema_record_with_damaged_text_is_skipped_not_a_traceback(tmp_path):
    """Found by the fuzz suite: invalid UTF-8 in a schema's text raised UnicodeDecodeError."""
    source = joint_state_bag(tmp_path / "bag", "mcap", 20, 2)
    data = bytearray(source.read_bytes())
    start = data.index(b"std_msgs/Header header")
    data[start:start + 4] = b"\xff\xfe\xff\xfe"            # not UTF-8
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    (damaged / source.name).write_bytes(bytes(data))
    expected = r"bag .*damaged: topic '/joint_states': the file has no definition of its type"
    with pytest.raises(BagError, match=expected):
        recover(damaged)                                   # the schema is lost with its text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bag", "damaged"]
