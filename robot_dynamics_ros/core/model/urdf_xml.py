"""
Reading URDF text into plain link and joint records, with every value checked.

This follows the URDF specification (wiki.ros.org/urdf/XML) as urdfdom reads it, which is what
robot_state_publisher, MoveIt and Pinocchio (src/parsers/urdf) build on:

* ``<origin xyz rpy>``: translation, then fixed-axis roll-pitch-yaw R = Rz(yaw) Ry(pitch) Rx(roll);
  both default to zero, a missing origin is the identity;
* a joint's frame is its child link's frame; ``<origin>`` places it in the parent link's frame and
  the motion follows it: T_parent,child(q) = T_origin Rot(axis, q) (revolute, continuous) or
  T_origin Trans(axis q) (prismatic); ``<axis xyz>`` is in the joint frame, defaults to (1, 0, 0)
  and is normalised here (a zero axis is an error);
* ``<inertial>``: ``<mass value>``, ``<inertia ixx ixy ixz iyy iyz izz>`` (all six, as urdfdom
  requires) about the centre of mass, in a frame placed by the inertial ``<origin>`` (its rpy
  rotates the tensor: I_link = R I R^T); a link without ``<inertial>`` is massless;
* ``<limit lower upper effort velocity>``: effort and velocity required, lower and upper default
  to 0; required on revolute and prismatic joints; ``<dynamics damping friction>``;
  ``<mimic joint multiplier offset>``.

Numbers are decimal floats; NaN, infinities and magnitudes beyond the robot files' ``BOUNDS``
(issue 10's rules, ``robot_file.BOUNDS``) are refused with the file, the link or joint and the
attribute named.  Before parsing, text with a document type declaration or entities (the
"billion laughs"), unexpanded xacro, or more than :data:`MAX_URDF_BYTES` is refused.

Beyond URDF, a joint may carry ``<robot_dynamics:motor rotor_inertia="..." gear_ratio="..."/>``
and ``<robot_dynamics:limit acceleration="..."/>``, and the robot
``<robot_dynamics:gravity xyz="..."/>`` (namespace :data:`EXTENSION_NS`; other URDF readers
ignore them), which ``robot-dynamics urdf`` writes so that rotor inertias, acceleration limits
and gravity survive a round trip.
"""
from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..errors import RobotDescriptionError
from ..transforms import homogeneous, rpy_matrix
from .inertia import Body
from .robot_file import BOUNDS

MAX_URDF_BYTES = 10 << 20      # large expanded URDFs are a few hundred KB (meshes are apart)
EXTENSION_NS = "https://github.com/robot_dynamics_ros/urdf"
MOVABLE_TYPES = ("revolute", "continuous", "prismatic")
JOINT_TYPES = MOVABLE_TYPES + ("fixed", "floating", "planar")
_NUMBER = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
_NON_FINITE = re.compile(r"^[+-]?(?:nan|inf|infinity)$", re.IGNORECASE)


class UrdfLimit(NamedTuple):
    """A joint's ``<limit>`` (lower and upper in rad or m, as the joint type says)."""

    lower: float
    upper: float
    velocity: float
    effort: float


class UrdfMimic(NamedTuple):
    """A joint's ``<mimic>``: q = multiplier * q_joint + offset."""

    joint: str
    multiplier: float
    offset: float


class UrdfJoint(NamedTuple):
    """One ``<joint>``; ``origin`` is the 4x4 pose of the child link frame in the parent's."""

    name: str
    type: str
    parent: str
    child: str
    origin: np.ndarray
    axis: np.ndarray                # unit vector in the joint (= child link) frame
    limit: UrdfLimit | None
    damping: float
    friction: float
    mimic: UrdfMimic | None
    motor: tuple[float, float] | None    # (rotor_inertia, gear_ratio) of the extension element
    acceleration: float | None            # the extension's acceleration limit

    @property
    def movable(self) -> bool:
        return self.type in MOVABLE_TYPES


class UrdfLink(NamedTuple):
    """One ``<link>``; ``body`` is its inertial in the link frame (None: massless)."""

    name: str
    body: Body | None
    inertia_tensor: np.ndarray | None     # as written, in the inertial frame (for the checks)


class UrdfRobot(NamedTuple):
    """The records of a URDF, in file order; ``source`` names it in errors."""

    name: str
    links: dict[str, UrdfLink]
    joints: dict[str, UrdfJoint]
    source: str
    gravity: list[float] | None       # <robot_dynamics:gravity xyz>, in the root link frame


def _error(source: str, where: str, problem: str) -> RobotDescriptionError:
    return RobotDescriptionError(f"{source}: {where}: {problem}" if where
                                 else f"{source}: {problem}")


def read_urdf_text(source) -> tuple[str, str]:
    """
    Return (text, label) of a URDF given as a file path or as the XML text itself.

    A ``str`` whose first non-blank character is ``<`` (or ``bytes``) is XML text, anything else
    a path.  The label names the file in errors, or ``<URDF text>``.
    """
    if isinstance(source, bytes):
        return _decode(source, "<URDF text>"), "<URDF text>"
    if isinstance(source, str) and source.lstrip().startswith("<"):
        if len(source) > MAX_URDF_BYTES:
            raise _error("<URDF text>", "", f"{len(source)} characters is larger than a URDF "
                                            f"may be ({MAX_URDF_BYTES} bytes)")
        return source, "<URDF text>"
    path = Path(source)
    try:
        size = path.stat().st_size
        if size > MAX_URDF_BYTES:
            raise _error(str(path), "", f"{size} bytes is larger than a URDF may be "
                                        f"({MAX_URDF_BYTES} bytes)")
        raw = path.read_bytes()
    except OSError as exc:
        raise _error(str(path), "", f"cannot read URDF: {exc.strerror or exc}") from None
    return _decode(raw, str(path)), str(path)


def _decode(raw: bytes, label: str) -> str:
    if len(raw) > MAX_URDF_BYTES:
        raise _error(label, "", f"{len(raw)} bytes is larger than a URDF may be "
                                f"({MAX_URDF_BYTES} bytes)")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _error(label, "", f"not UTF-8 text (byte {exc.start}); a URDF must be UTF-8 "
                                "XML") from None


_DECLARATION = re.compile(r"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)
_XACRO = re.compile(r"<\s*xacro:|xmlns:xacro\s*=")


def _line_of(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


def parse_urdf(text: str, source: str = "<URDF text>") -> UrdfRobot:
    """Parse and check URDF text (see the module docstring); errors name ``source``."""
    declaration = _DECLARATION.search(text)
    if declaration:
        raise _error(source, f"line {_line_of(text, declaration.start())}",
                     f"<!{declaration.group(1).upper()}> declarations are not allowed in a URDF "
                     "(entities can expand without bound)")
    xacro = _XACRO.search(text)
    if xacro:
        raise _error(source, f"line {_line_of(text, xacro.start())}",
                     "unexpanded xacro (xacro: tags): expand it first, e.g. "
                     "`xacro robot.urdf.xacro > robot.urdf`")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise _error(source, "", f"malformed XML: {exc}") from None
    if root.tag != "robot":
        raise _error(source, "", f"the root element must be <robot>, got <{root.tag}>")
    for element in root.iter():
        for key, value in element.attrib.items():
            if "${" in value or "$(" in value:
                raise _error(source, f"<{element.tag} {key}>",
                             f"unexpanded xacro expression {value!r}: expand the file with "
                             "xacro first")
    name = root.get("name")
    if not name:
        raise _error(source, "<robot>", "missing the name attribute")
    links = _by_name(root, "link", _link, source)
    if not links:
        raise _error(source, "", "no <link> elements")
    joints = _by_name(root, "joint", _joint, source)
    gravity = None
    gravity_element = root.find(f"{{{EXTENSION_NS}}}gravity")
    if gravity_element is not None:
        gravity = _numbers(gravity_element.get("xyz"), 3, "<robot_dynamics:gravity xyz>", source,
                           "gravity")
    return UrdfRobot(name, links, joints, source, gravity)


def _by_name(root, tag: str, parse, source: str) -> dict:
    """Return the ``<tag>`` elements of ``root`` parsed, by name (a name twice is an error)."""
    records = {}
    for element in root.findall(tag):
        record = parse(element, source)
        if record.name in records:
            raise _error(source, f"{tag} '{record.name}'", "defined twice")
        records[record.name] = record
    return records


# -- values ---------------------------------------------------------------------------------
def _numbers(text: str | None, count: int, where: str, source: str, kind: str | None,
             default: tuple | None = None) -> list[float]:
    """Return ``count`` space-separated decimal numbers, finite and within BOUNDS[kind]."""
    if text is None:
        if default is None:
            raise _error(source, where, "missing")
        return list(default)
    parts = text.split()
    # The common case first; anything unusual is looked at part by part below.
    if len(parts) == count and all(_NUMBER.match(part) for part in parts):
        values = [float(part) + 0.0 for part in parts]
        bound = BOUNDS[kind][0] if kind is not None else math.inf
        if all(math.isfinite(x) and abs(x) <= bound for x in values):
            return values
    if len(parts) != count:
        plural = "s" if count > 1 else ""
        raise _error(source, where, f"expected {count} number{plural}, got {text!r}")
    for part in parts:
        if _NON_FINITE.match(part):
            raise _error(source, where, f"must be finite, got {text!r}")
        if not _NUMBER.match(part):
            raise _error(source, where, f"{part!r} is not a number")
        x = float(part)
        if not math.isfinite(x):           # a literal beyond the float range, e.g. 1e999
            raise _error(source, where, f"must be finite, got {text!r}")
        bound, unit = BOUNDS[kind] if kind is not None else (math.inf, "")
        if abs(x) > bound:
            raise _error(source, where, f"{x:g} is out of range: at most {bound:g} {unit} in "
                                        "magnitude".rstrip())
    raise AssertionError(f"{where}: {text!r} passed every check")    # not reached


def _number(element, attribute: str, where: str, source: str, kind: str | None,
            default: float | None = None) -> float:
    return _numbers(element.get(attribute), 1, f"{where} <{element.tag} {attribute}>", source,
                    kind, None if default is None else (default,))[0]


def _origin(element, where: str, source: str) -> np.ndarray:
    """4x4 pose of ``element``'s ``<origin>`` (identity when absent)."""
    origin = element.find("origin")
    if origin is None:
        return np.eye(4)
    zero = (0.0, 0.0, 0.0)
    xyz = _numbers(origin.get("xyz"), 3, f"{where} <origin xyz>", source, "length", zero)
    rpy = _numbers(origin.get("rpy"), 3, f"{where} <origin rpy>", source, "angle", zero)
    return homogeneous(rpy_matrix(rpy), xyz)


# -- links ----------------------------------------------------------------------------------
INERTIA_ATTRIBUTES = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")


def _link(element, source: str) -> UrdfLink:
    name = element.get("name")
    if not name:
        raise _error(source, "<link>", "missing the name attribute")
    inertial = element.find("inertial")
    if inertial is None:
        return UrdfLink(name, None, None)
    where = f"link '{name}': <inertial>"
    mass_element = inertial.find("mass")
    if mass_element is None:
        raise _error(source, where, "missing <mass value=...>")
    mass = _number(mass_element, "value", where, source, "mass")
    if mass < 0:
        raise _error(source, f"{where} <mass value>", f"must be >= 0, got {mass:g}")
    inertia_element = inertial.find("inertia")
    if inertia_element is None:
        raise _error(source, where, "missing <inertia ixx ixy ixz iyy iyz izz>")
    i = {k: _number(inertia_element, k, where, source, "inertia") for k in INERTIA_ATTRIBUTES}
    tensor = np.array([[i["ixx"], i["ixy"], i["ixz"]],
                       [i["ixy"], i["iyy"], i["iyz"]],
                       [i["ixz"], i["iyz"], i["izz"]]])
    frame = _origin(inertial, where, source)
    R = frame[:3, :3]
    return UrdfLink(name, Body(mass, frame[:3, 3].copy(), R @ tensor @ R.T), tensor)


# -- joints ---------------------------------------------------------------------------------
def _joint(element, source: str) -> UrdfJoint:
    name = element.get("name")
    if not name:
        raise _error(source, "<joint>", "missing the name attribute")
    where = f"joint '{name}'"
    jtype = element.get("type")
    if jtype not in JOINT_TYPES:
        raise _error(source, f"{where} <joint type>",
                     f"must be one of {list(JOINT_TYPES)}, got {jtype!r}")
    ends = {}
    for end in ("parent", "child"):
        tag = element.find(end)
        if tag is None or not tag.get("link"):
            raise _error(source, where, f"missing <{end} link=...>")
        ends[end] = tag.get("link")
    origin = _origin(element, where, source)
    axis = np.array([1.0, 0.0, 0.0])
    axis_element = element.find("axis")
    if jtype in MOVABLE_TYPES and axis_element is not None:
        axis = np.array(_numbers(axis_element.get("xyz"), 3, f"{where} <axis xyz>", source, None,
                                 (1.0, 0.0, 0.0)))
        norm = float(np.linalg.norm(axis))
        if norm == 0.0:
            raise _error(source, f"{where} <axis xyz>",
                         "the axis is zero; a joint needs a direction")
        axis = axis / norm
    limit = None
    limit_element = element.find("limit")
    if limit_element is not None:
        position_kind = "length" if jtype == "prismatic" else "angle"
        limit = UrdfLimit(
            lower=_number(limit_element, "lower", where, source, position_kind, 0.0),
            upper=_number(limit_element, "upper", where, source, position_kind, 0.0),
            velocity=_number(limit_element, "velocity", where, source, "velocity"),
            effort=_number(limit_element, "effort", where, source, "effort"))
    elif jtype in ("revolute", "prismatic"):
        raise _error(source, where, f"a {jtype} joint needs <limit lower upper velocity effort>")
    damping = friction = 0.0
    dynamics = element.find("dynamics")
    if dynamics is not None:
        damping = _number(dynamics, "damping", where, source, "friction", 0.0)
        friction = _number(dynamics, "friction", where, source, "friction", 0.0)
        for label, value in (("damping", damping), ("friction", friction)):
            if value < 0:
                raise _error(source, f"{where} <dynamics {label}>", f"must be >= 0, got {value:g}")
    mimic = None
    mimic_element = element.find("mimic")
    if mimic_element is not None:
        if not mimic_element.get("joint"):
            raise _error(source, f"{where} <mimic>", "missing the joint attribute")
        mimic = UrdfMimic(mimic_element.get("joint"),
                          _number(mimic_element, "multiplier", where, source, "gear_ratio", 1.0),
                          _number(mimic_element, "offset", where, source, None, 0.0))
    motor = None
    motor_element = element.find(f"{{{EXTENSION_NS}}}motor")
    if motor_element is not None:
        motor = (_number(motor_element, "rotor_inertia", where, source, "rotor_inertia"),
                 _number(motor_element, "gear_ratio", where, source, "gear_ratio"))
    acceleration = None
    acceleration_element = element.find(f"{{{EXTENSION_NS}}}limit")
    if acceleration_element is not None:
        acceleration = _number(acceleration_element, "acceleration", where, source, "acceleration")
    return UrdfJoint(name, jtype, ends["parent"], ends["child"], origin, axis, limit, damping,
                     friction, mimic, motor, acceleration)
