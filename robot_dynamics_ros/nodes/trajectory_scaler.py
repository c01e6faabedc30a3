"""
trajectory_scaler_node: retimes joint trajectories so that no joint exceeds its limits.

Interfaces::

  subscribes ``reference_trajectory``  trajectory_msgs/JointTrajectory
  publishes  ``scaled_trajectory``     trajectory_msgs/JointTrajectory (transient local: a
                                       controller that starts later still gets the last one;
                                       with ``controller_name`` or ``moveit_controllers``:
                                       ``/<controller>/joint_trajectory``, the topic of
                                       joint_trajectory_controller, unless remapped),
                                       same path, new timing, with the feedforward ``effort`` of
                                       every point (``include_effort``, default true) or
                                       without (false: for the joint_trajectory_controllers
                                       that refuse effort, see doc/nodes.md)
  service    ``~/scale_trajectory``    robot_dynamics_interfaces/srv/ScaleTrajectory (request:
                                       trajectory, method; response: success, message, trajectory,
                                       scale_factor, duration)

Parameters (tables ``common`` and ``trajectory_scaler``, doc/parameters.md): ``method``
``uniform`` (Siciliano et al. 2009, Sect. 7.7: q(t / c) with the smallest c >= 1) or
``time_optimal`` (minimum-time law along the same path); ``effort_margin`` / ``velocity_margin`` /
``acceleration_margin``: fraction of each effort / velocity / acceleration limit that may be used
(e.g. 0.9); ``acceleration_limit``: 0 for the robot file's ``limits.acceleration`` (none where
absent), > 0 to override it for every joint; ``joint_limits``: a MoveIt ``joint_limits.yaml``
whose velocity, acceleration, jerk and effort limits replace the robot's
(``core.trajectories.joint_limits_file``; with jerk limits for every joint, ``time_optimal``
returns the jerk-limited law, ``core.trajectories.topp.jerk_limited``); ``include_effort``;
``samples``
(uniform: samples of the original trajectory); ``grid_steps`` (time_optimal: steps of the path
grid); ``tool_speed`` / ``tool_angular_speed`` (> 0: limits of the speed of ``tool_frame``,
``core.trajectories.topp.tool_speed``); ``payload`` (a file: the torques are those of the robot
carrying it).  Each is bounded, and so is the size of a trajectory (``MAX_POINTS``), so that no
single request can take the node's memory or minutes of its time: on the topic the size is read
from the serialized message, for the service from the C message rmw filled
(``nodes/bounded_requests.py``), in both cases before rclpy would convert it to Python objects.
After a large input the node gives the freed memory back to the system (``nodes/memory.py``).

Uniform results keep the reference's fields (positions, velocities, accelerations as given), so the
controller interpolates exactly q(t / c).  Time-optimal results carry positions, velocities and
effort but no accelerations: their acceleration jumps at grid points, which the controller's
quintic (used when accelerations are given) would smooth with overshoot, while its cubic follows
the law (see core.trajectories).  Jerk-limited results carry accelerations too (continuous: the
controller's quintics keep every limit).  The header stamp of the reference is kept.

A trajectory that is malformed (non-increasing times, unknown or missing joints, NaN, positions
outside the limits), positions-only for ``time_optimal`` (its velocity jumps at waypoints need
infinite acceleration) or infeasible (gravity alone beyond an effort limit) is answered with the
reason (a warning for the topic, ``success: false`` for the service), never with a trajectory.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from robot_dynamics_interfaces.srv import ScaleTrajectory
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg

from ..core import InputError, Limits, time_optimal_scaling, uniform_scaling
from ..core.algorithms.route import select
from ..core.trajectories.joint_limits_file import load_joint_limits
from ..core.trajectories.limits import with_jerk
from ..core.trajectories.moveit_controllers import controller_topic, read_controller
from ..core.trajectories.topp.constraint_set import Payload, path_uniform_factor
from ..core.trajectories.topp.from_parameters import constraint_list
from ..core.trajectories.topp.jerk_limited import jerk_limited_scaling
from ..messages.conversions import MAX_MESSAGE_JOINTS, trajectory_from_msg
from ..messages.ros import trajectory_to_msg
from .base import DynamicsNode, main_for
from .bounded_requests import Oversize, bounded_trajectory_service, refuse_oversize
from .errors import service_guard, topic_guard

METHODS = ("uniform", "time_optimal")
MAX_POINTS = 10_000           # waypoints of one trajectory to scale
TRIM_AFTER_POINTS = 1_000     # a request this large: give its memory back once answered


class ScalerSettings(NamedTuple):
    """The scaler's parameters, validated together."""

    method: str
    effort_margin: float
    velocity_margin: float
    acceleration_margin: float
    acceleration_limit: float
    samples: int
    grid_steps: int
    include_effort: bool
    tool_speed: float
    tool_angular_speed: float
    tool_frame: str


class TrajectoryScalerNode(DynamicsNode):
    """Uniform or time-optimal re-timing of trajectories, by topic and by service."""

    PARAMETER_TABLES = ("common", "trajectory_scaler")
    WARM_UP_SCALING = True          # (base.warm_up: the time-optimal passes loaded at start)

    def __init__(self, node_name: str = "trajectory_scaler", **node_kwargs):
        super().__init__(node_name, **node_kwargs)
        self.params.add_hook(self._scaler_parameters)
        self.joint_limits = self._joint_limits(self.get_parameter("joint_limits").value)
        payload = self.get_parameter("payload").value
        self.payload = Payload.from_yaml(payload) if payload else None    # a bad one: stops
        self._carried = None
        self._said_jerk = False
        self.create_interfaces()
        self.get_logger().info(f"{self.get_name()} for {self.robot_label} ready "
                               f"(method {self.settings.method})")

    def create_interfaces(self):
        """Create the topics and the service (the FollowJointTrajectory proxy has its own)."""
        self.output_topic = self._output_topic()
        self.publisher = self.advertise(JointTrajectoryMsg, self.output_topic, QoSProfile(
            depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
            durability=DurabilityPolicy.TRANSIENT_LOCAL))
        self.subscribe_trajectory("reference_trajectory", self.on_trajectory, MAX_POINTS)
        # sizes checked before rclpy converts a request (nodes/bounded_requests.py); after a
        # large one, refused or not, the same trimmer as the topic's gives the memory back
        bounded_trajectory_service(
            self, ScaleTrajectory, "~/scale_trajectory",
            service_guard(self.get_logger(), "scale_trajectory", self.on_request),
            MAX_MESSAGE_JOINTS, MAX_POINTS)

    def controller(self):
        """
        Return the controller of the parameters: (name, its moveit_controllers entry or None).

        ``moveit_controllers`` given: ``controller_name`` looked up in it (empty: its default
        controller; a bad file or name stops the node with the reason).
        """
        name = self.get_parameter("controller_name").value
        path = self.get_parameter("moveit_controllers").value
        if not path:
            return name, None
        entry = read_controller(path, name)
        return entry.name, entry

    def _output_topic(self) -> str:
        """
        Return the topic of the scaled trajectories (issue 32).

        ``scaled_trajectory``, or with a controller the one joint_trajectory_controller reads,
        ``/<controller>/joint_trajectory``; a remapping of ``scaled_trajectory`` still wins (the
        name resolves to something else than its plain expansion).
        """
        name, _ = self.controller()
        remapped = (self.resolve_topic_name("scaled_trajectory")
                    != self.resolve_topic_name("scaled_trajectory", only_expand=True))
        if not name or remapped:
            return "scaled_trajectory"
        topic = controller_topic(name)
        self.get_logger().info(f"publishing scaled trajectories to {topic} (controller '{name}')")
        return topic

    def _scaler_parameters(self, values: dict):
        settings = ScalerSettings(values["method"], float(values["effort_margin"]),
                                  float(values["velocity_margin"]),
                                  float(values["acceleration_margin"]),
                                  float(values["acceleration_limit"]), int(values["samples"]),
                                  int(values["grid_steps"]), bool(values["include_effort"]),
                                  float(values["tool_speed"]),
                                  float(values["tool_angular_speed"]), str(values["tool_frame"]))

        def apply():
            self.settings = settings
        return apply

    def _kernel(self, model):
        """Return the dynamics of ``model`` (``core.algorithms.route.select``), once per model."""
        kernel = getattr(self, "_selected", None)
        if kernel is None or kernel.model is not model:
            kernel = self._selected = select(model)
        return kernel

    def _joint_limits(self, path: str):
        """Read the ``joint_limits`` file (a bad one stops the node with the reason)."""
        if not path:
            return None
        limits = load_joint_limits(path)
        limits.overrides(self.dynamics.model)           # another robot's file: refused now
        self.get_logger().info(f"joint_limits {limits.summary(self.dynamics.model)}")
        return limits

    def limits(self, model, settings: ScalerSettings, method: str) -> Limits:
        """Return the limits of a request: the robot's, the joint_limits file's, the margins."""
        given = {} if self.joint_limits is None else self.joint_limits.overrides(model)
        limits = Limits.from_model(model, settings.effort_margin, settings.velocity_margin,
                                   settings.acceleration_margin,
                                   settings.acceleration_limit or given.get("acceleration"),
                                   velocity=given.get("velocity"), effort=given.get("effort"))
        limits = with_jerk(limits, given.get("jerk"))
        finite = np.isfinite(limits.jerk)
        if method == "time_optimal" and finite.any() and not finite.all() and not self._said_jerk:
            self._said_jerk = True
            missing = [n for n, f in zip(model.joint_names, finite) if not f]
            self.get_logger().warning(f"joint_limits: no jerk limit for {missing}: time_optimal "
                                      "keeps jerk limits only when every joint has one "
                                      "(uniform applies those given)")
        return limits

    def _carrying(self, model):
        """Return ``model`` carrying the ``payload`` (built once per model)."""
        if self.payload is None:
            return model
        if self._carried is None or self._carried[0] is not model:
            self._carried = (model, self.payload.carried_by(model))
        return self._carried[1]

    def constraints(self, limits: Limits, settings: ScalerSettings) -> list:
        """Return the constraint list of the parameters (the payload is in the model)."""
        return constraint_list(limits, settings.tool_speed or None,
                               settings.tool_angular_speed or None, frame=settings.tool_frame)

    def scale(self, msg: JointTrajectoryMsg, method: str = "", what: str = "trajectory"):
        """Scale ``msg``: (result, output in the joint_names order); raises with the reason."""
        settings = self.settings
        model = self._carrying(self.require_model().model)
        method = method or settings.method
        if method not in METHODS:
            raise InputError(f"method: expected one of {list(METHODS)} (or empty), got '{method}'")
        if len(msg.points) > MAX_POINTS:
            raise InputError(f"trajectory: {len(msg.points)} points, more than the {MAX_POINTS} "
                             "this node scales in one request")
        # Unlike the inverse-dynamics nodes (which accept supersets, e.g. a gripper in
        # joint_states), a trajectory naming a joint the model does not know is refused: its motion
        # would be dropped from the answer without the sender knowing.
        traj = trajectory_from_msg(msg, self.input_order, allow_extra=False, what=what)
        limits = self.limits(model, settings, method)
        constraints = self.constraints(limits, settings)
        if method == "uniform":
            result = uniform_scaling(model, traj, limits, samples=settings.samples,
                                     min_scale=path_uniform_factor(model, traj, constraints))
        else:
            result = time_optimal_scaling(model, traj, constraints,
                                          grid_steps=settings.grid_steps,
                                          dynamics=self._kernel(model))
            if np.isfinite(limits.jerk).all():      # as the command: the jerk-limited law
                result = jerk_limited_scaling(model, traj, constraints,
                                              dynamics=self._kernel(model), optimal=result)
        return result, result.for_controller().reordered(self.joint_names)

    @topic_guard
    def on_trajectory(self, msg: JointTrajectoryMsg):
        if self.waiting_for_model():
            return
        result, out = self.scale(msg, what="reference_trajectory")
        self.publisher.publish(trajectory_to_msg(out, msg.header.stamp,
                                                 effort=self.settings.include_effort))
        self.get_logger().info(f"published {result.method} scaling: "
                               f"{result.original_duration:.4g} s -> {result.duration:.4g} s "
                               f"(factor {result.scale_factor:.4g})")

    def on_request(self, request, response):
        if isinstance(request, Oversize) or len(request.trajectory.points) > TRIM_AFTER_POINTS:
            self.trimmer.soon()         # the freed heap (of the C message, at least) given back
        refuse_oversize(request)
        result, out = self.scale(request.trajectory, request.method)
        response.trajectory = trajectory_to_msg(out, request.trajectory.header.stamp,
                                                effort=self.settings.include_effort)
        response.scale_factor = float(result.scale_factor)
        response.duration = float(result.duration)


main = main_for(TrajectoryScalerNode)

if __name__ == "__main__":
    main()
