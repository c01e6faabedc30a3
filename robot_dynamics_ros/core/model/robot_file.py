"""
Reading and validating robot description files (YAML).

The schema is documented in doc/robot_files.md.  Every rule here raises
:class:`RobotDescriptionError` with the file, the joint and the field that is wrong, so that
nothing downstream is ever built from a bad description.

The output of :func:`parse_robot` is a plain, fully normalised dictionary (floats, lists, no
optional keys missing); :class:`~robot_dynamics_ros.core.model.RobotModel` is built from it.
"""
from __future__ import annotations

import math
import numbers
import re
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import RobotDescriptionError
from ..yaml_loader import load_yaml_file
from ..control.friction import viscous_quadratic_floor
from .inertia import check_physical_inertia, inertia_matrix


TOP_KEYS = {"name": True, "dh_convention": True, "gravity": False, "base": False, "tool": False,
            "joints": True, "payload": False, "description": False,
            "accept_inconsistent_inertia": False, "coupling": False}
JOINT_KEYS = {"name": True, "type": True, "dh": True, "limits": True, "link": True,
              "motor": False, "friction": False, "link_frame": False}
DH_KEYS = {"a": True, "alpha": True, "d": True, "theta": True, "e": False}
LIMIT_KEYS = {"lower": True, "upper": True, "velocity": True, "effort": True,
              "acceleration": False}
LINK_KEYS = {"mass": True, "com": True, "inertia": True}
INERTIA_KEYS = {"ixx": True, "iyy": True, "izz": True, "ixy": False, "ixz": False, "iyz": False}
MOTOR_KEYS = {"rotor_inertia": True, "gear_ratio": True}
FRICTION_KEYS = {"viscous": False, "coulomb": False, "offset": False,
                 "viscous_quadratic": False, "coulomb_load": False,
                 "joint_viscous": False, "joint_coulomb": False}
# Friction terms beyond F_v qd + F_s sgn(qd) (core/control/friction.py): kept in a joint's
# normalised description only when the file gives them, so files without them load as before.
EXTRA_FRICTION_KEYS = ("viscous_quadratic", "coulomb_load", "joint_viscous", "joint_coulomb")
# Joint-side friction of a joint whose drive the coupling moves with other joints (the joint's
# own output stage, on qd_j: core/model/coupling.py); elsewhere it is the drive's own friction.
JOINT_SIDE_KEYS = ("joint_viscous", "joint_coulomb")
POSE_KEYS = {"xyz": False, "rpy": False}
COUPLING_KEYS = {"joints": True, "matrix": True}
# A coupling matrix whose condition number is beyond this drives some joint by no motor (or by
# motors whose positions nearly cancel): not a transmission, a typing error.
MAX_COUPLING_CONDITION = 1e8
PAYLOAD_KEYS = LINK_KEYS

LIMIT_KINDS = {"velocity": "velocity", "effort": "effort",
               "acceleration": "acceleration"}    # lower, upper: the joint's position kind
CONVENTIONS = ("standard", "modified")
# continuous: a revolute joint without position limits (its limits have no lower/upper; the model's
# lower/upper are -inf/+inf), as URDF's continuous joints.
JOINT_TYPES = ("revolute", "prismatic", "continuous")
CONTINUOUS_LIMIT_KEYS = {"velocity": True, "effort": True, "acceleration": False}
DEFAULT_GRAVITY = [0.0, 0.0, -9.81]
# The longest chain a model may have: arms have 6-7 joints, a humanoid's root-to-hand chain ~15,
# snake robots a few tens; this bounds what a description from the ROS graph can make a node do.
MAX_JOINTS = 100

# "pi", "-pi/2", "0.5*pi", "3*pi/4": angles may be written the way DH tables print them.
_PI_EXPR = re.compile(
    r"^\s*([+-])?\s*(?:(\d+(?:\.\d*)?)\s*\*\s*)?pi\s*(?:/\s*(\d+(?:\.\d*)?))?\s*$")


class _Where:
    """Builds error messages of the form '<file>: joint 3 (elbow): link.mass: <problem>'."""

    def __init__(self, source: str):
        self.source = source

    def error(self, where: str, problem: str) -> RobotDescriptionError:
        return RobotDescriptionError(f"{self.source}: {where}: {problem}")


def _check_keys(d: Any, spec: dict, where: str, loc: _Where) -> dict:
    if not isinstance(d, dict):
        raise loc.error(where, f"must be a mapping, got {type(d).__name__}")
    unknown = sorted(set(map(str, d)) - set(spec))
    if unknown:
        raise loc.error(where, f"unknown key(s) {_shown(unknown)}; allowed: {sorted(spec)}")
    missing = sorted(k for k, required in spec.items() if required and k not in d)
    if missing:
        raise loc.error(where, f"missing required key(s) {missing}")
    return d


# Magnitudes beyond these are typing errors, not robots, and would overflow the dynamics (a mass of
# 1e308 kg makes rnea return inf): each is refused with the field named.  Within them every
# product the algorithms form stays far inside the floating-point range.
BOUNDS = {"length": (1e3, "m"), "dh_length": (1e9, "m"),
          "angle": (1e4, "rad"), "mass": (1e6, "kg"),
          "inertia": (1e6, "kg m^2"), "gravity": (1e3, "m/s^2"),
          "velocity": (1e6, "rad/s or m/s"), "effort": (1e9, "N m or N"),
          "acceleration": (1e8, "rad/s^2 or m/s^2"), "gear_ratio": (1e5, ""),
          "rotor_inertia": (1e3, "kg m^2"), "friction": (1e9, "N m s/rad or N"),
          "coupling": (1e3, "")}


def _number(value: Any, where: str, loc: _Where, kind: str | None = None, *,
            angle: bool = False) -> float:
    """Read a finite float (``angle``: also 'pi/2'-style expressions) within ``BOUNDS[kind]``."""
    if isinstance(value, bool):
        raise loc.error(where, f"must be a number, got a boolean ({value})")
    if isinstance(value, str) and angle:
        m = _PI_EXPR.match(value)
        if not m:
            raise loc.error(
                where, f"must be a number or an expression like 'pi/2', got {_shown(value)}")
        sign, factor, divisor = m.groups()
        if divisor is not None and float(divisor) == 0.0:
            raise loc.error(where, f"divides by zero: {_shown(value)}")
        x = (float(factor) if factor else 1.0) * math.pi / (float(divisor) if divisor else 1.0)
        x = -x if sign == "-" else x
    # numbers.Real also admits numpy scalars (np.float32, np.int64) passed to from_dict.
    elif not isinstance(value, numbers.Real) or isinstance(value, np.bool_):
        raise loc.error(where, f"must be a number, got {type(value).__name__} ({_shown(value)})")
    else:
        try:
            x = float(value)
        except OverflowError:
            x = math.inf
    if not math.isfinite(x):
        raise loc.error(where, f"must be finite, got {_shown(value)}")
    if kind is not None:
        bound, unit = BOUNDS[kind]
        if abs(x) > bound:
            raise loc.error(
                where, f"{x:g} is out of range: at most {bound:g} {unit} in magnitude".rstrip())
    return x


def _shown(value: Any) -> str:
    """Repr of a bad value, cut to a readable length (a bad file can hold megabytes in one)."""
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:60]}... ({len(text)} characters)"


def _vector3(value: Any, where: str, loc: _Where, kind: str, *,
             angle: bool = False) -> list[float]:
    if not isinstance(value, (list, tuple)) or len(value) != 3:
        raise loc.error(where, f"must be a list of 3 numbers, got {_shown(value)}")
    return [_number(v, f"{where}[{k}]", loc, kind, angle=angle) for k, v in enumerate(value)]


def _pose(value: Any, where: str, loc: _Where, length: str = "length") -> dict:
    if value is None:
        return {"xyz": [0.0, 0.0, 0.0], "rpy": [0.0, 0.0, 0.0]}
    _check_keys(value, POSE_KEYS, where, loc)
    return {"xyz": _vector3(value.get("xyz", [0, 0, 0]), f"{where}.xyz", loc, length),
            "rpy": _vector3(value.get("rpy", [0, 0, 0]), f"{where}.rpy", loc, "angle", angle=True)}


def _body(value: Any, where: str, loc: _Where, accept_inconsistent: bool | None = False) -> dict:
    """
    Read a link's inertial data.

    An inconsistent inertia: ``accept_inconsistent`` False refuses it, True warns, None accepts
    it silently (the file says ``accept_inconsistent_inertia: true``).
    """
    _check_keys(value, LINK_KEYS, where, loc)
    mass = _number(value["mass"], f"{where}.mass", loc, "mass")
    if mass < 0:
        raise loc.error(f"{where}.mass", f"must be >= 0, got {mass}")
    com = _vector3(value["com"], f"{where}.com", loc, "length")
    inertia_in = _check_keys(value["inertia"], INERTIA_KEYS, f"{where}.inertia", loc)
    inertia = {k: _number(inertia_in.get(k, 0.0), f"{where}.inertia.{k}", loc, "inertia")
               for k in INERTIA_KEYS}
    problem = check_physical_inertia(inertia_matrix(inertia))
    if problem:
        error = loc.error(f"{where}.inertia", f"physically inconsistent inertia: {problem}")
        if accept_inconsistent is False:
            raise RobotDescriptionError(f"{error} (strict inertia check)")
        if accept_inconsistent:
            warnings.warn(f"{error} (accepted; strict_inertia refuses it)", stacklevel=2)
    return {"mass": mass, "com": com, "inertia": inertia}


def _friction(value: Any, label: str, loc: _Where, velocity_limit: float | None) -> dict:
    """
    Read a joint's friction: F_v, F_s, the offset, and F_v2, F_l where given.

    The law and its bounds are ``core/control/friction.py``'s: F_v, F_s >= 0; F_l in [0, 1);
    F_v2 >= -F_v / (2 v_max) (friction dissipative and increasing up to the velocity limit).
    """
    friction = {"viscous": 0.0, "coulomb": 0.0, "offset": 0.0}
    if value is None:
        return friction
    f_in = _check_keys(value, FRICTION_KEYS, f"{label}.friction", loc)
    for k in FRICTION_KEYS:
        if k in EXTRA_FRICTION_KEYS and k not in f_in:
            continue
        friction[k] = _number(f_in.get(k, 0.0), f"{label}.friction.{k}", loc, "friction")
        # offset: the effort a sensor or drive reports at zero torque, either sign
        if friction[k] < 0 and k not in ("offset", "viscous_quadratic"):
            raise loc.error(f"{label}.friction.{k}", f"must be >= 0, got {friction[k]}")
    # F_l: the share of the held load torque that dry friction adds (dimensionless); 1 or more
    # would make a joint hold any load it carries by friction alone
    if friction.get("coulomb_load", 0.0) >= 1.0:
        raise loc.error(f"{label}.friction.coulomb_load",
                        f"must be in [0, 1) (a share of the joint's gravity torque), got "
                        f"{friction['coulomb_load']}")
    floor = viscous_quadratic_floor(friction["viscous"], velocity_limit)
    if friction.get("viscous_quadratic", 0.0) < floor:
        raise loc.error(f"{label}.friction.viscous_quadratic",
                        f"must be >= {floor:.6g} (-viscous / (2 x the velocity limit): friction "
                        f"that grows with speed up to the limit), got "
                        f"{friction['viscous_quadratic']}")
    return friction


def _joint(value: Any, index: int, loc: _Where, accept_inconsistent: bool | None = False) -> dict:
    label = f"joints[{index}]"
    if isinstance(value, dict) and isinstance(value.get("name"), str):
        label += f" ({value['name']})"
    _check_keys(value, JOINT_KEYS, label, loc)
    name = value["name"]
    if not isinstance(name, str) or not name.strip():
        raise loc.error(f"{label}.name", f"must be a non-empty string, got {_shown(name)}")
    jtype = value["type"]
    if jtype not in JOINT_TYPES:
        raise loc.error(f"{label}.type",
                        f"must be one of {list(JOINT_TYPES)}, got {_shown(jtype)}")

    dh_in = _check_keys(value["dh"], DH_KEYS, f"{label}.dh", loc)
    angles = ("alpha", "theta")
    # DH lengths keep their wide bound (files written when almost parallel axes of a URDF gave
    # a common normal kilometres away still load).  ``e``, optional (modified DH only): the
    # offset along y of Rx(alpha_{i-1}) that a URDF's almost parallel axes need (axes_to_dh.py).
    dh = {k: _number(dh_in[k], f"{label}.dh.{k}", loc,
                     "angle" if k in angles else "dh_length",
                     angle=k in angles) for k in DH_KEYS if k in dh_in}
    if dh.get("e") == 0.0:
        del dh["e"]                 # plain DH: the normalised row has no e

    continuous = jtype == "continuous"
    limits_in = value["limits"]
    if continuous and isinstance(limits_in, dict) and {"lower", "upper"} & set(limits_in):
        raise loc.error(f"{label}.limits", "a continuous joint has no position limits: remove "
                                           "lower/upper (or make it a revolute joint)")
    lim_in = _check_keys(value["limits"], CONTINUOUS_LIMIT_KEYS if continuous else LIMIT_KEYS,
                         f"{label}.limits", loc)
    position_kind = "length" if jtype == "prismatic" else "angle"
    # null: an unknown limit (URDFs leave limits "not specified"); only what needs it refuses.
    limits = {k: None if lim_in[k] is None else
              _number(lim_in[k], f"{label}.limits.{k}", loc, LIMIT_KINDS.get(k, position_kind),
                      angle=jtype != "prismatic" and k in ("lower", "upper"))
              for k in lim_in}
    if limits.get("acceleration", 0.0) is None:
        del limits["acceleration"]
    if not continuous and (limits["lower"] is None) != (limits["upper"] is None):
        raise loc.error(f"{label}.limits", "lower and upper are both known or both unknown "
                                           "(null)")
    if not continuous and limits["lower"] is not None and limits["lower"] > limits["upper"]:
        raise loc.error(f"{label}.limits",
                        f"lower ({limits['lower']}) is above upper ({limits['upper']})")
    for k in ("velocity", "effort", "acceleration"):     # acceleration: optional
        if limits.get(k) is not None and limits[k] <= 0:
            raise loc.error(f"{label}.limits.{k}",
                            f"must be > 0 (or null: unknown), got {limits[k]}")

    link = _body(value["link"], f"{label}.link", loc, accept_inconsistent)
    # The pose of the frame in which ``link`` is given, in the joint's DH frame (URDF link frames).
    link_frame = value.get("link_frame")
    if link_frame is not None:
        link_frame = _pose(link_frame, f"{label}.link_frame", loc, "dh_length")

    motor = {"rotor_inertia": 0.0, "gear_ratio": 1.0}
    if value.get("motor") is not None:
        m_in = _check_keys(value["motor"], MOTOR_KEYS, f"{label}.motor", loc)
        motor = {k: _number(m_in[k], f"{label}.motor.{k}", loc, k) for k in MOTOR_KEYS}
        if motor["rotor_inertia"] < 0:
            raise loc.error(f"{label}.motor.rotor_inertia",
                            f"must be >= 0, got {motor['rotor_inertia']}")
        if motor["gear_ratio"] == 0:
            raise loc.error(f"{label}.motor.gear_ratio", "must be non-zero")

    friction = _friction(value.get("friction"), label, loc, limits.get("velocity"))
    return {"name": name, "type": jtype, "dh": dh, "limits": limits, "link": link,
            "motor": motor, "friction": friction, "link_frame": link_frame}


def parse_robot(data: Any, source: str = "<dict>", strict_inertia: bool = False) -> dict:
    """
    Validate a robot description and return it normalised (all optional keys filled in).

    A physically inconsistent inertia is accepted with one warning naming the joint's link and
    what is broken by how much (as Pinocchio computes on with it), or refused if
    ``strict_inertia``; a file that sets ``accept_inconsistent_inertia: true`` has it accepted
    without a warning, also under ``strict_inertia``.
    """
    loc = _Where(source)
    _check_keys(data, TOP_KEYS, "robot", loc)
    name = data["name"]
    if not isinstance(name, str) or not name.strip():
        raise loc.error("name", f"must be a non-empty string, got {_shown(name)}")
    convention = data["dh_convention"]
    if convention not in CONVENTIONS:
        raise loc.error("dh_convention",
                        f"must be one of {list(CONVENTIONS)}, got {_shown(convention)}")
    gravity = _vector3(data.get("gravity", DEFAULT_GRAVITY), "gravity", loc, "gravity")
    accept = data.get("accept_inconsistent_inertia", False)
    if not isinstance(accept, bool):
        raise loc.error("accept_inconsistent_inertia",
                        f"must be true or false, got {_shown(accept)}")
    joints_in = data["joints"]
    if not isinstance(joints_in, list) or not joints_in:
        raise loc.error("joints", "must be a non-empty list of joints")
    if len(joints_in) > MAX_JOINTS:
        raise loc.error("joints", f"{len(joints_in)} joints: a model may have at most "
                                  f"{MAX_JOINTS} (a serial chain; the dynamics of longer ones "
                                  "are not what this package is for)")
    lenient = None if accept else not strict_inertia     # None: accepted without a warning
    joints = [_joint(j, i, loc, lenient) for i, j in enumerate(joints_in)]
    framed = [f"joints[{i}] ({j['name']})" for i, j in enumerate(joints)
              if j["link_frame"] is not None]
    if framed and convention != "modified":
        raise loc.error(f"{framed[0]}.link_frame",
                        "link frames are supported with dh_convention: modified only")
    offset = [f"joints[{i}] ({j['name']})" for i, j in enumerate(joints) if "e" in j["dh"]]
    if offset and convention != "modified":
        raise loc.error(f"{offset[0]}.dh.e", "the offset e is supported with dh_convention: "
                                             "modified only")
    names = [j["name"] for j in joints]
    duplicates = sorted(name for name, count in Counter(names).items() if count > 1)
    if duplicates:
        raise loc.error("joints", f"duplicate joint name(s) {duplicates}")
    payload = None
    if data.get("payload") is not None:
        # A payload is the user's run-time input, not a vendor's link data: checked strictly.
        payload = _body(data["payload"], "payload", loc, None if accept else False)
    coupling = _coupling(data.get("coupling"), joints, loc)
    _check_joint_side(joints, coupling, loc)
    description = data.get("description", "")
    if not isinstance(description, str):
        raise loc.error("description", f"must be a string, got {type(description).__name__}")
    spec = {"name": name, "dh_convention": convention, "gravity": gravity,
            "base": _pose(data.get("base"), "base", loc),
            "tool": _pose(data.get("tool"), "tool", loc),
            "joints": joints, "payload": payload, "description": description,
            "accept_inconsistent_inertia": accept}
    if coupling is not None:        # (absent otherwise: descriptions without one as before)
        spec["coupling"] = coupling
    return spec


def _coupling(value: Any, joints: list, loc: _Where) -> dict | None:
    """
    Read the drive coupling: motor positions q_m = diag(gear_ratio) K q (doc/robot_files.md).

    K is the identity but for the block ``matrix`` on the joints ``joints`` (rows: the drives of
    those joints, columns: the joints).  Refused: an unknown or repeated joint, a matrix that is
    not square over them, not finite or not invertible, and the load-dependent friction F_l on a
    drive the coupling moves with other joints (its load would be the drive's share of g(q);
    F_v, F_v2 and F_s act there on the drive's velocity K qd, core/model/coupling.py).
    """
    if value is None:
        return None
    _check_keys(value, COUPLING_KEYS, "coupling", loc)
    names, listed = [j["name"] for j in joints], value["joints"]
    if not isinstance(listed, list) or not listed or \
            not all(isinstance(x, str) for x in listed):
        raise loc.error("coupling.joints",
                        f"must be a non-empty list of joint names, got {_shown(listed)}")
    unknown = [x for x in listed if x not in names]
    if unknown:
        raise loc.error("coupling.joints", f"unknown joint(s) {_shown(unknown)}; the robot's "
                                           f"joints are {names}")
    repeated = sorted(x for x, count in Counter(listed).items() if count > 1)
    if repeated:
        raise loc.error("coupling.joints", f"joint(s) {repeated} listed more than once")
    rows, m = value["matrix"], len(listed)
    if not isinstance(rows, list) or len(rows) != m or \
            not all(isinstance(row, list) and len(row) == m for row in rows):
        raise loc.error("coupling.matrix", f"must be a square {m} x {m} list of rows (one row "
                                           f"and one column per joint of coupling.joints), got "
                                           f"{_shown(rows)}")
    matrix = [[_number(x, f"coupling.matrix[{r}][{c}]", loc, "coupling")
               for c, x in enumerate(row)] for r, row in enumerate(rows)]
    condition = float(np.linalg.cond(np.array(matrix)))
    if not condition <= MAX_COUPLING_CONDITION:
        raise loc.error("coupling.matrix", f"must be invertible (every joint moved by its "
                                           f"motors), its condition number is {condition:.3g}")
    for r, name in enumerate(listed):
        if any(x != float(c == r) for c, x in enumerate(matrix[r])):
            i = names.index(name)
            # F_l's load would be the drive's share of g(q): not modelled (F_v2 is, on K qd)
            if joints[i]["friction"].get("coulomb_load"):
                raise loc.error(f"joints[{i}] ({name}).friction.coulomb_load",
                                "is not supported on a drive that the coupling moves with other "
                                "joints (give viscous, viscous_quadratic and coulomb only)")
    return {"joints": list(listed), "matrix": matrix}


def _check_joint_side(joints: list, coupling: dict | None, loc: _Where) -> None:
    """Refuse joint-side friction on a joint whose drive turns with it alone (no coupling)."""
    coupled = set()
    if coupling is not None:
        coupled = {name for r, name in enumerate(coupling["joints"])
                   if any(x != float(c == r) for c, x in enumerate(coupling["matrix"][r]))}
    for i, joint in enumerate(joints):
        given = [k for k in JOINT_SIDE_KEYS if joint["friction"].get(k)]
        if given and joint["name"] not in coupled:
            raise loc.error(f"joints[{i}] ({joint['name']}).friction.{given[0]}",
                            "joint-side friction is for a joint whose drive the coupling moves "
                            "with other joints; this joint's drive turns with it alone, so give "
                            "it as friction.viscous / friction.coulomb")


MAX_FILE_BYTES = 1 << 20       # a robot file is a few KB; this bounds the work a bad one causes


def load_robot_file(path: str | Path, strict_inertia: bool = False) -> dict:
    """Read and validate a YAML robot file; errors name the file."""
    data = load_yaml_file(path, "robot description", RobotDescriptionError, MAX_FILE_BYTES)
    return parse_robot(data, str(path), strict_inertia)
