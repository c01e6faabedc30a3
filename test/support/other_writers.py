"""
JointState bags written by writers other than the package's (rosbags), as other tools write them.

* MCAP files by ``mcap-ros2-support`` (its own CDR encoder and MCAP writer; chunks compressed
  with zstd, lz4 or not at all), with a rosbag2 ``metadata.yaml`` written here as rosbag2 of each
  version wrote it (4: Foxy, 5: Galactic, 6: Humble, 7-8: Iron, 9: Jazzy and Kilted);
* SQLite3 files by plain ``sqlite3`` with rosbag2's schema of each version (1: no QoS column,
  2: Foxy, 3: Humble, with schema and metadata tables, 4: Iron on, with type hashes and
  message definitions), messages encoded by mcap-ros2-support's encoder.

Variants: the QoS text of metadata.yaml differing from the storage's (Foxy and Humble wrote
infinite durations as 0 in one and as 2147483647 s in the other), the joints in reversed order,
extra joints (a gripper) among the robot's.
"""

import sqlite3
from pathlib import Path

import numpy as np
from mcap.writer import CompressionType
from mcap_ros2._dynamic import serialize_dynamic
from mcap_ros2.writer import Writer as McapRos2Writer

JOINT_STATE = "sensor_msgs/msg/JointState"
# sensor_msgs/JointState as rosbag2 stores it (ros2msg with the types it uses appended)
JOINT_STATE_DEFINITION = """std_msgs/Header header
string[] name
float64[] position
float64[] velocity
float64[] effort
================================================================================
MSG: std_msgs/Header
builtin_interfaces/Time stamp
string frame_id
================================================================================
MSG: builtin_interfaces/Time
int32 sec
uint32 nanosec
"""
JOINT_STATE_HASH = "RIHS01_a13ee3a330e346c9d87b5aa18d24e11690752bd33a0350f11c5882bc9179260e"
# how rosbag2 wrote a publisher's QoS (reliable, volatile, keep last 10), infinite durations as
# Foxy's metadata.yaml has them (0) and as its storage has them (2147483647 s)
_QOS = ("- history: 1\n  depth: 10\n  reliability: 1\n  durability: 2\n  deadline:\n"
        "    sec: {i}\n    nsec: {n}\n  lifespan:\n    sec: {i}\n    nsec: {n}\n  liveliness: 1\n"
        "  liveliness_lease_duration:\n    sec: {i}\n    nsec: {n}\n"
        "  avoid_ros_namespace_conventions: false")
QOS_ZERO = _QOS.format(i=0, n=0)
QOS_INFINITE = _QOS.format(i=2147483647, n=4294967295)
QOS_V9 = """
        - history: keep_last
          depth: 10
          reliability: reliable
          durability: volatile
          deadline:
            sec: 9223372036
            nsec: 854775807
          lifespan:
            sec: 9223372036
            nsec: 854775807
          liveliness: automatic
          liveliness_lease_duration:
            sec: 9223372036
            nsec: 854775807
          avoid_ros_namespace_conventions: false"""
_ENCODE = serialize_dynamic(JOINT_STATE, JOINT_STATE_DEFINITION)[JOINT_STATE]


def joint_state_cdr(stamp_ns: int, names, position, velocity=(), effort=()) -> bytes:
    """Encode a JointState in CDR with mcap-ros2-support's encoder."""
    sec, nanosec = divmod(int(stamp_ns), 1_000_000_000)
    return bytes(_ENCODE({"header": {"stamp": {"sec": sec, "nanosec": nanosec}, "frame_id": ""},
                          "name": list(names), "position": [float(x) for x in position],
                          "velocity": [float(x) for x in velocity],
                          "effort": [float(x) for x in effort]}))


class Recording:
    """Joint states of a robot as a driver publishes them: (N,) stamps, (N, n) arrays."""

    def __init__(self, joint_names, stamps, q, qd, tau, order=None, extra=0):
        self.joint_names = tuple(joint_names)
        self.stamps, self.q, self.qd, self.tau = stamps, q, qd, tau
        # the driver's name list: the robot's joints in ``order`` plus ``extra`` gripper joints
        self.order = list(range(len(joint_names))) if order is None else list(order)
        self.names = [self.joint_names[j] for j in self.order] + [f"gripper_{k}"
                                                                  for k in range(extra)]
        self.extra = extra

    def message(self, k: int) -> dict:
        """Message k as mcap-ros2-support takes it."""
        pad = [0.01 * (k + 1)] * self.extra
        sec, nanosec = divmod(int(self.stamps[k]), 1_000_000_000)
        return {"header": {"stamp": {"sec": sec, "nanosec": nanosec}, "frame_id": ""},
                "name": self.names,
                **{field: [float(x) for x in values[k, self.order]] + pad
                   for field, values in (("position", self.q), ("velocity", self.qd),
                                         ("effort", self.tau))}}


def write_mcap(path: Path, recording: Recording, topic="/joint_states", channel_qos=QOS_INFINITE,
               compression=CompressionType.ZSTD, chunk_size=4096):
    """Write ``recording`` as MCAP with mcap-ros2-support, the QoS in the channel's metadata."""
    with path.open("wb") as stream:
        writer = McapRos2Writer(stream, chunk_size=chunk_size, compression=compression)
        schema = writer.register_msgdef(JOINT_STATE, JOINT_STATE_DEFINITION)
        # (registered here to give it rosbag2's channel metadata; the writer would not)
        writer._channel_ids[topic] = writer._writer.register_channel(
            topic=topic, message_encoding="cdr", schema_id=schema.id,
            metadata={"offered_qos_profiles": channel_qos,
                      "type_description_hash": JOINT_STATE_HASH})
        for k, stamp in enumerate(recording.stamps.tolist()):
            writer.write_message(topic, schema, recording.message(k), log_time=stamp,
                                 publish_time=stamp, sequence=k)
        writer.finish()


def write_sqlite(path: Path, recording: Recording, schema: int, topic="/joint_states",
                 qos=QOS_INFINITE):
    """Write ``recording`` as .db3 in rosbag2's SQLite3 ``schema`` (1 to 4) with sqlite3."""
    db = sqlite3.connect(path)
    topic_columns = "id INTEGER PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL, " \
                    "serialization_format TEXT NOT NULL"
    values = [1, topic, JOINT_STATE, "cdr"]
    if schema >= 2:
        topic_columns += ", offered_qos_profiles TEXT NOT NULL"
        values.append(qos)
    if schema >= 4:
        topic_columns += ", type_description_hash TEXT NOT NULL"
        values.append(JOINT_STATE_HASH)
    if schema >= 3:
        db.execute("CREATE TABLE schema(schema_version INTEGER PRIMARY KEY, "
                   "ros_distro TEXT NOT NULL)")
        db.execute("INSERT INTO schema VALUES (?, ?)", (schema, "humble" if schema == 3
                                                        else "jazzy"))
        db.execute("CREATE TABLE metadata(id INTEGER PRIMARY KEY, metadata_version INTEGER "
                   "NOT NULL, metadata TEXT NOT NULL)")
    db.execute(f"CREATE TABLE topics({topic_columns})")
    db.execute(f"INSERT INTO topics VALUES ({', '.join('?' * len(values))})", values)
    if schema >= 4:
        db.execute("CREATE TABLE message_definitions(id INTEGER PRIMARY KEY, topic_type TEXT NOT "
                   "NULL, encoding TEXT NOT NULL, encoded_message_definition TEXT NOT NULL, "
                   "type_description_hash TEXT NOT NULL)")
        db.execute("INSERT INTO message_definitions (topic_type, encoding, "
                   "encoded_message_definition, type_description_hash) VALUES (?, ?, ?, ?)",
                   (JOINT_STATE, "ros2msg", JOINT_STATE_DEFINITION, JOINT_STATE_HASH))
    db.execute("CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL, "
               "timestamp INTEGER NOT NULL, data BLOB NOT NULL)")
    db.execute("CREATE INDEX timestamp_idx ON messages (timestamp ASC)")
    db.executemany("INSERT INTO messages (timestamp, topic_id, data) VALUES (?, 1, ?)",
                   [(stamp, bytes(_ENCODE(recording.message(k))))
                    for k, stamp in enumerate(recording.stamps.tolist())])
    db.commit()
    db.close()


def write_metadata(directory: Path, version: int, storage: str, files, recording: Recording,
                   topic="/joint_states", qos=QOS_ZERO):
    """metadata.yaml as rosbag2 ``version`` writes it (QoS: a string up to 8, a list in 9)."""
    count = len(recording.stamps)
    start, duration = int(recording.stamps[0]), int(recording.stamps[-1] - recording.stamps[0])
    qos_text = QOS_V9 if version >= 9 else '"' + qos.replace("\n", "\\n") + '"'
    lines = ["rosbag2_bagfile_information:", f"  version: {version}",
             f"  storage_identifier: {storage}", "  relative_file_paths:",
             *(f"    - {name}" for name in files),
             "  duration:", f"    nanoseconds: {duration}",
             "  starting_time:", f"    nanoseconds_since_epoch: {start}",
             f"  message_count: {count}", "  topics_with_message_count:",
             "    - topic_metadata:", f"        name: {topic}", f"        type: {JOINT_STATE}",
             "        serialization_format: cdr", f"        offered_qos_profiles: {qos_text}"]
    if version >= 7:
        lines.append(f"        type_description_hash: {JOINT_STATE_HASH}")
    lines += [f"      message_count: {count}", '  compression_format: ""',
              '  compression_mode: ""']
    if version >= 5:
        lines += ["  files:", *(line for name in files for line in (
            f"    - path: {name}", "      starting_time:",
            f"        nanoseconds_since_epoch: {start}", "      duration:",
            f"        nanoseconds: {duration}", f"      message_count: {count}"))]
    if version >= 6:
        lines.append("  custom_data: ~")
    if version >= 8:
        lines.append("  ros_distro: jazzy")
    (directory / "metadata.yaml").write_text("\n".join(lines) + "\n")


# metadata version -> the SQLite3 schema rosbag2 of that time wrote (schema 1: before Foxy)
SQLITE_SCHEMA_OF_VERSION = {4: 2, 5: 2, 6: 3, 7: 3, 8: 4, 9: 4}


def other_writer_bag(directory: Path, recording: Recording, storage: str, version: int,
                     qos_mismatch: bool = False, schema: int | None = None,
                     compression=CompressionType.ZSTD) -> Path:
    """Write a rosbag2 bag directory of ``recording`` with the other writers above."""
    directory.mkdir(parents=True)
    storage_qos, metadata_qos = QOS_INFINITE, (QOS_ZERO if qos_mismatch else QOS_INFINITE)
    name = f"{directory.name}_0.{'mcap' if storage == 'mcap' else 'db3'}"
    if storage == "mcap":
        write_mcap(directory / name, recording, channel_qos=storage_qos, compression=compression)
    else:
        write_sqlite(directory / name, recording, schema or SQLITE_SCHEMA_OF_VERSION[version],
                     qos=storage_qos)
    write_metadata(directory, version, storage, [name], recording, qos=metadata_qos)
    return directory


def sample_recording(model, count=200, order=None, extra=0, start_ns=1_700_000_000_123_456_789):
    """Make a smooth motion of ``model`` at 1 kHz, made-up efforts, stamps exact to the ns."""
    t = np.arange(count) * 1e-3
    phase = 2.0 * t[:, None] + np.arange(model.n)
    stamps = start_ns + np.arange(count, dtype=np.int64) * 1_000_000 + 7
    return Recording(model.joint_names, stamps, 0.3 * np.sin(phase), 0.6 * np.cos(phase),
                     np.cos(3.0 * phase), order=order, extra=extra)
