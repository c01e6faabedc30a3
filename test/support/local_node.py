"""
Nodes made in the test's process on a private rclpy context, their callbacks called directly.

No executor spins them and nothing needs to cross DDS: a test calls a node's subscription
callbacks with messages and reads what it published from :class:`Published` (the node's
publishers' ``publish`` replaced by a recorder).  Used by the input tests of issue 31 and the
fuzz suite (test/nodes/test_fuzz_inputs.py).
"""
from contextlib import contextmanager

from ros_fixtures import private_namespace


class Published:
    """Every message a node published, per topic (in order)."""

    def __init__(self):
        self.messages: dict[str, list] = {}

    def recorder(self, topic: str, msg_type):
        def publish(msg):
            if isinstance(msg, (bytes, bytearray)):        # (a node's serialized output)
                from rclpy.serialization import deserialize_message
                msg = deserialize_message(bytes(msg), msg_type)
            self.messages.setdefault(topic, []).append(msg)
        return publish

    def count(self) -> int:
        return sum(len(v) for v in self.messages.values())

    def clear(self):
        self.messages.clear()


class Logged:
    """A stand-in for a node's logger that keeps what was said, by level (and says nothing)."""

    def __init__(self):
        self.lines = []

    def __getattr__(self, level):
        def say(text, **kwargs):
            self.lines.append((level, text))
        return say


def record(node, *publishers) -> Published:
    """Replace each publisher's ``publish`` by a recorder; return the record."""
    published = Published()
    for publisher in publishers:
        publisher.publish = published.recorder(publisher.topic_name.rsplit("/", 1)[-1],
                                               publisher.msg_type)
    return published


@contextmanager
def local_node(node_class, tag: str, **parameters):
    """Create ``node_class`` with ``parameters`` on a private context, started; destroyed after."""
    import rclpy
    from rclpy.parameter import Parameter
    context = rclpy.Context()
    rclpy.init(context=context)
    node = None
    try:
        node = node_class(tag, namespace=private_namespace(tag), context=context,
                          parameter_overrides=[Parameter(k, value=v)
                                               for k, v in parameters.items()])
        assert node.start()
        yield node
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown(context=context)
