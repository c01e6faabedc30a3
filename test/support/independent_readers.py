"""
Bags read without rosbags and without the package: foxglove's mcap readers, plain sqlite3.

* :func:`mcap_messages` -- ``mcap``'s reader with ``mcap-ros2-support``'s decoder, from the
  schema the file stores (a file it cannot read or decode fails the test);
* :func:`sqlite_messages` -- plain ``sqlite3``: the tables and columns must be rosbag2's
  (schema 4, ``rosbag2_storage_sqlite3/src/.../sqlite_storage.cpp``), and each message is
  decoded by ``mcap-ros2-support``'s decoder from the definition the file stores.

Both return (topic, time ns, decoded message) in time order, with the message's fields as
attributes (``msg.header.stamp.sec``, ``msg.effort``, ...).
"""

import sqlite3
from pathlib import Path

from mcap.reader import make_reader
from mcap_ros2._dynamic import generate_dynamic
from mcap_ros2.decoder import DecoderFactory

# rosbag2's SQLite3 schema 4 (Iron and later): table -> [(column, type, not null, primary key)]
ROSBAG2_SQLITE_SCHEMA = {
    "schema": [("schema_version", "INTEGER", 0, 1), ("ros_distro", "TEXT", 1, 0)],
    "metadata": [("id", "INTEGER", 0, 1), ("metadata_version", "INTEGER", 1, 0),
                 ("metadata", "TEXT", 1, 0)],
    "topics": [("id", "INTEGER", 0, 1), ("name", "TEXT", 1, 0), ("type", "TEXT", 1, 0),
               ("serialization_format", "TEXT", 1, 0), ("offered_qos_profiles", "TEXT", 1, 0),
               ("type_description_hash", "TEXT", 1, 0)],
    "message_definitions": [("id", "INTEGER", 0, 1), ("topic_type", "TEXT", 1, 0),
                            ("encoding", "TEXT", 1, 0),
                            ("encoded_message_definition", "TEXT", 1, 0),
                            ("type_description_hash", "TEXT", 1, 0)],
    "messages": [("id", "INTEGER", 0, 1), ("topic_id", "INTEGER", 1, 0),
                 ("timestamp", "INTEGER", 1, 0), ("data", "BLOB", 1, 0)],
}


def storage_file(bag: Path, suffix: str) -> Path:
    files = sorted(Path(bag).glob(f"*{suffix}"))
    assert len(files) == 1, files
    return files[0]


def mcap_messages(bag: Path) -> list:
    """Read (topic, log time, message) of the bag's MCAP file with foxglove's reader."""
    out = []
    with storage_file(bag, ".mcap").open("rb") as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        assert reader.get_header().profile == "ros2"
        for _, channel, message, decoded in reader.iter_decoded_messages(log_time_order=True):
            out.append((channel.topic, message.log_time, decoded))
    return out


def sqlite_messages(bag: Path) -> list:
    """Read (topic, timestamp, message) of the bag's .db3 with plain sqlite3 (rosbag2's schema)."""
    db = sqlite3.connect(storage_file(bag, ".db3"))
    try:
        for table, columns in ROSBAG2_SQLITE_SCHEMA.items():
            got = [(c[1], c[2], c[3], c[5]) for c in db.execute(f"PRAGMA table_info({table})")]
            assert got == columns, (table, got)
        assert db.execute("SELECT schema_version FROM schema").fetchone() == (4,)
        decoders = {}
        for msgtype, encoding, text in db.execute(
                "SELECT topic_type, encoding, encoded_message_definition FROM "
                "message_definitions"):
            assert encoding == "ros2msg"
            decoders[msgtype] = generate_dynamic(msgtype, text)[msgtype]
        rows = db.execute("SELECT topics.name, topics.type, topics.serialization_format, "
                          "messages.timestamp, messages.data FROM messages JOIN topics ON "
                          "messages.topic_id = topics.id ORDER BY messages.timestamp, "
                          "messages.id").fetchall()
    finally:
        db.close()
    out = []
    for topic, msgtype, fmt, timestamp, data in rows:
        assert fmt == "cdr"
        out.append((topic, timestamp, decoders[msgtype](bytes(data))))
    return out


def independent_messages(bag: Path) -> list:
    """Read a bag of either storage with the independent reader of its kind."""
    return mcap_messages(bag) if list(Path(bag).glob("*.mcap")) else sqlite_messages(bag)


def joint_state_rows(messages, topic: str) -> dict:
    """Return {"time", "stamp", "position", "velocity", "effort", "name"} lists of a topic."""
    rows = [(t, m) for name, t, m in messages if name == topic]
    return {"time": [t for t, _ in rows],
            "stamp": [m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec
                      for _, m in rows],
            "name": [list(m.name) for _, m in rows],
            **{f: [list(getattr(m, f)) for _, m in rows]
               for f in ("position", "velocity", "effort")}}
