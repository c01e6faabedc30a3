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
* ``<limit lower upper effort velocity>``: lower and upper default to 0; ``<dynamics damping
  friction>``; ``<mimic joint multiplier offset>``.

Leniency, as robot_state_publisher's reader (urdfdom) and Pinocchio: namespace declarations of
any kind (``xmlns:xacro`` left by xacro before 1.13.10), comments, ``<gazebo>``,
``<transmission>``, ``<ros2_control>`` and unknown elements are ignored; a document type
declaration is accepted.  A limit that CAD exporters leave "not specified" (absent, 0, or not
finite; lower and upper both 0) is *unknown* (None), also a revolute or prismatic joint without
``<limit>``: the model loads, and only what needs that limit refuses (``RobotModel.
unknown_limits``).

Numbers are decimal floats; NaN, infinities and magnitudes beyond the robot files' ``BOUNDS``
(issue 10's rules, ``robot_file.BOUNDS``) are refused with the file, the link or joint and the
attribute named.  Refused before any of that: more than :data:`MAX_URDF_BYTES`, entity
declarations and external references (parsed with ``defusedxml``: the "billion laughs"),
xacro that is really unexpanded (``<xacro:...>`` elements, ``${...}`` or ``$(...)`` in
attributes), more than :data:`MAX_URDF_JOINTS` joints.

Beyond URDF, a joint may carry ``<robot_dynamics:motor rotor_inertia="..." gear_ratio="..."/>``,
``<robot_dynamics:limit acceleration="..."/>`` and ``<robot_dynamics:friction offset="..."
viscous_quadratic="..." coulomb_load="..." joint_viscous="..." joint_coulomb="..."/>`` (the effort
its sensor reports at zero torque; the friction terms F_v2 qd|qd| and F_l |g(q)| sgn(qd) of
``core/control/friction.py``; a coupled joint's joint-side friction, ``model/coupling.py``),
and the robot ``<robot_dynamics:gravity xyz="..."/>`` (namespace :data:`EXTENSION_NS`; other
URDF readers ignore them), which ``robot-dynamics urdf`` writes so that rotor inertias,
acceleration limits and gravity survive a round trip; and ``<robot_dynamics:coupling
joints="j5 j6" matrix="1 0 1 1"/>``, the drive coupling of a robot file's ``coupling``
(matrix rows one after the other).
"""
from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import NamedTuple

import numpy as np
from defusedxml import (DefusedXmlException, DTDForbidden, EntitiesForbidden,
                        ExternalReferenceForbidden)
from defusedxml import ElementTree as DefusedET

from ..errors import RobotDescriptionError
from ..transforms import homogeneous, rpy_matrix
from .inertia import Body
from .robot_file import BOUNDS

MAX_URDF_BYTES = 10 << 20      # large expanded URDFs are a few hundred KB (meshes are apart)
# Whole robot descriptions (humanoids, mobile manipulators, two arms with hands) have a few hundred
# joints; this bounds the work a hostile description can cause before any chain is chosen.
MAX_URDF_JOINTS = 5000
EXTENSION_NS = "https://github.com/robot_dynamics_ros/urdf"
MOVABLE_TYPES = ("revolute", "continuous", "prismatic")
JOINT_TYPES = MOVABLE_TYPES + ("fixed", "floating", "planar")
_NUMBER = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
_NON_FINITE = re.compile(r"^[+-]?(?:nan|inf|infinity)$", re.IGNORECASE)


class UrdfLimit(NamedTuple):
    """
    A joint's ``<limit>`` (lower and upper in rad or m, as the joint type says).

    None where the limit is unknown: absent, 0 or not finite, as CAD exporters write "not
    specified" (lower and upper: both absent or both 0, or either not finite).
    """

    lower: float | None
    upper: float | None
    velocity: float | None
    effort: float | None


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
    offset: float = 0.0                   # <robot_dynamics:friction offset>: effort at zero torque
    # <robot_dynamics:friction viscous_quadratic coulomb_load>: the attributes given, as pairs
    extra_friction: tuple = ()

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
    # <robot_dynamics:coupling joints matrix>: {"joints": [...], "matrix": rows} (robot files'
    # ``coupling``: motor positions diag(gear_ratio) K q, core/model/coupling.py)
    coupling: dict | None = None


class UnexpandedXacroError(RobotDescriptionError):
    """The description is xacro that is not expanded (``<xacro:...>``, ``${...}``, ``$(...)``)."""


def _error(source: str, where: str, problem: str) -> RobotDescriptionError:
    return RobotDescriptionError(f"{source}: {where}: {problem}" if where
                                 else f"{source}: {problem}")


def looks_like_xml(text: str) -> bool:
    """
    Tell whether ``text`` is XML content rather than a path: its first character is ``<``.

    Blanks and a byte-order mark before it are allowed (as XML allows them).
    """
    return text.lstrip().removeprefix("\ufeff").lstrip().startswith("<")


MAX_PATH_CHARACTERS = 4096      # PATH_MAX: anything longer (or multi-line) is not a file name


def path_label(text: str) -> str:
    """Name a would-be path in errors without echoing megabytes of text given by mistake."""
    return text if len(text) <= 200 else f"{text[:120]!r}... ({len(text)} characters)"


def read_urdf_text(source) -> tuple[str, str]:
    """
    Return (text, label) of a URDF given as a file path or as the XML text itself.

    ``bytes``, or a ``str`` whose first non-blank character is ``<`` (after an optional
    byte-order mark), is XML text, anything else a path.  The label names the file in errors,
    or ``<URDF text>``.
    """
    if isinstance(source, bytes):
        return _decode(source, "<URDF text>"), "<URDF text>"
    if isinstance(source, str) and looks_like_xml(source):
        if len(source) > MAX_URDF_BYTES:
            raise _error("<URDF text>", "", f"{len(source)} characters is larger than a URDF "
                                            f"may be ({MAX_URDF_BYTES} bytes)")
        return source.removeprefix("\ufeff"), "<URDF text>"
    text = str(source)
    if len(text) > MAX_PATH_CHARACTERS or "\n" in text:
        raise _error(path_label(text), "", "neither URDF XML text (it does not start with '<') "
                                           "nor the path of a file")
    path = Path(text)
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
        return raw.decode("utf-8-sig")        # a byte-order mark is allowed (and dropped)
    except UnicodeDecodeError as exc:
        raise _error(label, "", f"not UTF-8 text (byte {exc.start}); a URDF must be UTF-8 "
                                "XML") from None


XACRO_NAMESPACES = ("http://www.ros.org/wiki/xacro", "http://wiki.ros.org/xacro")


def _line_of(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


def _xml_root(text: str, source: str):
    """
    Parse ``text`` with defusedxml: entity declarations and external references are refused.

    A document type declaration alone is accepted, as urdfdom (robot_state_publisher's reader)
    accepts it; entities are what expands without bound ("billion laughs") or reads other files.
    """
    try:
        return DefusedET.fromstring(text, forbid_dtd=False, forbid_entities=True,
                                    forbid_external=True)
    except EntitiesForbidden as exc:
        found = re.search(r"<!\s*ENTITY", text)
        where = f"line {_line_of(text, found.start())}" if found else ""
        raise _error(source, where, f"<!ENTITY {exc.name}> declarations (in the <!DOCTYPE>) are "
                                    "not allowed in a URDF: entities can expand without bound")
    except (ExternalReferenceForbidden, DTDForbidden, DefusedXmlException) as exc:
        raise _error(source, "", f"external references are not allowed in a URDF ({exc})")
    except ET.ParseError as exc:
        if "unbound prefix" in str(exc) and re.search(r"<\s*xacro:", text):
            line = exc.position[0] if exc.position else 0
            raise UnexpandedXacroError(f"{source}: line {line}: {_UNEXPANDED}") from None
        raise _error(source, "", f"malformed XML: {exc}") from None


_UNEXPANDED = ("unexpanded xacro (<xacro:...> elements): give the .xacro file itself (it is "
               "expanded with xacro), or expand it first: `xacro robot.urdf.xacro > robot.urdf`")


def _namespace(tag: str) -> str:
    return tag[1:].split("}", 1)[0] if tag.startswith("{") else ""


def _check_expanded(root, source: str) -> None:
    """Refuse xacro that is really unexpanded: xacro elements, ${...} or $(...) in attributes."""
    default = _namespace(root.tag)
    for element in root.iter():
        if not isinstance(element.tag, str):
            continue                       # comments and processing instructions
        namespace = _namespace(element.tag)
        if namespace in XACRO_NAMESPACES or (namespace and "xacro" in namespace.lower()):
            local = element.tag.split("}", 1)[1]
            raise UnexpandedXacroError(f"{source}: <xacro:{local}>: {_UNEXPANDED}")
        if namespace and namespace == default:      # <robot xmlns="...">: URDF in a namespace
            element.tag = element.tag.split("}", 1)[1]
        for key, value in element.attrib.items():
            if "${" in value or "$(" in value:
                raise UnexpandedXacroError(
                    f"{source}: <{element.tag} {key}>: unexpanded xacro expression "
                    f"{_shown(value)}: give the .xacro file itself (it is expanded with xacro), "
                    "or expand it first")


def _shown(value: str, limit: int = 80) -> str:
    """Repr of a value from the file, cut to a readable length."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit - 20]}... ({len(value)} characters)"


def parse_urdf(text: str, source: str = "<URDF text>") -> UrdfRobot:
    """Parse and check URDF text (see the module docstring); errors name ``source``."""
    root = _xml_root(text.removeprefix("\ufeff"), source)
    _check_expanded(root, source)
    if root.tag != "robot":
        raise _error(source, "", f"the root element must be <robot>, got <{root.tag}>")
    name = root.get("name")
    if not name:
        raise _error(source, "<robot>", "missing the name attribute")
    links = _by_name(root, "link", _link, source)
    if not links:
        raise _error(source, "", "no <link> elements")
    joints = _by_name(root, "joint", _joint, source)
    if len(joints) > MAX_URDF_JOINTS:
        raise _error(source, "", f"{len(joints)} joints: more than a robot description may have "
                                 f"({MAX_URDF_JOINTS})")
    gravity = None
    gravity_element = root.find(f"{{{EXTENSION_NS}}}gravity")
    if gravity_element is not None:
        gravity = _numbers(gravity_element.get("xyz"), 3, "<robot_dynamics:gravity xyz>", source,
                           "gravity")
    return UrdfRobot(name, links, joints, source, gravity, _coupling(root, source))


def _coupling(root, source: str) -> dict | None:
    """Read ``<robot_dynamics:coupling joints="a b" matrix="1 0 1 1"/>`` (rows, in order)."""
    element = root.find(f"{{{EXTENSION_NS}}}coupling")
    if element is None:
        return None
    where = "<robot_dynamics:coupling joints>"
    names = (element.get("joints") or "").split()
    if not names:
        raise _error(source, where, "missing: the coupled joints' names, separated by spaces")
    values = _numbers(element.get("matrix"), len(names) ** 2,
                      "<robot_dynamics:coupling matrix> (rows of a square matrix, one row and "
                      "one column per joint of its joints)", source, "coupling")
    m = len(names)
    return {"joints": names, "matrix": [values[r * m:(r + 1) * m] for r in range(m)]}


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
_UNKNOWN_LIMIT = re.compile(r"^\s*[+-]?(?:nan|inf|infinity)\s*$", re.IGNORECASE)


def _limit_value(element, attribute: str, where: str, source: str, kind: str) -> float | None:
    """Return one ``<limit>`` attribute, or None where it is unknown (absent, 0, not finite)."""
    text = element.get(attribute)
    if text is None or _UNKNOWN_LIMIT.match(text):
        return None
    value = _number(element, attribute, where, source, kind)
    if value < 0 and attribute in ("velocity", "effort"):
        raise _error(source, f"{where} <limit {attribute}>",
                     f"must be >= 0 (0 or absent: unknown), got {value:g}")
    return None if value == 0 and attribute in ("velocity", "effort") else value


def _limit(element, jtype: str, where: str, source: str) -> UrdfLimit | None:
    """Read ``<limit>`` (see UrdfLimit); None without one (every limit unknown)."""
    if element is None:
        return None
    position_kind = "length" if jtype == "prismatic" else "angle"
    # urdfdom's defaults: an absent lower or upper is 0; both 0 is "not specified".
    lower, upper = (0.0 if element.get(side) is None else
                    _limit_value(element, side, where, source, position_kind)
                    for side in ("lower", "upper"))
    if lower is None or upper is None or lower == upper == 0.0:
        lower = upper = None
    return UrdfLimit(lower, upper, _limit_value(element, "velocity", where, source, "velocity"),
                     _limit_value(element, "effort", where, source, "effort"))


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
        largest = float(np.abs(axis).max())
        if largest == 0.0:
            raise _error(source, f"{where} <axis xyz>",
                         "the axis is zero; a joint needs a direction")
        axis = axis / largest            # first: the norm of (1e300, 1e300, 0) overflows
        axis = axis / float(np.linalg.norm(axis))
    limit = _limit(element.find("limit"), jtype, where, source)
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
    offset, extra = _friction_extension(element, where, source)
    return UrdfJoint(name, jtype, ends["parent"], ends["child"], origin, axis, limit, damping,
                     friction, mimic, motor, acceleration, offset, extra)


def _friction_extension(element, where: str, source: str) -> tuple[float, tuple]:
    """
    Return a joint's ``<robot_dynamics:friction>``: the offset (0 if absent) and further terms.

    The further terms (``viscous_quadratic``, ``coulomb_load``) as (name, value) pairs of the
    attributes given; the robot-file rules (>= 0, F_l < 1) check them with the model.
    """
    extension = element.find(f"{{{EXTENSION_NS}}}friction")
    if extension is None:
        return 0.0, ()
    extra = tuple((key, _number(extension, key, where, source, "friction"))
                  for key in ("viscous_quadratic", "coulomb_load", "joint_viscous",
                              "joint_coulomb")
                  if extension.get(key) is not None)
    return _number(extension, "offset", where, source, "friction", 0.0), extra
