"""
Reading bags as rosbag2 reads them (robot_dynamics_ros.bags.reader), on bags nobody here wrote.

Oracles: rosbag2's own test bags (test/data/bags/rosbag2, README there) with the counts, order
and contents rosbag2's own tests expect of them (rosbag2_py/test/test_sequential_reader*.py,
rosbag2_tests/test_rosbag2_play_end_to_end.cpp, rosbag2_transport/test_play_seek.cpp,
test_rewrite.cpp, rosbag2_tests/test_reindexer.cpp); JointState bags written by
mcap-ros2-support and by plain sqlite3 with rosbag2's schemas (support/other_writers.py), whose
contents are known.
"""

import shutil
import sqlite3
import warnings

import numpy as np
import pytest
from mcap.writer import CompressionType
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

from locations import DATA
from other_writers import other_writer_bag, sample_recording, write_metadata
from robot_dynamics_ros.bags import bag_info, load_joint_states
from robot_dynamics_ros.bags.process import ProcessOptions, process_bag
from robot_dynamics_ros.bags.reader import MAX_METADATA_BYTES, BagWarning, open_bag
from robot_dynamics_ros.core import BagError, gravity_torques

ROSBAG2 = DATA / "bags" / "rosbag2"
PY = ROSBAG2 / "rosbag2_py" / "test" / "resources"
TESTS = ROSBAG2 / "rosbag2_tests" / "resources"
TRANSPORT = ROSBAG2 / "rosbag2_transport" / "test" / "resources"
REINDEX = ROSBAG2 / "humble" / "rosbag2_tests" / "resources" / "reindex_test_bags"
STORAGES = ["mcap", "sqlite3"]
BASIC_TYPES = """bool bool_value
byte byte_value
char char_value
float32 float32_value
float64 float64_value
int8 int8_value
uint8 uint8_value
int16 int16_value
uint16 uint16_value
int32 int32_value
uint32 uint32_value
int64 int64_value
uint64 uint64_value
"""


def read_all(path, topics=None):
    """[(topic, time, raw bytes)] of the bag at ``path`` (``topics``: only these)."""
    with open_bag(path) as bag:
        connections = None if topics is None else [c for t in topics for c in bag.topic(t)]
        return [(c.topic, t, bytes(raw)) for c, t, raw in bag.messages(connections)]


def counts(messages) -> dict:
    out = {}
    for topic, _, _ in messages:
        out[topic] = out.get(topic, 0) + 1
    return out


def decoder(path):
    """Deserialise with the message definitions the bag itself stores (test_msgs is not here)."""
    store = get_typestore(Stores.ROS2_KILTED)
    with open_bag(path) as bag:
        for c in bag.connections:
            if c.msgdef.data and c.msgtype not in store.fielddefs:
                store.register(get_types_from_msg(c.msgdef.data, c.msgtype))
        types = {c.topic: c.msgtype for c in bag.connections}
    return lambda topic, raw: store.deserialize_cdr(raw, types[topic])


# ------------------------------------------------------------------------ rosbag2's test bags
@pytest.mark.parametrize("storage", STORAGES)
def test_talker_is_read_whole_although_its_qos_texts_differ(storage):
    # the bag that rosbags alone reads as empty (metadata.yaml's QoS durations are 0, the
    # storage's 2147483647 s): rosbag2's test_sequential_reader reads 10 strings in order
    messages = read_all(PY / storage / "talker")
    assert counts(messages) == {"/rosout": 10, "/topic": 10}
    decode = decoder(PY / storage / "talker")
    strings = [decode(topic, raw).data for topic, _, raw in messages if topic == "/topic"]
    assert strings == [f"Hello, world! {k}" for k in range(10)]
    assert read_all(PY / storage / "talker", ["topic"]) == \
        [m for m in messages if m[0] == "/topic"]
    times = [t for _, t, _ in messages]
    assert times == sorted(times)
    # the seek expectation: after 1585866237113147888 come a Log, then "Hello, world! 5"
    after = [(topic, raw) for topic, t, raw in messages if t >= 1585866237113147888]
    assert after[0][0] == "/rosout" and decode(*after[1]).data == "Hello, world! 5"
    # the storage file alone, without metadata.yaml, holds the same messages
    bare = next((PY / storage / "talker").glob("talker.*"))
    assert read_all(bare) == messages


def test_split_bag_reads_in_rosbag2s_order():
    # rosbag2_py/test/test_sequential_reader_multiple_files.py on wbag (five files, 6074 messages)
    messages = read_all(PY / "mcap" / "wbag")
    assert len(messages) == 6074
    assert counts(messages) == {"AAA": 804, "BBB": 742, "CCC": 742, "DDD": 753, "EEE": 804,
                                "FFF": 772, "GGG": 731, "HHH": 726}
    picked = [(topic, t) for topic, t, _ in messages if topic in ("AAA", "CCC", "DDD")]
    assert picked[:3] == [("AAA", 1001), ("CCC", 1002), ("AAA", 1004)]
    rest = [(topic, t) for topic, t, _ in messages if t > 1004 or (t == 1004 and topic != "AAA")]
    assert rest[:3] == [("FFF", 1004), ("BBB", 1004), ("EEE", 1005)]
    seek = [(topic, t) for topic, t, _ in messages if t >= 1822]
    assert seek[0] == ("CCC", 1822)
    filtered = [m for m in seek if m[0] in ("BBB", "GGG")]
    assert filtered[:3] == [("GGG", 1822), ("GGG", 1822), ("BBB", 1826)]
    filtered = [(topic, t) for topic, t, _ in messages if t >= 1408 and topic in ("BBB", "GGG")]
    assert filtered[:3] == [("BBB", 1408), ("GGG", 1408), ("BBB", 1413)]
    # metadata.yaml says 2623 .. 3034 (it is wrong: the messages span 1000 ..): info shows it
    info = bag_info(PY / "mcap" / "wbag")
    assert (info.start_ns, info.duration_ns, info.message_count) == (2623, 411, 6074)


@pytest.mark.parametrize("storage", STORAGES)
def test_cdr_test_contents_as_rosbag2s_play_test_expects(storage):
    messages = read_all(TESTS / storage / "cdr_test")
    assert counts(messages) == {"/test_topic": 3, "/array_topic": 4}
    decode = decoder(TESTS / storage / "cdr_test")
    for topic, _, raw in messages:
        msg = decode(topic, raw)
        if topic == "/test_topic":
            assert msg.int32_value == 123
        else:
            assert msg.bool_values.tolist() == [True, False, True]
    assert read_all(TESTS / "mcap" / "cdr_test") == read_all(TESTS / "sqlite3" / "cdr_test")


@pytest.mark.parametrize("storage", STORAGES)
def test_seek_bag_with_an_old_style_type_name(storage):
    # rosbag2_transport/test_play_seek.cpp: five BasicTypes, int32_value 1 .. 5
    store = get_typestore(Stores.EMPTY)
    store.register(get_types_from_msg(BASIC_TYPES, "test_msgs/msg/BasicTypes"))
    messages = read_all(TRANSPORT / storage / "test_bag_for_seek")
    assert [topic for topic, _, _ in messages] == ["topic1"] * 5
    assert [store.deserialize_cdr(raw, "test_msgs/msg/BasicTypes").int32_value
            for _, _, raw in messages] == [1, 2, 3, 4, 5]
    with open_bag(TRANSPORT / storage / "test_bag_for_seek") as bag:
        assert [c.msgtype for c in bag.connections] == ["test_msgs/BasicTypes"]


def test_more_of_rosbag2s_bags():
    # test_rewrite.cpp: 100 + 50 in rewriter_a (convert_a is the same bag); rosbags reads none
    assert counts(read_all(PY / "mcap" / "convert_a")) == {"a_empty": 100, "b_basictypes": 50}
    assert read_all(ROSBAG2 / "ros2bag" / "test" / "resources" / "empty_bag") == []
    assert counts(read_all(TESTS / "mcap" / "bag_with_topics_and_service_events")) == {
        "/test_service1/_service_event": 4, "/test_service2/_service_event": 4,
        "/test_topic1": 1, "/test_topic2": 1}
    # rosbag2 refuses it too ("Could not find converter for format wrong_format")
    with pytest.raises(BagError, match="wrong_rmw_test: cannot be read: .*wrong_format"):
        read_all(TESTS / "mcap" / "wrong_rmw_test")


def test_split_and_zstd_compressed_sqlite_bags_with_rosbag2s_reindexed_metadata(tmp_path):
    # Humble's reindex test bags with the metadata.yaml rosbag2's reindexer must produce
    for name in ("file_compression", "multiple_files"):
        bag = tmp_path / name
        shutil.copytree(REINDEX / name, bag)
        shutil.copy(REINDEX / "target_metadata" / name / "metadata.yaml", bag)
        with open_bag(bag) as opened:
            promised = {c.topic: c.msgcount for c in opened.connections if c.msgcount}
        messages = read_all(bag)
        assert counts(messages) == promised and sum(promised.values()) > 0
        times = [t for _, t, _ in messages]
        assert times == sorted(times)


# --------------------------------------------------------------------- other writers' bags

VARIANTS = [("mcap", version, {}) for version in (4, 5, 6, 7, 8, 9)] + \
    [("sqlite3", version, {}) for version in (4, 5, 6, 7, 8, 9)] + \
    [("sqlite3", 4, {"schema": 1}), ("mcap", 8, {"compression": CompressionType.LZ4}),
     ("mcap", 9, {"compression": CompressionType.NONE})]


@pytest.mark.parametrize("qos_mismatch", [False, True])
@pytest.mark.parametrize("storage, version, extra", VARIANTS)
def test_joint_states_of_other_writers_read_exactly(tmp_path, puma, storage, version, extra,
                                                    qos_mismatch):
    recording = sample_recording(puma, 120)
    bag = other_writer_bag(tmp_path / "bag", recording, storage, version,
                           qos_mismatch=qos_mismatch, **extra)
    states = load_joint_states(bag, "joint_states", joint_names=puma.joint_names)
    np.testing.assert_array_equal(states.stamp, recording.stamps)
    np.testing.assert_array_equal(states.time, recording.stamps)
    for field, values in (("position", recording.q), ("velocity", recording.qd),
                          ("effort", recording.tau)):
        np.testing.assert_array_equal(getattr(states, field), values)
    info = bag_info(bag, check=True)
    assert info.message_count == 120 and info.problems == []
    assert info.start_ns == recording.stamps[0]
    assert info.end_ns == recording.stamps[-1]


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("order, extra", [(range(5, -1, -1), 0), ([2, 0, 1, 5, 3, 4], 3)])
def test_other_joint_orders_and_extra_joints_are_matched_by_name(tmp_path, puma, storage, order,
                                                                 extra):
    recording = sample_recording(puma, 80, order=list(order), extra=extra)
    bag = other_writer_bag(tmp_path / "bag", recording, storage, 9, qos_mismatch=True)
    states = load_joint_states(bag, joint_names=puma.joint_names)
    np.testing.assert_array_equal(states.position, recording.q)
    np.testing.assert_array_equal(states.effort, recording.tau)
    report = process_bag(bag, tmp_path / "out", puma, ProcessOptions(outputs=("gravity",)))
    assert report.joint_states == 80 and report.rejected == {}
    gravity = load_joint_states(tmp_path / "out", "/robot_dynamics/gravity_effort",
                                require_position=False)
    np.testing.assert_allclose(gravity.effort, gravity_torques(puma, recording.q), atol=1e-12)
    np.testing.assert_array_equal(gravity.stamp, recording.stamps)


# ------------------------------------------------------------------------- counts and limits
def test_fewer_messages_than_promised_is_an_error_naming_bag_topic_and_counts(tmp_path, puma):
    recording = sample_recording(puma, 50)
    bag = other_writer_bag(tmp_path / "short", recording, "sqlite3", 8)
    db = sqlite3.connect(next(bag.glob("*.db3")))
    db.execute("DELETE FROM messages WHERE id > 30")
    db.commit()
    db.close()
    with pytest.raises(BagError, match=r"bag .*short: topic '/joint_states': metadata.yaml "
                                       r"promises 50 messages but its storage files hold 30"):
        read_all(bag)
    with pytest.raises(BagError, match="promises 50 messages"):
        load_joint_states(bag)
    info = bag_info(bag)
    assert info.problems == ["topic '/joint_states': metadata.yaml lists 50 messages, its "
                             "storage files hold 30"]
    # more than promised: all read, and said
    write_metadata(bag, 8, "sqlite3", [next(bag.glob("*.db3")).name], sample_recording(puma, 10))
    with pytest.warns(BagWarning, match="30 messages, more than the 10 its metadata.yaml lists"):
        assert len(read_all(bag)) == 30


def test_a_topic_missing_from_metadata_is_read_and_said(tmp_path, puma):
    recording = sample_recording(puma, 20)
    bag = other_writer_bag(tmp_path / "extra", recording, "sqlite3", 8)
    db = sqlite3.connect(next(bag.glob("*.db3")))
    db.execute("INSERT INTO topics VALUES (2, '/other', 'std_msgs/msg/Empty', 'cdr', '', '')")
    db.execute("INSERT INTO messages (topic_id, timestamp, data) VALUES (2, 5, x'00010000')")
    db.commit()
    db.close()
    with pytest.warns(BagWarning, match="topic '/other' .* not in metadata.yaml"):
        messages = read_all(bag)
    assert counts(messages) == {"/joint_states": 20, "/other": 1}


def test_an_oversized_metadata_file_is_refused_unread(tmp_path):
    bag = tmp_path / "huge"
    bag.mkdir()
    (bag / "metadata.yaml").write_text("#" * (MAX_METADATA_BYTES + 1))
    with pytest.raises(BagError, match=r"metadata.yaml is 8.0 MiB, more than the 8 MiB"):
        read_all(bag)


@pytest.mark.parametrize("storage", STORAGES)
def test_flipped_bytes_give_one_clear_error_or_a_read(tmp_path, puma, storage):
    recording = sample_recording(puma, 300)
    clean = other_writer_bag(tmp_path / "clean", recording, storage, 9)
    expected = read_all(clean)
    rng = np.random.default_rng(5)
    storage_file = next(p for p in clean.iterdir() if p.name != "metadata.yaml")
    data = storage_file.read_bytes()
    outcomes = {"read": 0, "error": 0}
    for trial in range(40):
        damaged = tmp_path / f"damaged{trial}"
        shutil.copytree(clean, damaged)
        flipped = bytearray(data)
        for position in rng.integers(0, len(data), 4):
            flipped[position] ^= 0xff
        (damaged / storage_file.name).write_bytes(bytes(flipped))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", BagWarning)
                got = load_joint_states(damaged, joint_names=puma.joint_names)
        except BagError as exc:
            assert f"bag {damaged}" in str(exc)
            outcomes["error"] += 1
            continue
        outcomes["read"] += 1
        assert got.stamp.size <= len(expected)
    assert outcomes["error"] > 0


@pytest.mark.parametrize("mode", ["message", "file"])
def test_zstd_compressed_bags_read_decompressed(tmp_path, puma, mode):
    # rosbag2's --compression-mode message / file (zstd), here written by rosbags' writer
    from rosbags.rosbag2 import CompressionFormat, CompressionMode, StoragePlugin, Writer
    from robot_dynamics_ros.bags.types import typestore
    recording = sample_recording(puma, 40)
    plain = other_writer_bag(tmp_path / "plain", recording, "sqlite3", 8)
    writer = Writer(tmp_path / "compressed", version=8, storage_plugin=StoragePlugin.SQLITE3)
    writer.set_compression(CompressionMode[mode.upper()], CompressionFormat.ZSTD)
    with writer:
        connection = writer.add_connection("/joint_states", "sensor_msgs/msg/JointState",
                                           typestore=typestore())
        for _, t, raw in read_all(plain):
            writer.write(connection, t, raw)
    assert read_all(tmp_path / "compressed") == read_all(plain)
    assert bag_info(tmp_path / "compressed", check=True).message_count == 40
