"""
The serial chain of a URDF tree from a root link to a tip link, with everything else merged in.

A URDF is a tree of links joined by joints.  The model is the chain of joints from ``root_link``
down to ``tip_link``; each movable joint i of that chain moves one rigid body, made of its child
link and everything that moves with it:

* links attached by fixed joints (on the chain or off it) are merged exactly: masses add, centres
  of mass combine, inertias by the parallel-axis theorem (``inertia.combine_bodies``), each
  ``<inertial>`` with its origin's rotation applied;
* subtrees behind movable joints that are not on the chain (fingers, a second arm, a head) are
  locked, at 0 or at ``locked[joint]``, and merged the same way; a ``<mimic>`` joint whose
  mimicked joint is locked too follows it (multiplier * value + offset), otherwise it is locked at
  0 like any other; floating and planar joints off the chain are locked at their origin;
* what hangs from the root link itself does not move and has no effect on the dynamics.

As Pinocchio's URDF reader (src/parsers/urdf/model.cpp), which appends fixed-joint bodies to the
parent joint's inertia, but for one chain of a tree rather than the whole tree.
"""
from __future__ import annotations

import math
import numbers
import warnings
from typing import NamedTuple

import numpy as np

from ..errors import RobotDescriptionError
from ..transforms import homogeneous
from .inertia import Body, check_physical_inertia, combine_bodies
from .robot_file import MAX_JOINTS
from .urdf_xml import UrdfJoint, UrdfRobot

_SHOWN_NAMES = 12


class ChainLink(NamedTuple):
    """One movable joint of the chain and the rigid body it moves."""

    joint: UrdfJoint
    pose: np.ndarray          # its child link frame in the root link frame at q = 0
    body: Body                # everything that moves with it, in its child link frame
    merged: tuple[str, ...]   # the URDF links in ``body`` (the child link first)


class UrdfChain(NamedTuple):
    """The chain from ``root_link`` to ``tip_link`` (see the module docstring)."""

    robot: UrdfRobot
    root_link: str
    tip_link: str
    links: tuple[ChainLink, ...]
    tool: np.ndarray               # the tip link frame in the last chain link's child link frame
    locked: dict[str, float]       # joints off the chain and the position each is locked at
    base_links: tuple[str, ...]    # links fixed to the root link (no effect on the dynamics)


def _names(names) -> str:
    names = list(names)
    shown = ", ".join(f"'{n}'" for n in names[:_SHOWN_NAMES])
    return shown + (f", ... ({len(names)} in all)" if len(names) > _SHOWN_NAMES else "")


class _Tree(NamedTuple):
    parent_joint: dict[str, UrdfJoint]        # child link -> the joint above it
    children: dict[str, list[UrdfJoint]]      # link -> the joints below it, in file order
    root: str


def _tree(robot: UrdfRobot) -> _Tree:
    """Parent and child maps; errors for unknown links, two parents, loops, several roots."""
    src = robot.source
    parent_joint: dict[str, UrdfJoint] = {}
    children: dict[str, list[UrdfJoint]] = {name: [] for name in robot.links}
    for joint in robot.joints.values():
        for end, link in (("parent", joint.parent), ("child", joint.child)):
            if link not in robot.links:
                raise RobotDescriptionError(f"{src}: joint '{joint.name}': <{end} link='{link}'>: "
                                            "no such link")
        if joint.child in parent_joint:
            first = parent_joint[joint.child].name
            raise RobotDescriptionError(
                f"{src}: link '{joint.child}' has two parents (joints '{first}' and "
                f"'{joint.name}'); a URDF is a tree (closed loops are not supported)")
        parent_joint[joint.child] = joint
        children[joint.parent].append(joint)
    roots = [name for name in robot.links if name not in parent_joint]
    if len(roots) > 1:
        raise RobotDescriptionError(f"{src}: more than one root link ({_names(roots)}): every "
                                    "link but one must be the child of a joint")
    reached = set()
    stack = roots[:1]
    while stack:
        link = stack.pop()
        reached.add(link)
        stack.extend(j.child for j in children[link])
    if len(reached) < len(robot.links):
        loop = [name for name in robot.links if name not in reached]
        raise RobotDescriptionError(f"{src}: the joints form a closed loop through links "
                                    f"{_names(loop)}; a URDF is a tree")
    return _Tree(parent_joint, children, roots[0])


def _path(tree: _Tree, root: str, tip: str) -> list[UrdfJoint] | None:
    """Return the joints from ``root`` down to ``tip`` (None if ``tip`` is not below it)."""
    path = []
    link = tip
    while link != root:
        joint = tree.parent_joint.get(link)
        if joint is None:
            return None
        path.append(joint)
        link = joint.parent
    return path[::-1]


def _subtree_joints(tree: _Tree, link: str) -> list[UrdfJoint]:
    out, stack = [], [link]
    while stack:
        for joint in reversed(tree.children[stack.pop()]):
            out.append(joint)
            stack.append(joint.child)
    return out


def _default_tip(robot: UrdfRobot, tree: _Tree, root: str) -> str:
    """Return the child of the last movable joint if the movable joints form one chain."""
    below = _subtree_joints(tree, root)
    moving_below: dict[str, bool] = {}        # link -> a non-fixed joint is somewhere below it
    for link in reversed([root] + [j.child for j in below]):
        moving_below[link] = any(j.type != "fixed" or moving_below[j.child]
                                 for j in tree.children[link])
    ends = [j for j in below if j.type != "fixed" and not moving_below[j.child]]
    if not ends:
        raise RobotDescriptionError(f"{robot.source}: no movable joint below root link '{root}'")
    if len(ends) > 1:
        raise RobotDescriptionError(
            f"{robot.source}: the movable joints below root link '{root}' branch (a gripper's "
            "fingers, several arms): give tip_link, one of the candidate tips "
            f"{_names(j.child for j in ends)}")
    return ends[0].child


def joint_motion(joint: UrdfJoint, q: float) -> np.ndarray:
    """Return the 4x4 motion of ``joint`` at position ``q``: Rot(axis, q) or Trans(axis q)."""
    if joint.type == "prismatic":
        return homogeneous(np.eye(3), joint.axis * q)
    if joint.type in ("revolute", "continuous"):
        k = joint.axis
        K = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
        return homogeneous(np.eye(3) + math.sin(q) * K + (1.0 - math.cos(q)) * (K @ K), [0, 0, 0])
    return np.eye(4)      # fixed; floating and planar joints are locked at their origin


def _lock_values(robot: UrdfRobot, tree: _Tree, root: str, chain: set[str], tip: str,
                 locked: dict | None) -> dict[str, float]:
    """Return the position of every movable joint below ``root`` off the chain."""
    src = robot.source
    below = {j.name: j for j in _subtree_joints(tree, root) if j.name not in chain}
    given = {}
    for name, value in (locked or {}).items():
        where = f"{src}: locked joint '{name}'"
        joint = robot.joints.get(name)
        if joint is None:
            raise RobotDescriptionError(f"{where}: no such joint")
        if name in chain:
            raise RobotDescriptionError(f"{where}: it is on the chain from '{root}' to '{tip}' "
                                        "(its position is a variable of the model)")
        if name not in below:
            raise RobotDescriptionError(f"{where}: it is not below root link '{root}', so it "
                                        "does not move with the model")
        if joint.type in ("fixed", "floating", "planar"):
            raise RobotDescriptionError(f"{where}: a {joint.type} joint has no position to lock "
                                        "at")
        if isinstance(value, bool) or not isinstance(value, numbers.Real) \
                or not math.isfinite(value):
            raise RobotDescriptionError(f"{where}: the position must be a finite number, got "
                                        f"{value!r}")
        value = float(value)
        bounded = joint.type != "continuous" and joint.limit is not None and \
            joint.limit.lower is not None
        if bounded and not joint.limit.lower <= value <= joint.limit.upper:
            raise RobotDescriptionError(f"{where}: {value:g} is outside its limits "
                                        f"[{joint.limit.lower:g}, {joint.limit.upper:g}]")
        given[name] = value

    positions = {}
    for name, joint in below.items():
        if joint.type == "fixed":
            continue
        # Follow the mimic links to a joint with a value (given, or 0), without recursion: a
        # chain of 1,000 mimics is a loop, not 1,000 stack frames (cycles are refused earlier).
        path, current = [], joint
        while current.name not in given and current.name not in positions and \
                current.mimic is not None and current.mimic.joint in below:
            path.append(current)
            current = below[current.mimic.joint]
        value = given.get(current.name, positions.get(current.name, 0.0))
        for follower in reversed(path):
            value = follower.mimic.multiplier * value + follower.mimic.offset
            positions[follower.name] = value
        positions.setdefault(current.name, given.get(current.name, 0.0))
    return {name: positions[name] for name, j in below.items() if j.type != "fixed"}


def check_mimics(robot: UrdfRobot) -> None:
    """Refuse a ``<mimic>`` of an unknown joint, of itself, or mimics that form a cycle."""
    src = robot.source
    for joint in robot.joints.values():
        if joint.mimic is None or not joint.movable:
            continue
        target = joint.mimic.joint
        if target == joint.name:
            raise RobotDescriptionError(f"{src}: joint '{joint.name}': <mimic joint='{target}'>: "
                                        "a joint cannot mimic itself")
        if target not in robot.joints:
            raise RobotDescriptionError(f"{src}: joint '{joint.name}': <mimic joint='{target}'>: "
                                        "no such joint")
    done: set[str] = set()
    for joint in robot.joints.values():
        seen, current = [], joint
        while current.mimic is not None and current.movable and current.name not in done:
            if current.name in seen:
                cycle = seen[seen.index(current.name):] + [current.name]
                raise RobotDescriptionError(f"{src}: joints {' -> '.join(cycle)} mimic each "
                                            "other in a cycle: no joint gives them a value")
            seen.append(current.name)
            current = robot.joints[current.mimic.joint]
        done.update(seen)


def select_chain(robot: UrdfRobot, root_link: str | None = None, tip_link: str | None = None,
                 locked: dict | None = None,
                 accept_inconsistent_inertia: bool = False) -> UrdfChain:
    """
    Return the chain of ``robot`` from ``root_link`` to ``tip_link`` (see the module docstring).

    Defaults: the URDF's root link; the child of the last movable joint when the movable joints
    below the root form a single chain.  Raises RobotDescriptionError naming the file and the
    link or joint for an unknown root or tip, a tip not below the root, a floating, planar or
    mimic joint on the chain, a bad ``locked`` entry and, unless ``accept_inconsistent_inertia``
    (then it warns), a physically inconsistent inertia of a link the model carries.
    """
    src = robot.source
    tree = _tree(robot)
    check_mimics(robot)
    for label, link in (("root_link", root_link), ("tip_link", tip_link)):
        if link is not None and link not in robot.links:
            raise RobotDescriptionError(f"{src}: {label} '{link}': no such link (links: "
                                        f"{_names(robot.links)})")
    root = root_link or tree.root
    tip = tip_link or _default_tip(robot, tree, root)
    path = _path(tree, root, tip)
    if path is None:
        raise RobotDescriptionError(f"{src}: tip_link '{tip}' is not below root_link '{root}'")
    for joint in path:
        if joint.type in ("floating", "planar"):
            raise RobotDescriptionError(
                f"{src}: joint '{joint.name}' is {joint.type}, on the chain from '{root}' to "
                f"'{tip}': only revolute, continuous, prismatic and fixed joints can be on the "
                "chain (choose a root_link below it)")
        if joint.movable and joint.mimic is not None:
            raise RobotDescriptionError(
                f"{src}: joint '{joint.name}' mimics '{joint.mimic.joint}', on the chain from "
                f"'{root}' to '{tip}': mimic joints are not supported on the chain")
    movable = [j for j in path if j.movable]
    if len(movable) > MAX_JOINTS:
        raise RobotDescriptionError(f"{src}: the chain from '{root}' to '{tip}' has "
                                    f"{len(movable)} movable joints: a model may have at most "
                                    f"{MAX_JOINTS}")
    if not movable:
        raise RobotDescriptionError(f"{src}: no movable joint between root_link '{root}' and "
                                    f"tip_link '{tip}'")
    positions = _lock_values(robot, tree, root, {j.name for j in path}, tip, locked)

    # Poses at q = 0 along the chain, and the tip in the last moving link.
    poses, pose, tool = [], np.eye(4), np.eye(4)
    for joint in path:
        pose = pose @ joint.origin
        tool = np.eye(4) if joint.movable else tool @ joint.origin
        if joint.movable:
            poses.append(pose)

    # Every link below the root, as a body of the segment it moves with (0: fixed to the root).
    segment_of = {j.name: i + 1 for i, j in enumerate(movable)}
    on_path = {j.name for j in path}
    bodies: list[Body | None] = [None] * (len(movable) + 1)
    merged: list[list[str]] = [[] for _ in range(len(movable) + 1)]
    stack = [(root, 0, np.eye(4))]
    while stack:
        name, segment, frame = stack.pop()
        merged[segment].append(name)
        link = robot.links[name]
        if link.body is not None and segment > 0:
            _check_inertia(robot, link, accept_inconsistent_inertia)
            body = link.body.transformed(frame)
            if bodies[segment] is not None:
                body = combine_bodies(bodies[segment], body)
            bodies[segment] = body
        for joint in reversed(tree.children[name]):
            if joint.name in segment_of:
                stack.append((joint.child, segment_of[joint.name], np.eye(4)))
            elif joint.name in on_path:
                stack.append((joint.child, segment, frame @ joint.origin))
            else:
                motion = joint_motion(joint, positions.get(joint.name, 0.0))
                stack.append((joint.child, segment, frame @ joint.origin @ motion))
    empty = Body(0.0, np.zeros(3), np.zeros((3, 3)))
    links = tuple(ChainLink(j, poses[i], bodies[i + 1] or empty, tuple(merged[i + 1]))
                  for i, j in enumerate(movable))
    return UrdfChain(robot, root, tip, links, tool, positions, tuple(merged[0][1:]))


def _check_inertia(robot: UrdfRobot, link, accept: bool) -> None:
    problem = check_physical_inertia(link.inertia_tensor)
    if problem:
        message = (f"{robot.source}: link '{link.name}': <inertial> <inertia>: physically "
                   f"inconsistent inertia: {problem}")
        if not accept:
            raise RobotDescriptionError(message + " (strict inertia check; without it the link "
                                                  "is accepted with a warning)")
        warnings.warn(message + " (accepted as Pinocchio does; strict_inertia refuses it)",
                      stacklevel=4)
