"""
The controller MoveIt sends trajectories to: a ``moveit_controllers.yaml`` of a moveit_config.

The format is MoveIt's simple controller manager's::

    moveit_controller_manager: moveit_simple_controller_manager/MoveItSimpleControllerManager
    moveit_simple_controller_manager:
      controller_names:
        - panda_arm_controller
      panda_arm_controller:
        type: FollowJointTrajectory
        action_ns: follow_joint_trajectory
        default: true
        joints: [panda_joint1, ...]

MoveIt sends the goals of a controller to the action ``<name>/<action_ns>``
(:func:`controller_action`), which is what the FollowJointTrajectory proxy forwards to; the
controller's topic ``<name>/joint_trajectory`` (:func:`controller_topic`) is where the
trajectory scaler node publishes when given the controller. A
controller that the file does not list, or one that is not a FollowJointTrajectory controller, is
refused with the file and the name (InputError).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError
from ..yaml_loader import load_yaml_file

MAX_BYTES = 1_000_000           # a moveit_controllers.yaml is a few kilobytes
MANAGER_KEY = "moveit_simple_controller_manager"
DEFAULT_ACTION_NS = "follow_joint_trajectory"


@dataclass(frozen=True)
class MoveItController:
    """One FollowJointTrajectory controller of a moveit_controllers.yaml."""

    name: str
    action_ns: str
    joints: tuple


def controller_action(name: str, action_ns: str = DEFAULT_ACTION_NS) -> str:
    """
    Return the action MoveIt calls for controller ``name``: ``/<name>/<action_ns>``.

    MoveIt's node runs in the root namespace, so a name without a leading slash is taken from
    the root, as MoveIt takes it (not from the proxy's namespace).
    """
    name, action_ns = name.strip("/"), action_ns.strip("/")
    if not name:
        raise InputError("controller_name: empty (the controller of moveit_controllers.yaml)")
    return f"/{name}/{action_ns}" if action_ns else f"/{name}"


def controller_topic(name: str) -> str:
    """
    Return the trajectory topic of controller ``name``: ``/<name>/joint_trajectory``.

    joint_trajectory_controller subscribes it (``~/joint_trajectory``) besides its action; taken
    from the root namespace, as :func:`controller_action`.
    """
    return controller_action(name, "joint_trajectory")


def read_controller(path: str, name: str = "") -> MoveItController:
    """
    Read controller ``name`` of the moveit_controllers.yaml ``path`` (empty: its default one).

    The default is the controller with ``default: true``, or the only one listed.
    """
    data = load_yaml_file(path, "moveit_controllers", InputError, MAX_BYTES)
    manager = data.get(MANAGER_KEY) if isinstance(data, dict) else None
    if not isinstance(manager, dict) or not isinstance(manager.get("controller_names"), list):
        raise InputError(f"moveit_controllers {path}: no {MANAGER_KEY}.controller_names list "
                         "(not a MoveIt moveit_controllers.yaml)")
    names = [str(n) for n in manager["controller_names"]]
    if not name:
        name = _default_name(path, manager, names)
    if name not in names or not isinstance(manager.get(name), dict):
        raise InputError(f"moveit_controllers {path}: no controller '{name}' (listed: {names})")
    entry = manager[name]
    kind = entry.get("type", "FollowJointTrajectory")
    if kind != "FollowJointTrajectory":
        raise InputError(f"moveit_controllers {path}: controller '{name}' is of type '{kind}', "
                         "not FollowJointTrajectory")
    joints = entry.get("joints", [])
    if not isinstance(joints, list) or not all(isinstance(j, str) for j in joints):
        raise InputError(f"moveit_controllers {path}: controller '{name}': joints is not a list "
                         "of names")
    return MoveItController(name, str(entry.get("action_ns", DEFAULT_ACTION_NS)), tuple(joints))


def _default_name(path, manager: dict, names: list) -> str:
    defaults = [n for n in names if isinstance(manager.get(n), dict)
                and manager[n].get("default") is True]
    if len(defaults) == 1:
        return defaults[0]
    if len(names) == 1:
        return names[0]
    raise InputError(f"moveit_controllers {path}: controller_name is empty and the file has "
                     f"{len(names)} controllers, {len(defaults)} of them default: name one")
