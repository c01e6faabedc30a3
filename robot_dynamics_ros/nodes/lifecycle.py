"""
The managed nodes' LifecycleNode, the same behaviour on every supported distribution.

Which behaviour a distribution gets is in ``messages/distro.py`` (the one table); this module
applies the lifecycle row of it, since it needs rclpy.
"""
from __future__ import annotations

from functools import lru_cache

from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.lifecycle import LifecycleNode, TransitionCallbackReturn

from ..messages.distro import current


def lifecycle_node_class():
    """
    Return the LifecycleNode class the managed nodes derive from, the same behaviour on each.

    On Kilted, rclpy's own.  On Jazzy, rclpy's with its transition step guarded: a requested
    transition that the state machine does not have from the current state (``activate`` while
    unconfigured) makes rclpy 7.1 raise RCLError from the ``~/change_state`` service callback,
    which stops the executor and the node; here it is logged and answered ``success: false``,
    what rclpy 9 does (its ``LifecycleNodeMixin.__change_state``).
    """
    if current().lifecycle_refuses_unavailable_transition:
        return LifecycleNode
    return _guarded_lifecycle_node(LifecycleNode)


@lru_cache(maxsize=1)
def _guarded_lifecycle_node(base):
    change_state = base._LifecycleNodeMixin__change_state

    def guarded(self, transition_id: int):
        if self._state_machine.initialized and transition_id not in {
                t[0] for t in self._state_machine.available_transitions}:
            self.get_logger().error(f"Unable to start transition {transition_id} from current "
                                    f"state {self._state_machine.current_state}")
            return TransitionCallbackReturn.ERROR
        try:
            return change_state(self, transition_id)
        except _rclpy.RCLError as exc:
            self.get_logger().error(f"transition {transition_id} failed: {exc}")
            return TransitionCallbackReturn.ERROR

    return type("LifecycleNode", (base,), {"_LifecycleNodeMixin__change_state": guarded,
                                           "__doc__": base.__doc__})
