"""
Managed dynamics nodes: rclpy lifecycle nodes, as ros2_control's controllers are.

A :class:`ManagedDynamicsNode` follows the ROS 2 node lifecycle (``ros2 lifecycle get/set``,
``~/change_state``, ``~/get_state``, ``~/transition_event``):

* created **unconfigured**: parameters declared, subscriptions, publishers and /diagnostics in
  place, no robot;
* ``configure`` loads and validates the robot (a bad one: the transition fails with the reason in
  the log and the node stays unconfigured) -> **inactive**;
* ``activate`` -> **active**: publishes; ``deactivate`` -> inactive: stops publishing, keeps the
  robot (a torque node first publishes one zero command, see ``nodes/torque_node.py``);
* ``cleanup`` forgets the robot -> unconfigured; ``shutdown`` from any state -> finalized
  (stopping as deactivate does when active); an error in a transition -> unconfigured.

Inputs that arrive while the node is not active are not used: each topic says so once per state
(in the log, with the command that activates the node), is counted in the diagnostics (whose
level is WARN and message says the state while not active), and a service call gets
``success: false`` saying the state (:meth:`ManagedDynamicsNode.require_active`).  With the
``autostart`` parameter (the launch file's and the bringup's ``autostart:=true``, their default)
the node configures and activates itself once created (:meth:`ManagedDynamicsNode.start`).
"""
from __future__ import annotations

from collections import Counter

from rclpy.lifecycle import TransitionCallbackReturn

from ..core import InputError
from .lifecycle import lifecycle_node_class
from .base import OVERRIDABLE, DynamicsNodeBase
from .diagnostics import Extra
from .errors import describe

SUCCESS = TransitionCallbackReturn.SUCCESS


class ManagedDynamicsNode(DynamicsNodeBase, lifecycle_node_class()):
    """A dynamics node with the ROS 2 lifecycle (see the module docstring)."""

    PARAMETER_TABLES = ("common", "managed")
    active = False

    def __init__(self, node_name: str, **node_kwargs):
        self.lifecycle_state = "unconfigured"
        self.configure_error = ""
        self.inactive_inputs: Counter = Counter()      # topic -> messages not used, not active
        self._said_inactive: set = set()
        super().__init__(node_name, **node_kwargs)
        self.autostart = bool(self.get_parameter("autostart").value)

    def start(self) -> bool:
        """
        With ``autostart``, configure and activate now; False if configure failed.

        Without, say how to configure the node (a lifecycle manager or ``ros2 lifecycle`` will).
        """
        if not self.autostart:
            self.get_logger().info(f"unconfigured (autostart false): {self._next_step()}")
            return True
        if self.trigger_configure() != SUCCESS:
            return False
        return self.trigger_activate() == SUCCESS

    def how_to(self, transition: str) -> str:
        """Say the command that triggers ``transition`` on this node."""
        return f"`ros2 lifecycle set {self.get_fully_qualified_name()} {transition}`"

    def lifecycle_label(self) -> str:
        """Return the primary state: unconfigured, inactive, active or finalized."""
        return self.lifecycle_state

    def _entered(self, state: str, result):
        if result == SUCCESS:
            self.lifecycle_state = state
            self._said_inactive.clear()
            self.get_logger().info(f"{state}" + {
                "inactive": f": robot {self.robot_label}, nothing published until activated",
                "active": ": publishing", "unconfigured": ": robot released",
                "finalized": ""}[state])
        return result

    # -- transitions ---------------------------------------------------------------------------
    def on_configure(self, state):
        """Load and validate the robot; on an error fail with the reason (stay unconfigured)."""
        try:
            self.configure_robot()
        except Exception as exc:  # noqa: BLE001 -- any error is the reason configure failed
            self.configure_error = describe(exc)[1]
            self.get_logger().error(f"configure failed: {self.configure_error}")
            self.release_robot()
            return TransitionCallbackReturn.FAILURE
        self.configure_error = ""
        return self._entered("inactive", super().on_configure(state))

    def on_activate(self, state):
        """Enable the publishers; from now on inputs produce outputs."""
        result = super().on_activate(state)
        if result == SUCCESS:
            for watch in self.watchdog.watches:        # the input timeout starts afresh
                watch.last, watch.stale = None, False
            self.activated()
            self.active = True
        return self._entered("active", result)

    def on_deactivate(self, state):
        """Stop using inputs (after :meth:`deactivating`), then disable the publishers."""
        self.active = False
        self.deactivating()
        return self._entered("inactive", super().on_deactivate(state))

    def on_cleanup(self, state):
        """Forget the robot."""
        self.release_robot()
        return self._entered("unconfigured", super().on_cleanup(state))

    def on_shutdown(self, state):
        """Stop as deactivate does when active; forget the robot."""
        if self.active:
            self.active = False
            self.deactivating()
        self.release_robot()
        return self._entered("finalized", super().on_shutdown(state))

    def on_error(self, state):
        """After an error in a transition: stop, forget the robot, go back to unconfigured."""
        self.active = False
        self.release_robot()
        self.get_logger().error("a lifecycle transition failed: robot released, unconfigured")
        return self._entered("unconfigured", SUCCESS)

    def activated(self):
        """Do what a node does as it becomes active (override)."""

    def deactivating(self):
        """Do what a node does as it stops being active, publishers still enabled (override)."""

    # -- inputs and requests while not active ------------------------------------------------
    def _check_inputs(self):
        """Watch the input timeout only while active (not active, inputs are not used)."""
        if self.active:
            super()._check_inputs()

    def accepts_input(self, topic: str, refused: bool = False) -> bool:
        """
        Return True when an input on ``topic`` is to be computed on.

        Not while the node is inactive (said by :meth:`inactive_input`) or has no model yet
        (said by ``waiting_for_model``): the torque nodes and the observer start every input
        callback with this (``refused``: as for :meth:`inactive_input`).
        """
        if not self.active:
            self.inactive_input(topic, refused)
            return False
        return not self.waiting_for_model()

    def inactive_input(self, topic: str, refused: bool = False):
        """
        Count a message on ``topic`` that came while the node is not active; say so once.

        ``refused``: a command the sender expects to be used (a reference), said as a warning;
        otherwise (a stream such as joint_states) as information.
        """
        self.inactive_inputs[topic] += 1
        if topic in self._said_inactive:
            return
        self._said_inactive.add(topic)
        log = self.get_logger().warning if refused else self.get_logger().info
        log(f"'{topic}' received while {self.lifecycle_state}: "
            + ("refused, not kept" if refused else "not used") + f", nothing published; "
            f"{self._next_step()}")

    def _next_step(self) -> str:
        if self.lifecycle_state == "unconfigured":
            return f"configure and activate the node ({self.how_to('configure')}, then " \
                f"{self.how_to('activate')})"
        return f"activate the node ({self.how_to('activate')})"

    def require_active(self):
        """Raise InputError saying the state unless the node is active (for service requests)."""
        if not self.active:
            raise InputError(f"{self.get_fully_qualified_name()} is {self.lifecycle_state}: "
                             f"nothing is computed; {self._next_step()}")

    def diagnostic_extra(self) -> Extra:
        """Add the lifecycle state and the inputs not used while not active."""
        values = [("lifecycle state", self.lifecycle_state)]
        values += [(f"{topic}: messages not used while not active", count)
                   for topic, count in sorted(self.inactive_inputs.items())]
        not_active = "" if self.active else \
            f"{self.lifecycle_state}: nothing published; {self._next_step()}"
        return Extra(values, [], not_active)

    # -- outputs -------------------------------------------------------------------------------
    def advertise(self, msg_type, topic: str, qos=None):
        """Create a lifecycle publisher (enabled while active), QoS overridable."""
        return self.create_lifecycle_publisher(msg_type, topic, qos or self.qos(),
                                               qos_overriding_options=OVERRIDABLE)
