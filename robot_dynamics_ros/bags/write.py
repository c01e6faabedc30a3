"""
Writing joint states (e.g. a simulated run) as a bag, for tests, examples and identification.

    from robot_dynamics_ros.bags import write_joint_states
    run = simulate(model, q0, qd0, 10.0)
    write_joint_states("run_bag", model.joint_names, run.t, run.q, run.qd, run.tau)

The messages are sensor_msgs/JointState on ``topic``, stamped and recorded at the given times,
written in chunks through :func:`~.storage.output_bag` (temporary directory, renamed when done).
"""
from __future__ import annotations

import numpy as np

from ..core.errors import BagError
from ..messages.cdr import JOINT_STATE, JointStateTemplate
from .joint_states import topic_name
from .storage import DEFAULT_STORAGE, output_bag
from .types import typestore

CHUNK = 10_000


def seconds_to_ns(t) -> np.ndarray:
    """Return times in seconds as int64 nanoseconds (rounded to the nearest)."""
    return np.rint(np.asarray(t, dtype=float) * 1e9).astype(np.int64)


def write_joint_states(bag, joint_names, time, position, velocity=None, effort=None,
                       topic: str = "/joint_states", storage: str = DEFAULT_STORAGE,
                       overwrite: bool = False, time_offset: float = 0.0,
                       start_ns: int = 0) -> None:
    """
    Write one JointState per row to a new bag ``bag``.

    ``time`` (N,) seconds: header stamp and record time of each message, after ``start_ns``
    (int ns, e.g. a wall-clock start: exact, where a float of seconds since 1970 is only good
    to ~0.2 us) plus ``time_offset`` seconds; ``position`` and the optional ``velocity`` and
    ``effort`` are (N, n) in ``joint_names`` order.
    """
    names = tuple(joint_names)
    stamps = int(start_ns) + seconds_to_ns(np.asarray(time, dtype=float) + time_offset)
    fields = {"position": position, "velocity": velocity, "effort": effort}
    fields = {k: np.asarray(v, dtype=float) for k, v in fields.items() if v is not None}
    for key, values in fields.items():
        if values.shape != (stamps.size, len(names)):
            raise BagError(f"{key}: expected shape ({stamps.size}, {len(names)}), "
                           f"got {values.shape}")
    template = JointStateTemplate(names, tuple(fields))
    with output_bag(bag, storage, overwrite) as writer:
        connection = writer.add_connection(topic_name(topic), JOINT_STATE, typestore=typestore())
        for start in range(0, stamps.size, CHUNK):
            part = slice(start, start + CHUNK)
            rows = template.encode_many(stamps[part], **{k: v[part] for k, v in fields.items()})
            writer.write_rows(connection, stamps[part], rows)
