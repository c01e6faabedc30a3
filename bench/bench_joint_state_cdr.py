"""
Speed of the package's JointState codec (robot_dynamics_ros.messages.cdr) against the libraries.

    python3 bench/bench_joint_state_cdr.py [--count N] [--repeat R] [--quick]

Per message, best of R, on N Puma 560 joint states (6 joints, position, velocity, effort) as
rclpy serialises them:

* decoding a chunk (the bag tools): ``BatchDecoder.decode`` against rosbags'
  ``Typestore.deserialize_cdr`` and rclpy's ``deserialize_message``, one message at a time;
* reading one message in a node: ``messages.serialized.JointStateReader.read`` (the codec's
  known-layout path and the nodes' checks) against rclpy's ``deserialize_message`` followed by
  the same checks (``messages.conversions.joint_state_values``), what a non-raw subscription costs;
* encoding: ``JointStateTemplate.encode_many`` (bags) and ``encode`` (nodes) against rosbags'
  ``serialize_cdr`` and rclpy's ``serialize_message``.

The codec exists for this speed (hand-written, kept because of it): it must stay faster than
the libraries, which decide what the codec does not read.  Ratios are reference / codec.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from robot_dynamics_ros.bags.types import typestore  # noqa: E402
from robot_dynamics_ros.core import RobotModel  # noqa: E402
from robot_dynamics_ros.messages.cdr import (JOINT_STATE, BatchDecoder,  # noqa: E402
                                             JointStateTemplate)
from robot_dynamics_ros.messages.conversions import JointOrder, joint_state_values  # noqa: E402
from robot_dynamics_ros.messages.serialized import JointStateReader  # noqa: E402


def best(function, repeat: int) -> float:
    """Best wall time of ``function()`` over ``repeat`` runs."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return min(times)


def messages(count: int):
    """(rclpy messages, their serialized bytes, arrays) of a smooth Puma motion."""
    names = list(RobotModel.named("puma560").joint_names)
    rng = np.random.default_rng(0)
    q, qd, tau = (rng.normal(size=(count, 6)) for _ in range(3))
    msgs = []
    for k in range(count):
        msg = JointState(name=names, position=q[k].tolist(), velocity=qd[k].tolist(),
                         effort=tau[k].tolist())
        msg.header.stamp.sec, msg.header.stamp.nanosec = 1_700_000_000 + k // 1000, \
            (k % 1000) * 1_000_000
        msgs.append(msg)
    return names, msgs, [bytes(serialize_message(m)) for m in msgs], (q, qd, tau)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true",
                        help="1,000 messages, one repeat: a check that the benchmark runs")
    args = parser.parse_args(argv)
    if args.quick:
        args.count, args.repeat = 1_000, 1
    names, msgs, raws, (q, qd, tau) = messages(args.count)
    store = typestore()
    order = JointOrder(names)
    stamps = np.array([m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in msgs])
    template = JointStateTemplate(names, ("position", "velocity", "effort"))
    ts_msgs = [store.deserialize_cdr(raw, JOINT_STATE) for raw in raws]

    def node_reader():
        reader = JointStateReader(order)
        for raw in raws:
            reader.read(raw)

    def node_reference():
        for raw in raws:
            msg = deserialize_message(raw, JointState)
            joint_state_values(msg, order)

    lists = [(a.tolist(), b.tolist(), c.tolist()) for a, b, c in zip(q, qd, tau)]

    def encode_one():                    # (the nodes hand it lists of floats)
        for k, (position, velocity, effort) in enumerate(lists):
            template.encode((0, k), position=position, velocity=velocity, effort=effort)

    rows = [
        ("decode a chunk (bags)", lambda: BatchDecoder().decode(raws),
         [("rosbags deserialize_cdr", lambda: [store.deserialize_cdr(r, JOINT_STATE)
                                               for r in raws]),
          ("rclpy deserialize_message", lambda: [deserialize_message(r, JointState)
                                                 for r in raws])]),
        ("read one + the nodes' checks", node_reader,
         [("rclpy deserialize + checks", node_reference)]),
        ("encode a chunk (bags)",
         lambda: template.encode_many(stamps, position=q, velocity=qd, effort=tau),
         [("rosbags serialize_cdr", lambda: [store.serialize_cdr(m, JOINT_STATE)
                                             for m in ts_msgs]),
          ("rclpy serialize_message", lambda: [serialize_message(m) for m in msgs])]),
        ("encode one (nodes)", encode_one,
         [("rclpy serialize_message", lambda: [serialize_message(m) for m in msgs])]),
    ]
    print(f"JointState codec, {args.count:,} Puma 560 messages (6 joints, position, velocity, "
          f"effort), per message, best of {args.repeat}:")
    for name, ours, references in rows:
        mine = best(ours, args.repeat) / args.count
        print(f"  {name:32s} {mine * 1e6:8.2f} us")
        for reference, function in references:
            theirs = best(function, args.repeat) / args.count
            print(f"    {reference:30s} {theirs * 1e6:8.2f} us  ({theirs / mine:5.1f} x the "
                  "codec's time)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
