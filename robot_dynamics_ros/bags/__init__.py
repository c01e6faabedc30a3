"""
rosbag2 bags for the package: reading joint states as arrays, recording, playing, processing.

Bags are real rosbag2 directories (``metadata.yaml`` plus MCAP files, rosbag2's default since
Iron, or SQLite3) that ``ros2 bag info/play`` read, written and read with the ``rosbags``
library.  Every bag rosbag2 reads is read whole and in rosbag2's order (``reader.py``: metadata
versions 4 to 9, SQLite3 schemas 1 to 4, split and zstd-compressed bags, bare .mcap/.db3 files;
storage topics matched by name and type, not by QoS text; counts checked).  The command line is
``robot-dynamics bag record|play|info|process|recover`` (``commands/bag.py``).

Public API (ROS-free: rosbags and numpy only):

* :func:`read_joint_states` -- stream a topic's sensor_msgs/JointState messages as numpy arrays
  in chunks (:class:`JointStates`: ``time`` and ``stamp`` in int64 ns, ``position``,
  ``velocity``, ``effort`` (N, n) in a given joint order, NaN where a message has no velocity or
  effort), memory bounded by the chunk size; messages the torque nodes would refuse (their
  checks, ``messages.checks``) or bytes that are no JointState raise
  :class:`~robot_dynamics_ros.core.errors.BagError` naming the message, or are skipped and
  counted with ``skip_invalid=True``.  :func:`load_joint_states` reads them all.
* :func:`write_joint_states` -- write arrays (e.g. a simulated run) as a bag of JointState.
* :func:`bag_info` / :func:`format_info` -- what ``ros2 bag info`` prints, times in int ns.
* ``process.process_bag(source, target, model, ProcessOptions(...))`` -- offline: what the
  gravity-compensation and inverse-dynamics nodes would publish for a bag's joint states and
  reference trajectories, plus the effort residual.
* ``recover.recover(directory)`` -- a readable bag from what a killed recording left.
* ``fleet.process_fleet(bags, out_dir, model, ProcessOptions(...), FleetOptions(...))`` -- many
  bags processed in parallel (``engine.Engine``: local worker processes or a dask.distributed
  cluster), one output per bag, a summary of per-bag figures.

Every bag problem is a ``BagError`` naming the bag and what is wrong; outputs are written to a
temporary directory and renamed when complete (``storage.output_bag``), so nothing half-written
is ever left, and recordings are made durable every 0.5 s.  ``record`` and ``play`` (rclpy)
live in ``record.py`` and ``play.py``.
"""
from ..core.lazy import exports

# (imported at first use: `robot-dynamics bag info` reads metadata and needs neither numpy nor
# the joint-state codec)
__getattr__, __dir__, __all__ = exports(__name__, {
    ".info": ("BagInfo", "bag_info", "format_info"),
    ".joint_states": ("JointStates", "load_joint_states", "read_joint_states"),
    ".storage": ("DEFAULT_STORAGE", "STORAGES"), ".write": ("write_joint_states",)})
