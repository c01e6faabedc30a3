"""
Torque nodes: managed nodes that command joint torques (inverse_dynamics, gravity_compensation).

On top of :class:`~robot_dynamics_ros.nodes.managed.ManagedDynamicsNode`:

* **Effort limits** (``effort_limit_policy``: clamp, warn, off; ``effort_limits``): every
  command goes through the model's :class:`~robot_dynamics_ros.core.control.EffortLimiter`
  before it is published (``nodes/outputs.py``), so with ``clamp`` (the default) no command
  leaves above a joint's limit.  Commands above a limit are counted per joint; the diagnostics
  give the counts and the worst ratio |tau| / limit (WARN when any came since the last report)
  and the log says so at most once per second.  ``clamp`` with a joint whose limit is unknown is
  refused (at configure, or when the policy is set) naming the joint, unless ``effort_limits``
  gives it.  ``effort_limits`` above the robot description's limit of a joint are refused
  (naming it) unless ``allow_above_description`` is true: a safety limit is not raised by
  mistake (issue 31, L1).
* **The stop command**: deactivating (or shutting down) a node that has published commands since
  it was activated publishes one **zero** command on its outputs before the publishers stop.
  That is what ros2_controllers' effort controllers write when they are deactivated
  (JointGroupEffortController::on_deactivate: "stop all joints", 0.0 on every command
  interface, Humble to Rolling), and it matters because the controller that receives our
  commands (JointGroupEffortController, forward_command_controller) keeps applying the last one
  it got, with no timeout: a last holding torque g(q) would stay applied however the arm moves
  afterwards.  A node that published nothing while active stays silent (it must not overwrite
  the commands of another node wired to the same controller).
"""
from __future__ import annotations

import numpy as np

from ..core.control import CLAMP, EffortLimiter, effective_limits
from .diagnostics import Extra
from .managed import ManagedDynamicsNode

LIMIT_LOG_PERIOD = 1.0          # s (steady clock): at most one effort-limit line per period


class TorqueNode(ManagedDynamicsNode):
    """A managed node whose outputs are joint torque commands (see the module docstring)."""

    PARAMETER_TABLES = ("common", "managed", "torque_outputs")

    def __init__(self, node_name: str, **node_kwargs):
        self.limiter: EffortLimiter | None = None
        # commands above a limit not yet said: [count, worst ratio, its joint] per reader
        self._limit_pending = {"log": [0, 0.0, ""], "diagnostics": [0, 0.0, ""]}
        super().__init__(node_name, **node_kwargs)
        self.params.add_hook(self._limit_parameters)
        self.create_timer(LIMIT_LOG_PERIOD, self._log_limits, clock=self._steady)

    # -- effort limits ---------------------------------------------------------------------------
    def limiter_for(self, values: dict, model, joint_names, output_index) -> EffortLimiter:
        """Build the limiter of ``model`` from the parameter ``values``; raise with the reason."""
        given = values["effort_limits"]
        model_order = None
        if len(given):
            if len(given) != len(joint_names):
                raise ValueError(f"effort_limits: expected {len(joint_names)} values (one per "
                                 f"joint in {list(joint_names)}; 0 keeps the robot's), got "
                                 f"{len(given)}")
            model_order = np.empty(len(given))
            model_order[output_index] = given
            _check_above_description(model, model_order, values["allow_above_description"])
        return EffortLimiter(effective_limits(model, model_order), model.joint_names,
                             values["effort_limit_policy"])

    def _limit_parameters(self, values: dict):
        if self.base_model is None:
            return None                 # checked with the robot at configure
        limiter = self.limiter_for(values, self.base_model, self.joint_names, self.output_index)
        return lambda: self._set_limiter(limiter)

    def check_model(self, model, joint_names, output_index):
        """Refuse a model whose effort limits the policy cannot apply; then set its limiter."""
        limiter = self.limiter_for(self.params.values(), model, joint_names, output_index)
        return lambda: self._set_limiter(limiter)

    def _set_limiter(self, limiter: EffortLimiter):
        old = self.limiter
        if old is not None and old.joint_names == limiter.joint_names:
            limiter.counts = list(old.counts)        # same robot: the counts go on
        self.limiter = limiter
        for outputs in self._effort_outputs:
            outputs.limiter = limiter
        if limiter.unchecked:
            self.get_logger().warning(f"effort limits unknown, not checked: "
                                      f"{list(limiter.unchecked)}")

    def forget_model(self):
        """Drop the limiter with the robot."""
        self.limiter = None
        for outputs in self._effort_outputs:
            outputs.limiter = None

    def _collect_limits(self):
        """Move the limiter's excesses into what the log and the diagnostics will say."""
        limiter = self.limiter
        report = limiter.report() if limiter is not None else None
        if report is None or not report.new:
            return
        for pending in self._limit_pending.values():
            pending[0] += report.new
            if report.worst_ratio > pending[1]:
                pending[1], pending[2] = report.worst_ratio, report.worst_joint

    def _log_limits(self):
        """Say, at most once per LIMIT_LOG_PERIOD, the commands above the limits (a timer)."""
        self._collect_limits()
        new, ratio, joint = self._limit_pending["log"]
        if not new:
            return
        self._limit_pending["log"] = [0, 0.0, ""]
        limiter = self.limiter
        what = "clamped to the limit" if limiter.policy == CLAMP else "published as computed"
        counts = {name: count for name, count in zip(limiter.joint_names, limiter.counts)
                  if count}
        self.get_logger().warning(
            f"{new} joint command(s) above the effort limit in the last "
            f"{LIMIT_LOG_PERIOD:g} s ({what}); worst: joint '{joint}' at {ratio:.3g} x its "
            f"limit; so far per joint: {counts}")

    def diagnostic_extra(self) -> Extra:
        """Add the effort-limit policy, the counts per joint and the worst ratio."""
        extra = super().diagnostic_extra()
        limiter = self.limiter
        if limiter is None:
            return extra
        self._collect_limits()
        new, ratio, joint = self._limit_pending["diagnostics"]
        self._limit_pending["diagnostics"] = [0, 0.0, ""]
        values = [("effort limit policy", limiter.policy)]
        values += [(f"commands above effort limit: {name}", count)
                   for name, count in zip(limiter.joint_names, limiter.counts)]
        values.append(("worst |effort| / limit since last report", ratio))
        problems = []
        if new:
            problems.append(f"{new} joint command(s) above the effort limit "
                            f"({'clamped' if limiter.policy == CLAMP else 'not clamped'}), "
                            f"worst '{joint}' at {ratio:.3g} x its limit")
        return Extra(extra.values + values, extra.problems + problems, extra.not_active)

    # -- the lifecycle ---------------------------------------------------------------------------
    def activated(self):
        """Count commands from now on (what decides the stop command)."""
        for outputs in self._effort_outputs:
            outputs.commands = 0

    def deactivating(self):
        """Publish one zero command on each output that commanded since activation."""
        if self.dynamics is None:
            return
        now = self.get_clock().now().seconds_nanoseconds()
        for outputs in self._effort_outputs:
            if outputs.commands:
                outputs.publish_zero(now)
                self.get_logger().info(f"stopped: one zero command published on "
                                       f"'{outputs.command.topic_name}'")


def _check_above_description(model, given: np.ndarray, allowed: bool):
    """Refuse effort_limits above the description's known limits, unless ``allowed`` (L1)."""
    own = np.asarray(model.effort_limit, dtype=float)
    above = [f"'{name}' {g:g} > {limit:g}" for name, g, limit in zip(model.joint_names, given, own)
             if np.isfinite(limit) and limit > 0.0 and g > limit]
    if above and not allowed:
        raise ValueError(f"effort_limits: above the robot description's effort limits for "
                         f"{', '.join(above)}; set allow_above_description: true to raise a "
                         "safety limit on purpose")
