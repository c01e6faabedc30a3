"""trajectory_scaler_node: retimes joint trajectories so that no joint exceeds its limits.

  subscribes ``reference_trajectory``  trajectory_msgs/JointTrajectory
  publishes  ``scaled_trajectory``     trajectory_msgs/JointTrajectory, same path, new timing, with
                                       the feedforward ``effort`` of every point (for
                                       joint_trajectory_controller with an effort command interface)
  service    ``~/scale_trajectory``    robot_dynamics_interfaces/srv/ScaleTrajectory (request:
                                       trajectory, method; response: success, message, trajectory,
                                       scale_factor, duration)

Parameters (besides those of ``common``): ``method`` ``uniform`` (seed 002, Sect. 7.7: q(t / c)
with the smallest c >= 1) or ``time_optimal`` (minimum-time law along the same path);
``effort_margin`` / ``velocity_margin``: fraction of each effort / velocity limit that may be used
(e.g. 0.9); ``samples`` (uniform: samples of the original trajectory); ``grid_steps``
(time_optimal: steps of the path grid).

Uniform results keep the reference's fields (positions, velocities, accelerations as given), so the
controller interpolates exactly q(t / c).  Time-optimal results carry positions, velocities and
effort but no accelerations: their acceleration jumps at grid points, which the controller's
quintic (used when accelerations are given) would smooth with overshoot, while its cubic follows
the law (see core.time_optimal).  The header stamp of the reference is kept.

A trajectory that is malformed (non-increasing times, unknown or missing joints, NaN, positions
outside the limits), positions-only for ``time_optimal`` (its velocity jumps at waypoints need
infinite acceleration) or infeasible (gravity alone beyond an effort limit) is answered with the
reason (a warning for the topic, ``success: false`` for the service), never with a trajectory.
"""
from __future__ import annotations

from rcl_interfaces.msg import ParameterDescriptor
from robot_dynamics_interfaces.srv import ScaleTrajectory
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg

from ..core import Limits, ScalingError, uniform_scaling
from ..core import time_optimal_scaling
from ..ros_messages import MessageRejected, trajectory_from_msg, trajectory_to_msg
from .common import DynamicsNode, guarded, main_for

METHODS = ("uniform", "time_optimal")


class TrajectoryScalerNode(DynamicsNode):
    def __init__(self, node_name: str = "trajectory_scaler", **node_kwargs):
        super().__init__(node_name, **node_kwargs)
        describe = lambda text: ParameterDescriptor(description=text)   # noqa: E731
        self.declare_parameter("method", "uniform", describe("uniform | time_optimal"))
        self.declare_parameter("effort_margin", 1.0, describe("fraction of each effort limit to use, (0, 1]"))
        self.declare_parameter("velocity_margin", 1.0, describe("fraction of each velocity limit to use, (0, 1]"))
        self.declare_parameter("samples", 1000, describe("uniform: samples of the reference trajectory"))
        self.declare_parameter("grid_steps", 150, describe("time_optimal: steps of the path grid"))
        self.add_parameter_hook(self._scaler_parameters)
        self.publisher = self.create_publisher(JointTrajectoryMsg, "scaled_trajectory", self.qos())
        self.create_subscription(JointTrajectoryMsg, "reference_trajectory", self._on_trajectory, self.qos())
        self.create_service(ScaleTrajectory, "~/scale_trajectory", self._on_request)
        self.get_logger().info(f"trajectory scaler for '{self.dynamics.model.name}' ready "
                               f"(method {self.settings['method']})")

    def _scaler_parameters(self, values: dict):
        method = values["method"]
        if method not in METHODS:
            raise ValueError(f"method: expected one of {list(METHODS)}, got '{method}'")
        samples, steps = int(values["samples"]), int(values["grid_steps"])
        if samples < 10:
            raise ValueError(f"samples: expected at least 10, got {samples}")
        if steps < 10:
            raise ValueError(f"grid_steps: expected at least 10, got {steps}")
        margins = (float(values["effort_margin"]), float(values["velocity_margin"]))
        Limits.from_model(self.base_model, *margins)        # raises ValueError naming a bad margin
        settings = {"method": method, "margins": margins, "samples": samples, "grid_steps": steps}

        def apply():
            self.settings = settings
        return apply

    def scale(self, msg: JointTrajectoryMsg, method: str = ""):
        """(result, reordered output trajectory); raises MessageRejected with the reason."""
        settings, dynamics = self.settings, self.dynamics
        method = method or settings["method"]
        if method not in METHODS:
            raise MessageRejected("method", f"method: expected one of {list(METHODS)} (or empty), got '{method}'")
        model = dynamics.model
        # Unlike the inverse-dynamics nodes (which accept supersets, e.g. a gripper in
        # joint_states), a trajectory naming a joint the model does not know is refused: its motion
        # would be dropped from the answer without the sender knowing.
        unknown = [name for name in msg.joint_names if name not in self.input_order.names]
        if unknown:
            raise MessageRejected("unknown", f"reference_trajectory: unknown joint(s) {unknown} "
                                             f"(the robot has {list(self.input_order.names)})")
        traj = trajectory_from_msg(msg, self.input_order)
        limits = Limits.from_model(model, *settings["margins"])
        try:
            if method == "uniform":
                result = uniform_scaling(model, traj, limits, samples=settings["samples"])
            else:
                result = time_optimal_scaling(model, traj, limits, grid_steps=settings["grid_steps"])
        except ScalingError as exc:
            raise MessageRejected("infeasible", f"reference_trajectory: {exc}") from None
        except ValueError as exc:
            raise MessageRejected("trajectory", f"reference_trajectory: {exc}") from None
        return result, result.for_controller().reordered(self.joint_names)

    @guarded
    def _on_trajectory(self, msg: JointTrajectoryMsg):
        try:
            result, out = self.scale(msg)
        except MessageRejected as exc:
            self.reject(exc)
            return
        self.publisher.publish(trajectory_to_msg(out, msg.header.stamp))
        self.get_logger().info(f"published {result.method} scaling: {result.original_duration:.4g} s -> "
                               f"{result.duration:.4g} s (factor {result.scale_factor:.4g})")

    def _on_request(self, request, response):
        try:
            result, out = self.scale(request.trajectory, request.method)
            response.trajectory = trajectory_to_msg(out, request.trajectory.header.stamp)
            response.scale_factor, response.duration = float(result.scale_factor), float(result.duration)
            response.success, response.message = True, ""
        except MessageRejected as exc:
            response.success, response.message = False, str(exc)
        except Exception as exc:  # noqa: BLE001 -- a request must never crash the node
            response.success, response.message = False, f"internal error {type(exc).__name__}: {exc}"
        if not response.success:
            self.get_logger().warning(f"scale_trajectory request rejected: {response.message}")
        return response


main = main_for(TrajectoryScalerNode)

if __name__ == "__main__":
    main()
