"""
A bag recorded, or read, by the package in the Python of one distribution's venv.

Run as ``python distro_bag.py record BAG STORAGE TOPIC COUNT`` (the package's recorder,
``bags.record.record``, records ``COUNT`` JointState messages this process publishes, numbered
0..COUNT-1: positions ``[i, -i]``, stamps ``i`` s) or ``python distro_bag.py read BAG TOPIC``
(the package's reader: ``bag_info(check=True)`` and ``load_joint_states``).  Prints one JSON line
with the distribution of the rclpy it ran with.  test/bags/test_distributions.py runs it in the
venv of another distribution than its own.  Every wait is bounded.
"""
import json
import os
import signal
import sys
import threading
import time

from robot_dynamics_ros.messages.distro import current

NAMES = ["j1", "j2"]
TIMEOUT = 30.0


def publish(topic: str, count: int, done: threading.Event):
    """Publish ``count`` joint states once the recorder subscribes, then stop the recording."""
    import rclpy
    from sensor_msgs.msg import JointState
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = rclpy.create_node("distro_bag_publisher", context=context)
        publisher = node.create_publisher(JointState, topic, 100)
        end = time.monotonic() + TIMEOUT
        while publisher.get_subscription_count() == 0 and time.monotonic() < end:
            time.sleep(0.05)
        time.sleep(0.3)                       # the recorder's subscription matched both ways
        for i in range(count):
            msg = JointState(name=NAMES, position=[float(i), -float(i)])
            msg.header.stamp.sec = i
            publisher.publish(msg)
            time.sleep(0.01)
        time.sleep(0.5)                       # delivered before the stop (the recorder drains)
        node.destroy_node()
    finally:
        rclpy.shutdown(context=context)
        done.set()
        os.kill(os.getpid(), signal.SIGINT)   # what ends a recording: Ctrl-C


def main(argv):
    if argv[0] == "record":
        from robot_dynamics_ros.bags.record import record
        bag, storage, topic, count = argv[1], argv[2], argv[3], int(argv[4])
        done = threading.Event()
        thread = threading.Thread(target=publish, args=(topic, count, done), daemon=True)
        report = record(bag, [topic], storage=storage, duration=2 * TIMEOUT,
                        ready=thread.start)
        thread.join(TIMEOUT)
        out = {"counts": report.counts, "published": done.is_set()}
    else:
        from robot_dynamics_ros.bags import bag_info, load_joint_states
        bag, topic = argv[1], argv[2]
        info = bag_info(bag, check=True)
        states = load_joint_states(bag, topic)
        out = {"storage": info.storage, "count": info.topics[0].count,
               "position": states.position.tolist(), "stamp": states.stamp.tolist()}
    out["distro"] = current().name
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
