"""
trajectory_proxy_node: a FollowJointTrajectory action between a planner and the controller.

Interfaces::

  action server ``~/follow_joint_trajectory``  control_msgs/action/FollowJointTrajectory: the
                goal MoveIt (or any planner) sends to a controller
  action client ``/<controller_name>/<controller_action_ns>``  the same action of the real
                controller (``controller_name`` empty and no ``moveit_controllers`` file:
                ``joint_trajectory_controller``)

Each goal's trajectory is scaled as trajectory_scaler_node scales it (this node is one: the same
parameter table ``trajectory_scaler``, limits, ``joint_limits`` file, tool speed, payload and
constraint list) and forwarded with every other field of the goal unchanged (path and goal
tolerances, their component forms, goal_time_tolerance, the trajectory's header). The
controller's feedback is relayed as it comes (its ``index`` counts the scaled points), its
result (error_code, error_string) and final state are the goal's. A cancel of the goal cancels
the controller's goal; a goal the controller aborts, or cancels by itself (preempted by a newer
goal), is aborted with the controller's error_code and error_string.

A goal that cannot be made feasible is aborted at once, never forwarded: error_code
INVALID_JOINTS for joints the model (or the moveit_controllers entry) does not have or lacks, or
a multi_dof_trajectory (this node scales joint trajectories only); INVALID_GOAL for the rest
(malformed trajectory, limits that gravity alone exceeds, ...), error_string saying why. (An
action server can only accept or reject a goal, without a reason; accepting and aborting gives
the planner the reason: MoveIt logs the error_string.)

Parameters: tables ``common``, ``trajectory_scaler`` and ``trajectory_proxy`` (doc/parameters.md).
"""
from __future__ import annotations

import time

from action_msgs.msg import GoalStatus
from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionClient, ActionServer, CancelResponse, GoalResponse
from rclpy.task import Future

from ..core import InputError
from ..core.trajectories.moveit_controllers import controller_action
from ..messages.conversions import MessageRejected
from ..messages.ros import trajectory_to_msg
from .base import main_for
from .errors import describe
from .executor import SINGLE
from .trajectory_scaler import TrajectoryScalerNode

DEFAULT_CONTROLLER = "joint_trajectory_controller"     # controller_name and the file empty

Result = FollowJointTrajectory.Result


class GoalRefused(Exception):
    """A goal that cannot be made feasible: the result's error_code and error_string."""

    def __init__(self, code: int, reason: str):
        super().__init__(reason)
        self.code = code


class TrajectoryProxyNode(TrajectoryScalerNode):
    """Scales FollowJointTrajectory goals and forwards them to the controller's action."""

    PARAMETER_TABLES = ("common", "trajectory_scaler", "trajectory_proxy")
    # (its goals await the controller: on the EventsExecutor that wait would spin a core;
    # nodes/executor.py)
    EXECUTOR = SINGLE

    def __init__(self, node_name: str = "trajectory_proxy", **node_kwargs):
        super().__init__(node_name, **node_kwargs)

    def create_interfaces(self):
        """Create the action server and the controller's action client (no topic, no service)."""
        name, controller = self.controller()
        action_ns = self.get_parameter("controller_action_ns").value
        self.controller_joints = ()
        if controller is not None:                      # (a bad file stopped the node)
            action_ns, self.controller_joints = controller.action_ns, controller.joints
            unknown = sorted(set(controller.joints) - set(self.joint_names))
            if unknown and self.joint_names:    # (a robot from the topic: checked per goal)
                path = self.get_parameter("moveit_controllers").value
                raise InputError(f"moveit_controllers {path}: controller '{name}' has joints "
                                 f"{unknown} that the robot does not")
        name = name or DEFAULT_CONTROLLER
        self.controller_action = controller_action(name, action_ns)
        self.client = ActionClient(self, FollowJointTrajectory, self.controller_action)
        self.server = ActionServer(self, FollowJointTrajectory, "~/follow_joint_trajectory",
                                   execute_callback=self.execute,
                                   goal_callback=lambda goal: GoalResponse.ACCEPT,
                                   cancel_callback=self.on_cancel)
        self._downstream = {}           # upstream goal id (bytes) -> controller's goal handle
        self.get_logger().info(f"forwarding scaled goals to {self.controller_action}")

    def destroy_node(self):
        self.server.destroy()
        self.client.destroy()
        super().destroy_node()

    def scaled_goal(self, goal) -> FollowJointTrajectory.Goal:
        """Return ``goal`` with its trajectory scaled; raises GoalRefused with the reason."""
        multi = goal.multi_dof_trajectory
        if multi.joint_names or multi.points:
            raise GoalRefused(Result.INVALID_JOINTS, "multi_dof_trajectory: "
                              f"{len(multi.joint_names)} joints, {len(multi.points)} points: "
                              "this proxy scales joint trajectories only (send it empty)")
        try:
            self.require_model()
        except ValueError as exc:           # no robot yet (robot_description from the topic)
            raise GoalRefused(Result.INVALID_GOAL, describe(exc)[1]) from None
        names = set(goal.trajectory.joint_names)
        unknown = sorted(names - set(self.joint_names))
        if unknown:
            raise GoalRefused(Result.INVALID_JOINTS, f"trajectory: joints {unknown} are not "
                              f"joints of {self.robot_label}")
        missing = sorted(set(self.controller_joints) - names)
        if missing:
            raise GoalRefused(Result.INVALID_JOINTS, f"trajectory: joints {missing} of the "
                              "controller missing (it moves them all)")
        try:
            _, out = self.scale(goal.trajectory, what="goal trajectory")
        except MessageRejected as exc:
            code = Result.INVALID_JOINTS if exc.kind == "joint names" else Result.INVALID_GOAL
            raise GoalRefused(code, describe(exc)[1]) from None
        except ValueError as exc:           # the core's errors (InfeasibleError, ...) included
            raise GoalRefused(Result.INVALID_GOAL, describe(exc)[1]) from None
        forwarded = FollowJointTrajectory.Goal()
        for field in ("multi_dof_trajectory", "path_tolerance", "component_path_tolerance",
                      "goal_tolerance", "component_goal_tolerance", "goal_time_tolerance"):
            setattr(forwarded, field, getattr(goal, field))
        forwarded.trajectory = trajectory_to_msg(out, effort=self.settings.include_effort)
        forwarded.trajectory.header = goal.trajectory.header
        return forwarded

    def on_cancel(self, goal_handle):
        """Accept the cancel; the controller's goal is cancelled and its outcome reported."""
        downstream = self._downstream.get(bytes(goal_handle.goal_id.uuid))
        if downstream is not None:
            downstream.cancel_goal_async()
        return CancelResponse.ACCEPT

    async def execute(self, goal_handle):
        """Scale, forward, relay: the result is the controller's (or the reason it never was)."""
        try:
            forwarded = self.scaled_goal(goal_handle.request)
        except GoalRefused as exc:
            return self._abort(goal_handle, exc.code, str(exc))
        if goal_handle.is_cancel_requested:
            goal_handle.canceled()
            return Result(error_string="canceled before it was forwarded")
        if not await self._controller_ready():
            return self._abort(goal_handle, Result.INVALID_GOAL,
                               f"controller action {self.controller_action} is not available")
        downstream = await self.client.send_goal_async(
            forwarded, feedback_callback=lambda msg: goal_handle.publish_feedback(msg.feedback))
        if not downstream.accepted:
            hint = (" (a joint_trajectory_controller without an effort command interface refuses "
                    "the points' effort: set include_effort false)"
                    if self.settings.include_effort else "")
            return self._abort(goal_handle, Result.INVALID_GOAL, f"the controller "
                               f"({self.controller_action}) rejected the goal{hint}")
        key = bytes(goal_handle.goal_id.uuid)
        self._downstream[key] = downstream
        try:
            if goal_handle.is_cancel_requested:     # cancelled while being forwarded
                downstream.cancel_goal_async()
            answer = await self._result_or_lost(downstream)
        finally:
            self._downstream.pop(key, None)
        if answer is None:
            return self._abort(goal_handle, Result.INVALID_GOAL, f"the controller action "
                               f"{self.controller_action} disappeared during the goal (no "
                               f"server for {self._timeout():g} s): its outcome is unknown")
        return self._finish(goal_handle, answer.status, answer.result)

    async def _result_or_lost(self, downstream):
        """
        Return the controller's result, or None once its server has been gone controller_timeout.

        A controller that dies mid-goal never answers; without this the planner's goal would wait
        for ever (MoveIt's own execution monitoring would only time out much later).
        """
        result = downstream.get_result_async()
        gone_since = None
        while not result.done():
            if self.client.server_is_ready():
                gone_since = None
            elif gone_since is None:
                gone_since = time.monotonic()
            elif time.monotonic() - gone_since >= self._timeout():
                return None
            await self._sleep(0.05)
        return result.result()

    def _timeout(self) -> float:
        return self.get_parameter("controller_timeout").value

    def _finish(self, goal_handle, status: int, result):
        """End the goal as the controller ended its goal."""
        if status == GoalStatus.STATUS_SUCCEEDED:
            goal_handle.succeed()
        elif status == GoalStatus.STATUS_CANCELED and goal_handle.is_cancel_requested:
            goal_handle.canceled()
        else:
            if not result.error_string:
                result.error_string = (f"the controller ({self.controller_action}) ended the "
                                       f"goal with status {status}")
            self.get_logger().warning(f"goal aborted by the controller: error_code "
                                      f"{result.error_code}, {result.error_string}")
            goal_handle.abort()
        return result

    def _abort(self, goal_handle, code: int, reason: str):
        self.get_logger().warning(f"goal refused: {reason}")
        goal_handle.abort()
        return Result(error_code=code, error_string=reason)

    async def _controller_ready(self) -> bool:
        """Wait (bounded by controller_timeout) for the controller's action server."""
        end = time.monotonic() + self._timeout()
        while not self.client.server_is_ready():
            if time.monotonic() >= end:
                return False
            await self._sleep(0.05)
        return True

    async def _sleep(self, seconds: float):
        done = Future()

        def wake():
            timer.cancel()
            done.set_result(True)
        timer = self.create_timer(seconds, wake)
        try:
            await done
        finally:
            self.destroy_timer(timer)


main = main_for(TrajectoryProxyNode)

if __name__ == "__main__":
    main()
