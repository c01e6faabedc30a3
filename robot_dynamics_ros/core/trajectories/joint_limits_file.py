"""
Joint limits as MoveIt users keep them: a ``joint_limits.yaml`` of a ``*_moveit_config`` package.

The format is MoveIt's (and ros2_control's ``joint_limits`` package's)::

    default_velocity_scaling_factor: 0.1          # (MoveIt's planning defaults: not used here)
    default_acceleration_scaling_factor: 0.1
    joint_limits:
      panda_joint1:
        has_velocity_limits: true
        max_velocity: 2.175
        has_acceleration_limits: true
        max_acceleration: 3.75
        has_jerk_limits: true
        max_jerk: 300.0
        has_effort_limits: false                  # (and has_position_limits, min/max_position)

A limit counts when its ``has_*`` flag is true, as MoveIt reads it; it replaces the robot
description's (MoveIt's rule: the file overrides or augments the URDF).  What re-timing uses
(:meth:`JointLimitsFile.limits_for`): velocity, acceleration, jerk and effort, per joint of the
model; position limits of the file are reported (:attr:`JointLimitsFile.unused`), not applied.
Joints of the file the robot does not have are ignored (a moveit_config lists the gripper too);
joints of the robot the file does not name keep the robot's limits.  A limit that is not a
positive finite number, a flag that is not a boolean, or a file that is not this format is
refused with the file, joint and key named (TrajectoryError).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import TrajectoryError
from ..yaml_loader import load_yaml_file

MAX_BYTES = 1_000_000           # a joint_limits.yaml is a few kilobytes
# MoveIt's keys: the limit kind -> (flag, value key)
KINDS = {"velocity": ("has_velocity_limits", "max_velocity"),
         "acceleration": ("has_acceleration_limits", "max_acceleration"),
         "jerk": ("has_jerk_limits", "max_jerk"),
         "effort": ("has_effort_limits", "max_effort")}
# keys of the format that re-timing does not use (accepted, reported when set)
OTHER_KEYS = {"has_position_limits", "min_position", "max_position", "has_deceleration_limits",
              "max_deceleration", "angle_wraparound", "has_soft_limits", "k_position",
              "k_velocity", "soft_lower_limit", "soft_upper_limit"}
TOP_KEYS = {"joint_limits", "default_velocity_scaling_factor",
            "default_acceleration_scaling_factor", "cartesian_limits"}


@dataclass(frozen=True)
class JointLimitsFile:
    """The limits a joint_limits.yaml gives: kind -> {joint: limit} (see the module docstring)."""

    path: str
    limits: dict                            # "velocity" / "acceleration" / "jerk" / "effort"
    unused: dict = field(default_factory=dict)   # joint -> keys set but not used here
    joints: tuple = ()                      # every joint the file names

    def limits_for(self, model, kind: str) -> np.ndarray | None:
        """
        Return the ``kind`` limits in the model's order (the robot's where the file has none).

        None when the file gives no ``kind`` limit for any joint of the model.  The robot's own
        jerk limits are inf (robot descriptions have none).
        """
        given = self.limits[kind]
        if not any(name in given for name in model.joint_names):
            return None
        own = {"velocity": model.velocity_limit, "effort": model.effort_limit,
               "acceleration": model.acceleration_limit}.get(kind, np.full(model.n, np.inf))
        return np.array([given.get(name, own[j]) for j, name in enumerate(model.joint_names)],
                        dtype=float)

    def overrides(self, model) -> dict:
        """
        Return :meth:`limits_for` of every kind: kind -> array (model order) or None.

        A file that names none of the model's joints is another robot's: TrajectoryError.
        """
        if not set(self.joints) & set(model.joint_names):
            raise TrajectoryError(f"{self.path}: names none of the joints of robot "
                                  f"'{model.name}' {list(model.joint_names)} (it names "
                                  f"{list(self.joints)[:8]}): another robot's joint limits?")
        return {kind: self.limits_for(model, kind) for kind in KINDS}

    def summary(self, model) -> str:
        """Say what the file gives ``model``: limits per kind, joints ignored, keys not used."""
        used = {kind: sum(1 for name in model.joint_names if name in self.limits[kind])
                for kind in KINDS}
        text = f"{self.path}: " + (", ".join(f"{kind} for {count} joint(s)"
                                             for kind, count in used.items() if count)
                                   or "no limit for this robot's joints")
        ignored = self.ignored_joints(model)
        if ignored:
            text += f"; not this robot's joints, ignored: {ignored}"
        if self.unused:
            text += f"; set but not used for re-timing (the robot's apply): {self.unused}"
        return text

    def ignored_joints(self, model) -> list[str]:
        """Return the joints of the file the model does not have (e.g. a gripper's)."""
        return sorted(set(self.joints) - set(model.joint_names))


def load_joint_limits(path) -> JointLimitsFile:
    """Read a MoveIt ``joint_limits.yaml``; TrajectoryError names the file, joint and key."""
    path = str(path)
    data = load_yaml_file(Path(path), "joint limits file", TrajectoryError, MAX_BYTES)
    if not isinstance(data, dict) or not isinstance(data.get("joint_limits"), dict):
        raise TrajectoryError(f"{path}: expected MoveIt's joint_limits.yaml format, a mapping "
                              "with 'joint_limits: {<joint>: {has_velocity_limits: ..., "
                              "max_velocity: ...}}'")
    unknown = sorted(set(data) - TOP_KEYS)
    if unknown:
        raise TrajectoryError(f"{path}: unknown keys {unknown}; expected some of "
                              f"{sorted(TOP_KEYS)}")
    limits: dict = {kind: {} for kind in KINDS}
    unused: dict = {}
    for joint, entry in data["joint_limits"].items():
        where = f"{path}: joint_limits.{joint}"
        if not isinstance(entry, dict):
            raise TrajectoryError(f"{where}: expected a mapping of limits, got {entry!r}")
        unknown = sorted(set(entry) - OTHER_KEYS - {k for pair in KINDS.values() for k in pair})
        if unknown:
            raise TrajectoryError(f"{where}: unknown keys {unknown}")
        for kind, (flag, key) in KINDS.items():
            value = _limit(entry, flag, key, where)
            if value is not None:
                limits[kind][str(joint)] = value
        others = sorted(k for k in OTHER_KEYS & set(entry)
                        if k.startswith("has_") and entry[k] is True)
        if others:
            unused[str(joint)] = others
    return JointLimitsFile(path, limits, unused, tuple(str(j) for j in data["joint_limits"]))


def _limit(entry: dict, flag: str, key: str, where: str) -> float | None:
    """Return the limit ``key`` when ``flag`` is true (MoveIt's rule), checked; else None."""
    has = entry.get(flag, False)
    if not isinstance(has, bool):
        raise TrajectoryError(f"{where}.{flag}: expected true or false, got {has!r}")
    if not has:
        return None
    value = entry.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or value <= 0:
        raise TrajectoryError(f"{where}.{key}: {flag} is true, so {key} must be a number > 0, "
                              f"got {value!r}")
    return float(value)
