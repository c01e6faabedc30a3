"""Reading and validating robot description files (YAML).

The schema is documented in README.md ("Robot description files").  Every rule here raises
:class:`RobotDescriptionError` with the file, the joint and the field that is wrong, so that
nothing downstream is ever built from a bad description.

The output of :func:`parse_robot` is a plain, fully normalised dictionary (floats, lists, no
optional keys missing); :class:`~robot_dynamics_ros.core.model.RobotModel` is built from it.
"""
from __future__ import annotations

import math
import numbers
import re
from pathlib import Path
from typing import Any

import numpy as np
import yaml


class RobotDescriptionError(ValueError):
    """A robot description (file or dict) is invalid. The message names file, joint and field."""


TOP_KEYS = {"name": True, "dh_convention": True, "gravity": False, "base": False, "tool": False,
            "joints": True, "payload": False, "description": False}
JOINT_KEYS = {"name": True, "type": True, "dh": True, "limits": True, "link": True,
              "motor": False, "friction": False}
DH_KEYS = {"a": True, "alpha": True, "d": True, "theta": True}
LIMIT_KEYS = {"lower": True, "upper": True, "velocity": True, "effort": True}
LINK_KEYS = {"mass": True, "com": True, "inertia": True}
INERTIA_KEYS = {"ixx": True, "iyy": True, "izz": True, "ixy": False, "ixz": False, "iyz": False}
MOTOR_KEYS = {"rotor_inertia": True, "gear_ratio": True}
FRICTION_KEYS = {"viscous": False, "coulomb": False}
POSE_KEYS = {"xyz": False, "rpy": False}
PAYLOAD_KEYS = LINK_KEYS

CONVENTIONS = ("standard", "modified")
JOINT_TYPES = ("revolute", "prismatic")
DEFAULT_GRAVITY = [0.0, 0.0, -9.81]

# "pi", "-pi/2", "0.5*pi", "3*pi/4": angles may be written the way DH tables print them.
_PI_EXPR = re.compile(r"^\s*([+-])?\s*(?:(\d+(?:\.\d*)?)\s*\*\s*)?pi\s*(?:/\s*(\d+(?:\.\d*)?))?\s*$")


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader with two fixes for hand-written robot files.

    * Floats as in YAML 1.2 (and JSON): PyYAML follows YAML 1.1, where ``2e-4`` or ``1e3`` (no dot)
      are strings, so a rotor inertia written that way would be rejected as "not a number".
    * A key repeated in one mapping is an error; PyYAML silently keeps the last one, which would
      hide a typo such as two ``mass:`` lines.
    """

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                try:
                    first = seen.setdefault(key, key_node.start_mark.line + 1)
                except TypeError:
                    continue  # unhashable key: the base class reports it
                if first != key_node.start_mark.line + 1:
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping", node.start_mark,
                        f"found duplicate key {key!r} (first given on line {first})", key_node.start_mark)
        return super().construct_mapping(node, deep=deep)


_Loader.yaml_implicit_resolvers = {k: list(v) for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"))


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
        raise loc.error(where, f"unknown key(s) {unknown}; allowed: {sorted(spec)}")
    missing = sorted(k for k, required in spec.items() if required and k not in d)
    if missing:
        raise loc.error(where, f"missing required key(s) {missing}")
    return d


def _number(value: Any, where: str, loc: _Where, *, angle: bool = False) -> float:
    if isinstance(value, bool):
        raise loc.error(where, f"must be a number, got a boolean ({value})")
    if isinstance(value, str) and angle:
        m = _PI_EXPR.match(value)
        if not m:
            raise loc.error(where, f"must be a number or an expression like 'pi/2', got {value!r}")
        sign, factor, divisor = m.groups()
        if divisor is not None and float(divisor) == 0.0:
            raise loc.error(where, f"divides by zero: {value!r}")
        x = (float(factor) if factor else 1.0) * math.pi / (float(divisor) if divisor else 1.0)
        return -x if sign == "-" else x
    # numbers.Real also admits numpy scalars (np.float32, np.int64) passed to from_dict.
    if not isinstance(value, numbers.Real) or isinstance(value, np.bool_):
        raise loc.error(where, f"must be a number, got {type(value).__name__} ({value!r})")
    try:
        x = float(value)
    except OverflowError:
        x = math.inf
    if not math.isfinite(x):
        raise loc.error(where, f"must be finite, got {x}")
    return x


def _vector3(value: Any, where: str, loc: _Where, *, angle: bool = False) -> list[float]:
    if not isinstance(value, (list, tuple)) or len(value) != 3:
        raise loc.error(where, f"must be a list of 3 numbers, got {value!r}")
    return [_number(v, f"{where}[{k}]", loc, angle=angle) for k, v in enumerate(value)]


def _pose(value: Any, where: str, loc: _Where) -> dict:
    if value is None:
        return {"xyz": [0.0, 0.0, 0.0], "rpy": [0.0, 0.0, 0.0]}
    _check_keys(value, POSE_KEYS, where, loc)
    return {"xyz": _vector3(value.get("xyz", [0, 0, 0]), f"{where}.xyz", loc),
            "rpy": _vector3(value.get("rpy", [0, 0, 0]), f"{where}.rpy", loc, angle=True)}


def inertia_matrix(inertia: dict) -> np.ndarray:
    """The 3x3 tensor from named entries, URDF convention: off-diagonals are the matrix entries."""
    return np.array([[inertia["ixx"], inertia["ixy"], inertia["ixz"]],
                     [inertia["ixy"], inertia["iyy"], inertia["iyz"]],
                     [inertia["ixz"], inertia["iyz"], inertia["izz"]]])


def check_physical_inertia(tensor: np.ndarray) -> str | None:
    """Why a rotational inertia about the centre of mass is not physical, or None.

    A real body has a positive semi-definite tensor whose principal moments satisfy the triangle
    inequality I1 + I2 >= I3 (each moment is an integral of a sum of two squared coordinates).
    """
    principal = np.linalg.eigvalsh(tensor)
    scale = max(float(np.abs(principal).max()), 1e-300)
    tol = 1e-9 * scale
    if principal[0] < -tol:
        return f"not positive semi-definite (principal moments {principal.tolist()})"
    if principal[0] + principal[1] < principal[2] - tol:
        return ("principal moments violate the triangle inequality "
                f"I1 + I2 >= I3 ({principal[0]:.6g} + {principal[1]:.6g} < {principal[2]:.6g})")
    return None


def _body(value: Any, where: str, loc: _Where) -> dict:
    _check_keys(value, LINK_KEYS, where, loc)
    mass = _number(value["mass"], f"{where}.mass", loc)
    if mass < 0:
        raise loc.error(f"{where}.mass", f"must be >= 0, got {mass}")
    com = _vector3(value["com"], f"{where}.com", loc)
    inertia_in = _check_keys(value["inertia"], INERTIA_KEYS, f"{where}.inertia", loc)
    inertia = {k: _number(inertia_in.get(k, 0.0), f"{where}.inertia.{k}", loc) for k in INERTIA_KEYS}
    problem = check_physical_inertia(inertia_matrix(inertia))
    if problem:
        raise loc.error(f"{where}.inertia", f"physically inconsistent inertia: {problem}")
    return {"mass": mass, "com": com, "inertia": inertia}


def _joint(value: Any, index: int, loc: _Where) -> dict:
    label = f"joints[{index}]"
    if isinstance(value, dict) and isinstance(value.get("name"), str):
        label += f" ({value['name']})"
    _check_keys(value, JOINT_KEYS, label, loc)
    name = value["name"]
    if not isinstance(name, str) or not name.strip():
        raise loc.error(f"{label}.name", f"must be a non-empty string, got {name!r}")
    jtype = value["type"]
    if jtype not in JOINT_TYPES:
        raise loc.error(f"{label}.type", f"must be one of {list(JOINT_TYPES)}, got {jtype!r}")

    dh_in = _check_keys(value["dh"], DH_KEYS, f"{label}.dh", loc)
    dh = {k: _number(dh_in[k], f"{label}.dh.{k}", loc, angle=k in ("alpha", "theta")) for k in DH_KEYS}

    lim_in = _check_keys(value["limits"], LIMIT_KEYS, f"{label}.limits", loc)
    limits = {k: _number(lim_in[k], f"{label}.limits.{k}", loc, angle=jtype == "revolute" and k in ("lower", "upper"))
              for k in LIMIT_KEYS}
    if limits["lower"] > limits["upper"]:
        raise loc.error(f"{label}.limits", f"lower ({limits['lower']}) is above upper ({limits['upper']})")
    for k in ("velocity", "effort"):
        if limits[k] <= 0:
            raise loc.error(f"{label}.limits.{k}", f"must be > 0, got {limits[k]}")

    link = _body(value["link"], f"{label}.link", loc)

    motor = {"rotor_inertia": 0.0, "gear_ratio": 1.0}
    if value.get("motor") is not None:
        m_in = _check_keys(value["motor"], MOTOR_KEYS, f"{label}.motor", loc)
        motor = {k: _number(m_in[k], f"{label}.motor.{k}", loc) for k in MOTOR_KEYS}
        if motor["rotor_inertia"] < 0:
            raise loc.error(f"{label}.motor.rotor_inertia", f"must be >= 0, got {motor['rotor_inertia']}")
        if motor["gear_ratio"] == 0:
            raise loc.error(f"{label}.motor.gear_ratio", "must be non-zero")

    friction = {"viscous": 0.0, "coulomb": 0.0}
    if value.get("friction") is not None:
        f_in = _check_keys(value["friction"], FRICTION_KEYS, f"{label}.friction", loc)
        for k in FRICTION_KEYS:
            friction[k] = _number(f_in.get(k, 0.0), f"{label}.friction.{k}", loc)
            if friction[k] < 0:
                raise loc.error(f"{label}.friction.{k}", f"must be >= 0, got {friction[k]}")

    return {"name": name, "type": jtype, "dh": dh, "limits": limits, "link": link,
            "motor": motor, "friction": friction}


def parse_robot(data: Any, source: str = "<dict>") -> dict:
    """Validate a robot description and return it normalised (all optional keys filled in)."""
    loc = _Where(source)
    _check_keys(data, TOP_KEYS, "robot", loc)
    name = data["name"]
    if not isinstance(name, str) or not name.strip():
        raise loc.error("name", f"must be a non-empty string, got {name!r}")
    convention = data["dh_convention"]
    if convention not in CONVENTIONS:
        raise loc.error("dh_convention", f"must be one of {list(CONVENTIONS)}, got {convention!r}")
    gravity = _vector3(data.get("gravity", DEFAULT_GRAVITY), "gravity", loc)
    joints_in = data["joints"]
    if not isinstance(joints_in, list) or not joints_in:
        raise loc.error("joints", "must be a non-empty list of joints")
    joints = [_joint(j, i, loc) for i, j in enumerate(joints_in)]
    names = [j["name"] for j in joints]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise loc.error("joints", f"duplicate joint name(s) {duplicates}")
    payload = None
    if data.get("payload") is not None:
        payload = _body(data["payload"], "payload", loc)
    description = data.get("description", "")
    if not isinstance(description, str):
        raise loc.error("description", f"must be a string, got {type(description).__name__}")
    return {"name": name, "dh_convention": convention, "gravity": gravity,
            "base": _pose(data.get("base"), "base", loc), "tool": _pose(data.get("tool"), "tool", loc),
            "joints": joints, "payload": payload, "description": description}


def load_robot_file(path: str | Path) -> dict:
    """Read and validate a YAML robot file; errors name the file."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise RobotDescriptionError(f"{path}: cannot read robot description: {exc.strerror or exc}") from exc
    try:
        data = yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        raise RobotDescriptionError(f"{path}: not valid YAML: {exc}") from exc
    if data is None:
        raise RobotDescriptionError(f"{path}: the file is empty (expected a robot description mapping)")
    return parse_robot(data, str(path))
