"""
URDF robots: the serial chain of a URDF from a root link to a tip link, as a robot description.

``load_urdf(source, root_link, tip_link, locked)`` reads the URDF (``urdf_xml``), takes the chain
and merges or locks everything else into its links (``urdf_tree``), and rewrites the chain of
joint axes once as the equivalent modified-DH chain with base and tool transforms
(``axes_to_dh``).  The result is an ordinary normalised robot description (``robot_file``):

* ``dh_convention: modified``; each joint's DH row (with the offset ``e`` after a frame that
  almost parallel axes keep at its joint origin, ``axes_to_dh``); its type (``revolute``,
  ``continuous`` without position limits, ``prismatic``); limits from ``<limit>``; friction from
  ``<dynamics>`` (``damping`` -> viscous, ``friction`` -> Coulomb, both joint side); rotor
  inertia and gear ratio from the package's ``<robot_dynamics:motor>`` extension and the torque
  offset and further friction terms from its ``<robot_dynamics:friction offset
  viscous_quadratic coulomb_load>`` when present;
* each link's mass, centre of mass and inertia as in the URDF, in the URDF link frame, and that
  frame's pose in the joint's DH frame as ``link_frame`` (so ``forward_kinematics`` returns the
  URDF link frames);
* ``base``: DH frame 0 in the root link frame (the world frame); ``tool``: the tip link frame in
  the last chain link's frame; gravity [0, 0, -9.81] in the root link frame unless given (or
  given by the package's ``<robot_dynamics:gravity>`` extension, when the chain starts at the
  URDF's root link);
* ``coupling``: the drive coupling of the package's ``<robot_dynamics:coupling joints
  matrix>``, when its joints are in the chain (all of them, or none: then it is left out).

so that every algorithm, the formulations, the code generator, scaling and the nodes work on a
URDF robot exactly as on a YAML one.  ``UrdfReport`` says what was merged and locked.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..errors import RobotDescriptionError
from ..transforms import pose_dict
from .axes_to_dh import axes_to_dh
from .inertia import inertia_entries
from .robot_file import DEFAULT_GRAVITY, parse_robot
from .urdf_tree import UrdfChain, select_chain
from .urdf_xml import (MAX_PATH_CHARACTERS, MAX_URDF_BYTES, UnexpandedXacroError, UrdfLimit,
                       UrdfRobot, looks_like_xml, parse_urdf, read_urdf_text)
from .xacro_file import expand_xacro, is_xacro


class UrdfReport(NamedTuple):
    """What became of a URDF's links and joints in the model (``check`` prints it)."""

    source: str
    root_link: str
    tip_link: str
    joints: tuple[str, ...]                  # the model's joints, root to tip
    merged: dict[str, tuple[str, ...]]       # joint -> the URDF links it moves (child link first)
    locked: dict[str, float]                 # joints off the chain -> position locked at
    base_links: tuple[str, ...]              # fixed to the root link: no effect on the dynamics

    def lines(self) -> list[str]:
        """Return the report as printable lines."""
        out = [f"URDF {self.source}: chain from root link '{self.root_link}' to tip link "
               f"'{self.tip_link}', {len(self.joints)} joints"]
        for joint in self.joints:
            links = self.merged[joint]
            extra = f" (merged: {', '.join(links[1:])})" if len(links) > 1 else ""
            out.append(f"  {joint}: moves link '{links[0]}'{extra}")
        if self.locked:
            out.append("locked off-chain joints: "
                       + ", ".join(f"{name} = {value:g}" for name, value in self.locked.items()))
        if self.base_links:
            out.append("fixed to the root link (no effect on the dynamics): "
                       + ", ".join(self.base_links))
        return out


class UrdfDescription(NamedTuple):
    """A URDF chain as a normalised robot description and what was merged into it."""

    spec: dict
    report: UrdfReport


URDF_SUFFIXES = (".urdf", ".xml", ".xacro")


def is_urdf(description) -> bool:
    """
    Tell whether a robot description (text or path) is a URDF rather than a YAML robot.

    URDF XML text (starting with ``<``), a path ending in ``.urdf`` or ``.xml``, or an existing
    file whose content starts with ``<`` (e.g. robot_state_publisher's dumped description).
    """
    if isinstance(description, bytes):
        return True
    text = str(description)
    if looks_like_xml(text):
        return True
    if len(text) > MAX_PATH_CHARACTERS or "\n" in text:
        return False               # not a path: the YAML reader says so, without echoing it
    path = Path(text)
    if path.suffix.lower() in URDF_SUFFIXES or is_xacro(text):
        return True
    if path.suffix.lower() in (".yaml", ".yml") or not path.is_file():
        return False
    try:
        with path.open("rb") as f:
            return f.read(256).lstrip().startswith(b"<")
    except OSError:
        return False


@dataclass(frozen=True)
class UrdfOptions:
    """
    How a URDF (or xacro) description becomes a model; the defaults are lenient as ROS tools.

    ``locked`` maps joints off the chain to the position they are locked at (0 otherwise);
    ``gravity`` is in the root link frame; ``strict_inertia`` refuses physically inconsistent
    link inertias (by default each is accepted with one warning naming the link, as Pinocchio
    and robot_state_publisher accept them); ``xacro_arguments`` are a xacro file's
    ``name:=value`` arguments; ``expand_xacro`` False refuses xacro text instead of running it
    (text from the ROS graph).
    """

    root_link: str | None = None
    tip_link: str | None = None
    locked: dict | None = None
    gravity: object = None
    strict_inertia: bool = False
    xacro_arguments: dict | None = None
    expand_xacro: bool = True


def read_description(source, options: UrdfOptions) -> tuple[UrdfRobot, str]:
    """
    Return the parsed URDF of a URDF or xacro path or text, and its label.

    A ``.xacro`` path, and text or a file that turns out to be unexpanded xacro, are expanded
    with xacro (``options.xacro_arguments``) unless ``options.expand_xacro`` is False.
    """
    arguments = options.xacro_arguments
    if not isinstance(source, bytes) and not looks_like_xml(str(source)) \
            and is_xacro(str(source)) and options.expand_xacro:
        path = Path(str(source))
        if not path.is_file():
            raise RobotDescriptionError(f"{path}: cannot read xacro file: no such file")
        text = expand_xacro(path, arguments, max_bytes=MAX_URDF_BYTES)
        return parse_urdf(text, str(path)), str(path)
    text, label = read_urdf_text(source)
    try:
        robot = parse_urdf(text, label)
    except UnexpandedXacroError:
        if not options.expand_xacro:
            raise
        text = expand_xacro(text, arguments, label=label, max_bytes=MAX_URDF_BYTES)
        return parse_urdf(text, label), label
    if arguments:
        raise RobotDescriptionError(f"{label}: xacro arguments {sorted(arguments)} given, but "
                                    "this is not a xacro description")
    return robot, label


def load_urdf(source, options: UrdfOptions | None = None, **fields) -> UrdfDescription:
    """
    Read a URDF or xacro (file path or XML text) and return its chain as a robot description.

    ``options`` (or its fields as keywords): see :class:`UrdfOptions`.  Every problem raises
    RobotDescriptionError naming the file and the link or joint; each accepted quirk (an
    inconsistent inertia) is one ``warnings.warn`` naming the link.  Almost parallel axes (a
    rounded pi) need no warning: their frames get a general offset (``axes_to_dh``).
    """
    options = options or UrdfOptions(**fields)
    robot, label = read_description(source, options)
    with warnings.catch_warnings(record=True) as accepted:
        warnings.simplefilter("always")
        chain = select_chain(robot, options.root_link, options.tip_link, options.locked,
                             not options.strict_inertia)
    for warning in accepted:       # one per inconsistent link of the file, said once
        warnings.warn(str(warning.message), warning.category, stacklevel=2)
    gravity = options.gravity
    if gravity is None:      # the extension's gravity is in the URDF's root link frame
        extension = robot.gravity is not None and \
            options.root_link in (None, chain.root_link) and \
            chain.root_link not in {j.child for j in robot.joints.values()}
        gravity = robot.gravity if extension else DEFAULT_GRAVITY
    spec = _description(chain, gravity)
    coupling = _chain_coupling(robot, chain)
    if coupling is not None:
        spec["coupling"] = coupling
    # The file's inconsistent links were reported by name above; the merged bodies that
    # parse_robot and later copies (payload, to_dict) check again are not the file's.
    spec["accept_inconsistent_inertia"] = bool(accepted)
    report = UrdfReport(label, chain.root_link, chain.tip_link,
                        tuple(link.joint.name for link in chain.links),
                        {link.joint.name: link.merged for link in chain.links}, dict(chain.locked),
                        chain.base_links)
    with warnings.catch_warnings():
        # Inconsistent inertias were reported above, naming the URDF links; the merged bodies
        # that parse_robot checks again are not the file's.
        warnings.simplefilter("ignore", UserWarning)
        return UrdfDescription(parse_robot(spec, label), report)


def _chain_coupling(robot, chain) -> dict | None:
    """Return the URDF's drive coupling if its joints are in the chain (none of them: None)."""
    if robot.coupling is None:
        return None
    unknown = [name for name in robot.coupling["joints"] if name not in robot.joints]
    if unknown:
        raise RobotDescriptionError(f"{robot.source}: <robot_dynamics:coupling joints>: unknown "
                                    f"joint(s) {unknown}: not joints of the URDF")
    names = {link.joint.name for link in chain.links}
    inside = [name for name in robot.coupling["joints"] if name in names]
    if not inside:
        return None
    if len(inside) != len(robot.coupling["joints"]):
        outside = [name for name in robot.coupling["joints"] if name not in names]
        raise RobotDescriptionError(
            f"{robot.source}: <robot_dynamics:coupling joints>: joints {inside} are in the chain "
            f"from '{chain.root_link}' to '{chain.tip_link}' and {outside} are not: a coupling "
            "must lie in the chain (choose root_link and tip_link around all of its joints)")
    return robot.coupling


def _inverse(T: np.ndarray) -> np.ndarray:
    inverse = np.eye(4)
    inverse[:3, :3] = T[:3, :3].T
    inverse[:3, 3] = -T[:3, :3].T @ T[:3, 3]
    return inverse


def _description(chain: UrdfChain, gravity) -> dict:
    src = chain.robot.source
    poses = np.array([link.pose for link in chain.links])
    axes = np.einsum("nij,nj->ni", poses[:, :3, :3], [link.joint.axis for link in chain.links])
    names = [link.joint.name for link in chain.links]
    dh = axes_to_dh(poses[:, :3, 3], axes, names, src)
    joints = []
    for i, link in enumerate(chain.links):
        joint = link.joint
        limit = joint.limit or UrdfLimit(None, None, None, None)     # no <limit>: all unknown
        if joint.type != "continuous" and limit.lower is not None and limit.lower > limit.upper:
            raise RobotDescriptionError(f"{src}: joint '{joint.name}': <limit>: lower "
                                        f"({limit.lower:g}) is above upper ({limit.upper:g})")
        limits = {"velocity": limit.velocity, "effort": limit.effort}
        if joint.acceleration is not None:
            limits["acceleration"] = joint.acceleration
        if joint.type != "continuous":
            limits = {"lower": limit.lower, "upper": limit.upper, **limits}
        motor = None
        if joint.motor is not None:
            motor = {"rotor_inertia": joint.motor[0], "gear_ratio": joint.motor[1]}
        joints.append({
            "name": joint.name, "type": joint.type,
            "dh": {"a": dh.a_prev[i], "alpha": dh.alpha_prev[i], "d": dh.d[i],
                   "theta": dh.theta[i], **({"e": dh.e[i]} if dh.e[i] else {})},
            "limits": limits,
            "link": {"mass": link.body.mass, "com": [float(c) for c in link.body.com],
                     "inertia": inertia_entries(link.body.inertia)},
            "link_frame": pose_dict(_inverse(dh.frames[i]) @ link.pose),
            "motor": motor,
            "friction": {"viscous": joint.damping, "coulomb": joint.friction,
                         "offset": joint.offset, **dict(joint.extra_friction)}})
    return {"name": chain.robot.name, "dh_convention": "modified", "gravity": list(gravity),
            "base": pose_dict(dh.base), "tool": pose_dict(chain.tool), "joints": joints,
            "payload": None, "accept_inconsistent_inertia": False,
            "description": f"URDF {src}, chain from '{chain.root_link}' to '{chain.tip_link}'"}
